#include "codegen/cuda_vectorize.h"

#include <map>

#include "lower/index_analysis.h"

namespace tessel::codegen {

using te::Expr;
using te::ExprKind;

namespace {

// Whether e's value is a multiple of w whatever its variables are.
bool isMultipleOf(const Expr& e, int64_t w) {
  int64_t k = 0;
  switch (e->kind) {
    case ExprKind::IntImm:
      return e->ival % w == 0;
    case ExprKind::Add:
    case ExprKind::Sub:
      return isMultipleOf(e->args[0], w) && isMultipleOf(e->args[1], w);
    case ExprKind::Mul:
      return isMultipleOf(e->args[0], w) || isMultipleOf(e->args[1], w);
    case ExprKind::Mod:  // a - K * (a / K): both multiples of w
      return te::isIntImm(e->args[1], &k) && k % w == 0 && isMultipleOf(e->args[0], w);
    case ExprKind::Select:
      return isMultipleOf(e->args[1], w) && isMultipleOf(e->args[2], w);
    default:
      return false;
  }
}

// Whether `e` is v + (a multiple of lanes) with v nowhere else.
bool isLaneAligned(const Expr& e, const std::string& v, int64_t lanes) {
  lower::Linear lin;
  lower::linearize(e, 1, &lin);
  if (lin.constant % lanes != 0) return false;
  bool sawV = false;
  for (const auto& [key, t] : lin.terms) {
    if (t.coef == 0) continue;
    if (t.atom->kind == ExprKind::Var && t.atom->name == v) {
      if (t.coef != 1) return false;
      sawV = true;
    } else if (te::usesVar(t.atom, v) || (t.coef % lanes != 0 && !isMultipleOf(t.atom, lanes))) {
      return false;
    }
  }
  return sawV;
}

// Rebuilds e bottom-up, taking v out of divisions and remainders by a
// multiple of the lanes where the dividend is v + (a multiple of lanes).
Expr withoutLaneInDivMod(const Expr& e, const std::string& v, int64_t lanes) {
  if (e->args.empty() || !te::usesVar(e, v)) return e;
  if (e->kind == ExprKind::Div || e->kind == ExprKind::Mod) {
    const Expr x = withoutLaneInDivMod(e->args[0], v, lanes);
    int64_t k = 0;
    if (te::isIntImm(e->args[1], &k) && k > 0 && k % lanes == 0 && isLaneAligned(x, v, lanes)) {
      const Expr rest = lower::simplifyIndex(x - te::var(v));
      return e->kind == ExprKind::Div ? rest / k : rest % k + te::var(v);
    }
    return te::binary(e->kind, x, withoutLaneInDivMod(e->args[1], v, lanes));
  }
  std::vector<Expr> args;
  for (const Expr& a : e->args)
    args.push_back(withoutLaneInDivMod(a, v, lanes));
  return te::withOperands(e, std::move(args));
}

// Loads evaluated whatever the values: not under a select's branches or the
// right side of && and || (a vector load there could read lanes the
// condition keeps out of bounds).
void unconditionalLoads(const Expr& e, std::vector<const te::ExprNode*>* out) {
  if (e->kind == ExprKind::Load) out->push_back(e.get());
  if (e->kind == ExprKind::Select) return unconditionalLoads(e->args[0], out);
  if (e->kind == ExprKind::And || e->kind == ExprKind::Or) return unconditionalLoads(e->args[0], out);
  for (const Expr& a : e->args)
    unconditionalLoads(a, out);
}

const char* const kLaneNames[4] = {"x", "y", "z", "w"};

}  // namespace

std::optional<Expr> alignedVectorBase(const Expr& index, const std::string& v, int64_t lanes) {
  const Expr e = withoutLaneInDivMod(index, v, lanes);
  if (!isLaneAligned(e, v, lanes)) return std::nullopt;
  return lower::simplifyIndex(te::substitute(e, {{v, te::intImm(0)}}));
}

std::optional<std::vector<std::string>> vectorizeStore(const lower::StmtNode& store, const std::string& v,
                                                       int64_t lanes,
                                                       const std::function<std::string(const Expr&)>& print) {
  if ((lanes != 2 && lanes != 4) || store.kind != lower::StmtNode::Store || !te::usesVar(store.index, v))
    return std::nullopt;
  const std::string type = lanes == 4 ? "float4" : "float2";
  const std::string storeKey = te::toString(store.index);
  // Vector loads by (buffer, base): each loaded once into a register.
  struct VectorLoad {
    std::string name;
    Expr base;
  };
  std::map<std::string, VectorLoad> loads;
  std::vector<std::string> lines;
  std::vector<const te::ExprNode*> found;
  te::collectLoads(store.value, &found);
  for (const te::ExprNode* l : found)
    // Reading the stored buffer elsewhere than the stored element: lanes
    // could depend on each other, as the serial loop orders them.
    if (l->name == store.buffer && (l->args.size() != 1 || te::toString(l->args[0]) != storeKey)) return std::nullopt;
  found.clear();
  unconditionalLoads(store.value, &found);
  for (const te::ExprNode* l : found) {
    if (l->args.size() != 1 || !te::usesVar(l->args[0], v)) continue;
    const std::optional<Expr> base = alignedVectorBase(l->args[0], v, lanes);
    if (!base) continue;
    const std::string key = l->name + "[" + te::toString(*base) + "]";
    if (loads.count(key)) continue;
    const std::string name = "tessel_vec" + std::to_string(loads.size());
    loads[key] = {name, *base};
    lines.push_back("const " + type + " " + name + " = tessel_load<" + type + ">(&" + l->name + "[" + print(*base) +
                    "]);");
  }
  const std::optional<Expr> storeBase = alignedVectorBase(store.index, v, lanes);
  if (loads.empty() && !storeBase) return std::nullopt;

  // Each lane's value: its vector loads read from the registers above.
  auto laneValue = [&](int64_t lane) {
    Expr value = store.value;
    for (const auto& [key, vl] : loads) {
      const std::string buffer = key.substr(0, key.find('['));
      const std::string baseKey = te::toString(vl.base);
      const std::string laneName = vl.name + ".";  // clang 14 cannot capture a structured binding
      value = te::rewriteLoads(value, buffer, [&](const std::vector<Expr>& idx) -> Expr {
        const std::optional<Expr> b = idx.size() == 1 ? alignedVectorBase(idx[0], v, lanes) : std::nullopt;
        if (b && te::toString(*b) == baseKey) return te::var(laneName + kLaneNames[lane]);
        return te::load(buffer, idx);
      });
    }
    return te::substitute(value, {{v, te::intImm(lane)}});
  };
  if (storeBase) {
    lines.push_back(type + " tessel_out;");
    for (int64_t lane = 0; lane < lanes; ++lane)
      lines.push_back(std::string("tessel_out.") + kLaneNames[lane] + " = " + print(laneValue(lane)) + ";");
    lines.push_back("tessel_store(&" + store.buffer + "[" + print(*storeBase) + "], tessel_out);");
  } else {
    for (int64_t lane = 0; lane < lanes; ++lane)
      lines.push_back(store.buffer + "[" + print(te::substitute(store.index, {{v, te::intImm(lane)}})) +
                      "] = " + print(laneValue(lane)) + ";");
  }
  return lines;
}

}  // namespace tessel::codegen
