#include "te/expr.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace tessel::te {

namespace {

Expr make(ExprNode n) {
  return std::make_shared<const ExprNode>(std::move(n));
}

bool isComparison(ExprKind k) {
  return k == ExprKind::LT || k == ExprKind::LE || k == ExprKind::GT || k == ExprKind::GE || k == ExprKind::EQ ||
         k == ExprKind::NE || k == ExprKind::And || k == ExprKind::Or;
}

int64_t foldInt(ExprKind k, int64_t a, int64_t b) {
  switch (k) {
    case ExprKind::Add:
      return a + b;
    case ExprKind::Sub:
      return a - b;
    case ExprKind::Mul:
      return a * b;
    case ExprKind::Div:
      return a / b;
    case ExprKind::Mod:
      return a % b;
    case ExprKind::Min:
      return std::min(a, b);
    case ExprKind::Max:
      return std::max(a, b);
    case ExprKind::LT:
      return a < b;
    case ExprKind::LE:
      return a <= b;
    case ExprKind::GT:
      return a > b;
    case ExprKind::GE:
      return a >= b;
    case ExprKind::EQ:
      return a == b;
    case ExprKind::NE:
      return a != b;
    case ExprKind::And:
      return a && b;
    case ExprKind::Or:
      return a || b;
    default:
      throw std::logic_error("foldInt: not a binary kind");
  }
}

const char* opSymbol(ExprKind k) {
  switch (k) {
    case ExprKind::Add:
      return " + ";
    case ExprKind::Sub:
      return " - ";
    case ExprKind::Mul:
      return " * ";
    case ExprKind::Div:
      return " / ";
    case ExprKind::Mod:
      return " % ";
    case ExprKind::LT:
      return " < ";
    case ExprKind::LE:
      return " <= ";
    case ExprKind::GT:
      return " > ";
    case ExprKind::GE:
      return " >= ";
    case ExprKind::EQ:
      return " == ";
    case ExprKind::NE:
      return " != ";
    case ExprKind::And:
      return " && ";
    case ExprKind::Or:
      return " || ";
    default:
      return nullptr;
  }
}

const char* fnName(CallFn f) {
  switch (f) {
    case CallFn::Exp:
      return "expf";
    case CallFn::Tanh:
      return "tanhf";
    case CallFn::Erf:
      return "erff";
    case CallFn::Sqrt:
      return "sqrtf";
    case CallFn::Log:
      return "logf";
    case CallFn::Abs:
      return "fabsf";
    case CallFn::Pow:
      return "powf";
  }
  return "?";
}

void print(const Expr& e, std::ostream& os) {
  switch (e->kind) {
    case ExprKind::IntImm:
      os << e->ival;
      return;
    case ExprKind::FloatImm: {
      std::ostringstream s;
      s.precision(9);
      s << e->fval;
      std::string t = s.str();
      if (t.find_first_of(".en") == std::string::npos) t += ".0";
      if (t == "inf")
        t = "INFINITY";
      else if (t == "-inf")
        t = "-INFINITY";
      else
        t += "f";
      os << t;
      return;
    }
    case ExprKind::Var:
      os << e->name;
      return;
    case ExprKind::Load:
      os << e->name << "[";
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (i) os << ", ";
        print(e->args[i], os);
      }
      os << "]";
      return;
    case ExprKind::Min:
    case ExprKind::Max: {
      // Floats: the generated code's own inline min/max (codegen's prelude).
      // fminf/fmaxf stay library calls in GCC's code without -ffast-math, so a
      // ReLU or Clip epilogue was two calls per element and never vectorised.
      bool f = e->dtype == DType::Float32;
      os << (e->kind == ExprKind::Min ? (f ? "tessel_minf(" : "std::min(") : (f ? "tessel_maxf(" : "std::max("));
      print(e->args[0], os);
      os << ", ";
      print(e->args[1], os);
      os << ")";
      return;
    }
    case ExprKind::Not:
      os << "!(";
      print(e->args[0], os);
      os << ")";
      return;
    case ExprKind::Select:
      os << "(";
      print(e->args[0], os);
      os << " ? ";
      print(e->args[1], os);
      os << " : ";
      print(e->args[2], os);
      os << ")";
      return;
    case ExprKind::Cast:
      os << (e->dtype == DType::Float32 ? "(float)(" : "(int)(");
      print(e->args[0], os);
      os << ")";
      return;
    case ExprKind::Call:
      os << fnName(e->fn) << "(";
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (i) os << ", ";
        print(e->args[i], os);
      }
      os << ")";
      return;
    default:
      os << "(";
      print(e->args[0], os);
      os << opSymbol(e->kind);
      print(e->args[1], os);
      os << ")";
  }
}

}  // namespace

