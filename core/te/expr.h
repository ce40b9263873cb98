// Expression tree of tensor expressions: immediates, variables, loads with
// affine indices, arithmetic, comparisons, select, casts and math calls.
// Nodes are immutable and shared; builders fold constants so generated code
// stays readable.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tessel::te {

enum class DType : uint8_t { Float32, Int32, Bool };

enum class ExprKind : uint8_t {
  IntImm,
  FloatImm,
  Var,
  Load,
  Add,
  Sub,
  Mul,
  Div,  // integer division rounds toward zero: used on non-negative indices only
  Mod,
  Min,
  Max,
  LT,
  LE,
  GT,
  GE,
  EQ,
  NE,
  And,
  Or,
  Not,
  Select,
  Cast,
  Call,
};

enum class CallFn : uint8_t { Exp, Tanh, Erf, Sqrt, Log, Abs, Pow };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  DType dtype;
  int64_t ival = 0;         // IntImm
  double fval = 0;          // FloatImm
  std::string name;         // Var name, Load tensor name
  CallFn fn = CallFn::Exp;  // Call
  std::vector<Expr> args;   // operands, Load indices, Select(cond, a, b)
};

// Builders.
Expr intImm(int64_t v);
Expr floatImm(double v);
Expr var(const std::string& name);
Expr load(const std::string& tensor, std::vector<Expr> indices);
Expr binary(ExprKind kind, Expr a, Expr b);
Expr select(Expr cond, Expr a, Expr b);
Expr cast(DType dtype, Expr a);
Expr call(CallFn fn, std::vector<Expr> args);
Expr logicalNot(Expr a);
Expr minExpr(Expr a, Expr b);
Expr maxExpr(Expr a, Expr b);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator+(Expr a, int64_t b);
Expr operator-(Expr a, int64_t b);
Expr operator*(Expr a, int64_t b);
Expr operator/(Expr a, int64_t b);
Expr operator%(Expr a, int64_t b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);

bool isIntImm(const Expr& e, int64_t* value = nullptr);
bool isFloat(const Expr& e);

// The node `e` over new operands (as many as it has).
Expr withOperands(const Expr& e, std::vector<Expr> args);
// Replaces variables by name. Unlisted variables stay.
Expr substitute(const Expr& e, const std::map<std::string, Expr>& vars);
// Replaces each Load of a tensor through `fn(indices)`; other loads stay.
Expr rewriteLoads(const Expr& e, const std::string& tensor, const std::function<Expr(const std::vector<Expr>&)>& fn);
// Every Load in the expression (pre-order).
void collectLoads(const Expr& e, std::vector<const ExprNode*>* out);
// Names of the variables the expression uses.
void collectVars(const Expr& e, std::vector<std::string>* out);
bool usesVar(const Expr& e, const std::string& name);

// A C-like rendering; also used as a structural key for comparisons.
std::string toString(const Expr& e);
// Number of floating-point operations one evaluation performs.
int64_t countFlops(const Expr& e);

}  // namespace tessel::te