Expr intImm(int64_t v) {
  return make({ExprKind::IntImm, DType::Int32, v, 0, {}, CallFn::Exp, {}});
}
Expr floatImm(double v) {
  return make({ExprKind::FloatImm, DType::Float32, 0, v, {}, CallFn::Exp, {}});
}
Expr var(const std::string& name) {
  return make({ExprKind::Var, DType::Int32, 0, 0, name, CallFn::Exp, {}});
}
Expr load(const std::string& tensor, std::vector<Expr> indices) {
  return make({ExprKind::Load, DType::Float32, 0, 0, tensor, CallFn::Exp, std::move(indices)});
}

bool isIntImm(const Expr& e, int64_t* value) {
  if (e->kind != ExprKind::IntImm) return false;
  if (value) *value = e->ival;
  return true;
}
bool isFloat(const Expr& e) {
  return e->dtype == DType::Float32;
}

Expr binary(ExprKind kind, Expr a, Expr b) {
  int64_t x, y;
  bool ai = isIntImm(a, &x), bi = isIntImm(b, &y);
  if (ai && bi && !((kind == ExprKind::Div || kind == ExprKind::Mod) && y == 0)) return intImm(foldInt(kind, x, y));
  if (a->kind == ExprKind::FloatImm && b->kind == ExprKind::FloatImm) {
    double p = a->fval, q = b->fval;
    switch (kind) {
      case ExprKind::Add:
        return floatImm(p + q);
      case ExprKind::Sub:
        return floatImm(p - q);
      case ExprKind::Mul:
        return floatImm(p * q);
      case ExprKind::Div:
        return floatImm(p / q);
      default:
        break;
    }
  }
  bool fl = isFloat(a) || isFloat(b);
  if (!fl) {  // integer identities, safe for index arithmetic
    if (kind == ExprKind::Add && ai && x == 0) return b;
    if ((kind == ExprKind::Add || kind == ExprKind::Sub) && bi && y == 0) return a;
    if (kind == ExprKind::Mul && ((ai && x == 0) || (bi && y == 0))) return intImm(0);
    if (kind == ExprKind::Mul && ai && x == 1) return b;
    if ((kind == ExprKind::Mul || kind == ExprKind::Div) && bi && y == 1) return a;
    if (kind == ExprKind::Mod && bi && y == 1) return intImm(0);
  }
  DType dt = isComparison(kind) ? DType::Bool : (fl ? DType::Float32 : DType::Int32);
  return make({kind, dt, 0, 0, {}, CallFn::Exp, {std::move(a), std::move(b)}});
}

Expr select(Expr cond, Expr a, Expr b) {
  int64_t c;
  if (isIntImm(cond, &c)) return c ? a : b;
  DType dt = (isFloat(a) || isFloat(b)) ? DType::Float32 : a->dtype;
  return make({ExprKind::Select, dt, 0, 0, {}, CallFn::Exp, {std::move(cond), a, b}});
}
Expr cast(DType dtype, Expr a) {
  if (a->dtype == dtype) return a;
  if (dtype == DType::Float32 && a->kind == ExprKind::IntImm) return floatImm(double(a->ival));
  return make({ExprKind::Cast, dtype, 0, 0, {}, CallFn::Exp, {std::move(a)}});
}
Expr call(CallFn fn, std::vector<Expr> args) {
  return make({ExprKind::Call, DType::Float32, 0, 0, {}, fn, std::move(args)});
}
Expr logicalNot(Expr a) {
  return make({ExprKind::Not, DType::Bool, 0, 0, {}, CallFn::Exp, {a}});
}
Expr minExpr(Expr a, Expr b) {
  return binary(ExprKind::Min, a, b);
}
Expr maxExpr(Expr a, Expr b) {
  return binary(ExprKind::Max, a, b);
}

Expr operator+(Expr a, Expr b) {
  return binary(ExprKind::Add, a, b);
}
Expr operator-(Expr a, Expr b) {
  return binary(ExprKind::Sub, a, b);
}
Expr operator*(Expr a, Expr b) {
  return binary(ExprKind::Mul, a, b);
}
Expr operator/(Expr a, Expr b) {
  return binary(ExprKind::Div, a, b);
}
Expr operator%(Expr a, Expr b) {
  return binary(ExprKind::Mod, a, b);
}
Expr operator+(Expr a, int64_t b) {
  return a + intImm(b);
}
Expr operator-(Expr a, int64_t b) {
  return a - intImm(b);
}
Expr operator*(Expr a, int64_t b) {
  return a * intImm(b);
}
Expr operator/(Expr a, int64_t b) {
  return a / intImm(b);
}
Expr operator%(Expr a, int64_t b) {
  return a % intImm(b);
}
Expr operator<(Expr a, Expr b) {
  return binary(ExprKind::LT, a, b);
}
Expr operator<=(Expr a, Expr b) {
  return binary(ExprKind::LE, a, b);
}
Expr operator>(Expr a, Expr b) {
  return binary(ExprKind::GT, a, b);
}
Expr operator>=(Expr a, Expr b) {
  return binary(ExprKind::GE, a, b);
}
Expr operator&&(Expr a, Expr b) {
  int64_t x;
  if (isIntImm(a, &x)) return x ? b : intImm(0);
  if (isIntImm(b, &x)) return x ? a : intImm(0);
  return binary(ExprKind::And, a, b);
}
Expr operator||(Expr a, Expr b) {
  return binary(ExprKind::Or, a, b);
}

namespace {
template <class F>
Expr mutate(const Expr& e, const F& leaf) {
  if (Expr r = leaf(e)) return r;
  if (e->args.empty()) return e;
  std::vector<Expr> args;
  args.reserve(e->args.size());
  bool changed = false;
  for (const Expr& a : e->args) {
    args.push_back(mutate(a, leaf));
    changed |= args.back() != a;
  }
  return changed ? withOperands(e, std::move(args)) : e;
}
}  // namespace

Expr withOperands(const Expr& e, std::vector<Expr> args) {
  switch (e->kind) {
    case ExprKind::Load:
      return load(e->name, std::move(args));
    case ExprKind::Select:
      return select(args[0], args[1], args[2]);
    case ExprKind::Cast:
      return cast(e->dtype, args[0]);
    case ExprKind::Call:
      return call(e->fn, std::move(args));
    case ExprKind::Not:
      return logicalNot(args[0]);
    default:
      return binary(e->kind, args[0], args[1]);
  }
}

Expr substitute(const Expr& e, const std::map<std::string, Expr>& vars) {
  return mutate(e, [&](const Expr& x) -> Expr {
    if (x->kind != ExprKind::Var) return nullptr;
    auto it = vars.find(x->name);
    return it == vars.end() ? x : it->second;
  });
}

Expr rewriteLoads(const Expr& e, const std::string& tensor, const std::function<Expr(const std::vector<Expr>&)>& fn) {
  std::function<Expr(const Expr&)> leaf = [&](const Expr& x) -> Expr {
    if (x->kind != ExprKind::Load || x->name != tensor) return nullptr;
    std::vector<Expr> idx;
    for (const Expr& a : x->args)
      idx.push_back(mutate(a, leaf));
    return fn(idx);
  };
  return mutate(e, leaf);
}

void collectLoads(const Expr& e, std::vector<const ExprNode*>* out) {
  if (e->kind == ExprKind::Load) out->push_back(e.get());
  for (const Expr& a : e->args)
    collectLoads(a, out);
}

void collectVars(const Expr& e, std::vector<std::string>* out) {
  if (e->kind == ExprKind::Var) out->push_back(e->name);
  for (const Expr& a : e->args)
    collectVars(a, out);
}

bool usesVar(const Expr& e, const std::string& name) {
  if (e->kind == ExprKind::Var) return e->name == name;
  for (const Expr& a : e->args)
    if (usesVar(a, name)) return true;
  return false;
}

std::string toString(const Expr& e) {
  std::ostringstream os;
  print(e, os);
  return os.str();
}

int64_t countFlops(const Expr& e) {
  if (e->kind == ExprKind::Load) return 0;  // index arithmetic is not counted
  int64_t n = 0;
  for (const Expr& a : e->args)
    n += countFlops(a);
  if (!isFloat(e)) return n;
  switch (e->kind) {
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
    case ExprKind::Div:
    case ExprKind::Min:
    case ExprKind::Max:
    case ExprKind::Call:
      return n + 1;
    default:
      return n;
  }
}

}  // namespace tessel::te
