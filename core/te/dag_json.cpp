#include "te/dag_json.h"

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace tessel::te {

namespace {

using nlohmann::json;

// Names in the order of the enums (te/expr.h).
constexpr std::array kKindNames = {"int", "float", "var", "load", "add",    "sub",  "mul", "div",
                                   "mod", "min",   "max", "lt",   "le",     "gt",   "ge",  "eq",
                                   "ne",  "and",   "or",  "not",  "select", "cast", "call"};
static_assert(kKindNames.size() == size_t(ExprKind::Call) + 1);
constexpr std::array kDTypeNames = {"f32", "i32", "bool"};
constexpr std::array kCallNames = {"exp", "tanh", "erf", "sqrt", "log", "abs", "pow"};
constexpr std::array kReduceNames = {"", "sum", "max", "min"};

template <size_t N>
size_t indexIn(const std::array<const char*, N>& names, const json& j, const char* what) {
  if (j.is_string())
    for (size_t i = 0; i < N; ++i)
      if (j.get_ref<const std::string&>() == names[i]) return i;
  throw std::invalid_argument(std::string("unknown ") + what + " " + j.dump());
}

// Operands each kind takes (-1: any number, as a load's indices or a call's).
int arity(ExprKind k) {
  switch (k) {
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Var:
      return 0;
    case ExprKind::Not:
    case ExprKind::Cast:
      return 1;
    case ExprKind::Select:
      return 3;
    case ExprKind::Load:
    case ExprKind::Call:
      return -1;
    default:
      return 2;
  }
}

// The payload a kind carries before its operands: 1 for immediates, variables,
// loads (the tensor) and calls (the function), else 0.
bool hasPayload(ExprKind k) {
  return k == ExprKind::IntImm || k == ExprKind::FloatImm || k == ExprKind::Var || k == ExprKind::Load ||
         k == ExprKind::Call;
}

struct Writer {
  size_t nodes = 0;
  json expr(const Expr& e, int depth) {
    if (!e) throw std::invalid_argument("the definition holds an empty expression");
    if (depth > kMaxJsonExprDepth || ++nodes > kMaxJsonExprNodes)
      throw std::invalid_argument("the definition's expressions are too large to send (over " +
                                  std::to_string(kMaxJsonExprDepth) + " deep or " + std::to_string(kMaxJsonExprNodes) +
                                  " nodes)");
    json a = json::array({kKindNames[size_t(e->kind)], kDTypeNames[size_t(e->dtype)]});
    switch (e->kind) {
      case ExprKind::IntImm:
        a.push_back(e->ival);
        break;
      case ExprKind::FloatImm:
        a.push_back(e->fval);
        break;
      case ExprKind::Var:
      case ExprKind::Load:
        a.push_back(e->name);
        break;
      case ExprKind::Call:
        a.push_back(kCallNames[size_t(e->fn)]);
        break;
      default:
        break;
    }
    for (const Expr& arg : e->args)
      a.push_back(expr(arg, depth + 1));
    return a;
  }
};

struct Reader {
  size_t nodes = 0;
  std::map<std::string, size_t> ranks;  // tensors a load may read: those defined before, by rank
  std::set<std::string> vars;           // variables the body may use: its operation's axes

  Expr expr(const json& j, int depth) {
    if (depth > kMaxJsonExprDepth)
      throw std::invalid_argument("an expression is nested deeper than " + std::to_string(kMaxJsonExprDepth));
    if (++nodes > kMaxJsonExprNodes)
      throw std::invalid_argument("the definition has more than " + std::to_string(kMaxJsonExprNodes) +
                                  " expression nodes");
    if (!j.is_array() || j.size() < 2) throw std::invalid_argument("an expression is not [kind, dtype, ...]");
    ExprNode n;
    n.kind = ExprKind(indexIn(kKindNames, j[0], "expression kind"));
    n.dtype = DType(indexIn(kDTypeNames, j[1], "dtype"));
    size_t first = 2;
    if (hasPayload(n.kind)) {
      if (j.size() < 3)
        throw std::invalid_argument(std::string("a '") + kKindNames[size_t(n.kind)] + "' expression has no value");
      const json& p = j[2];
      first = 3;
      switch (n.kind) {
        case ExprKind::IntImm:
          if (!p.is_number_integer()) throw std::invalid_argument("an integer immediate is not an integer");
          n.ival = p.get<int64_t>();
          break;
        case ExprKind::FloatImm:
          if (!p.is_number()) throw std::invalid_argument("a float immediate is not a number");
          n.fval = p.get<double>();
          break;
        case ExprKind::Call:
          n.fn = CallFn(indexIn(kCallNames, p, "function"));
          break;
        default:
          if (!p.is_string() || p.get_ref<const std::string&>().empty())
            throw std::invalid_argument("a variable or load has no name");
          n.name = p.get<std::string>();
          if (n.kind == ExprKind::Load && !ranks.count(n.name))
            throw std::invalid_argument("a load reads '" + n.name + "', which no earlier operation defines");
          if (n.kind == ExprKind::Var && !vars.count(n.name))
            throw std::invalid_argument("variable '" + n.name + "' is not an axis of its operation");
      }
    }
    const int want = arity(n.kind);
    const size_t got = j.size() - first;
    if (want >= 0 && got != size_t(want))
      throw std::invalid_argument(std::string("a '") + kKindNames[size_t(n.kind)] + "' expression has " +
                                  std::to_string(got) + " operands, not " + std::to_string(want));
    if (n.kind == ExprKind::Load && got != ranks.at(n.name))
      throw std::invalid_argument("a load of '" + n.name + "' has " + std::to_string(got) + " indices for its " +
                                  std::to_string(ranks.at(n.name)) + " dimensions");
    for (size_t i = first; i < j.size(); ++i)
      n.args.push_back(expr(j[i], depth + 1));
    return std::make_shared<const ExprNode>(std::move(n));
  }
};

json axesToJson(const std::vector<IterVar>& axes) {
  json a = json::array();
  for (const IterVar& v : axes)
    a.push_back({v.name, v.extent});
  return a;
}

std::vector<IterVar> axesFromJson(const json& j) {
  if (!j.is_array()) throw std::invalid_argument("axes are not a list");
  std::vector<IterVar> axes;
  for (const json& a : j) {
    if (!a.is_array() || a.size() != 2 || !a[0].is_string() || !a[1].is_number_integer() || a[1].get<int64_t>() < 1)
      throw std::invalid_argument("an axis is not [name, extent >= 1]: " + a.dump());
    axes.push_back({a[0].get<std::string>(), a[1].get<int64_t>()});
  }
  return axes;
}

}  // namespace

json dagToJson(const ComputeDAG& dag) {
  Writer w;
  json ops = json::array();
  for (const Op& op : dag.ops()) {
    json o = {{"name", op.name}, {"shape", op.shape}};
    if (op.placeholder) {
      o["placeholder"] = true;
      if (op.layoutFree) o["layout_free"] = true;
    } else {
      o["axes"] = axesToJson(op.axes);
      if (op.hasReduce()) {
        o["reduce"] = kReduceNames[size_t(op.reduce)];
        o["reduce_axes"] = axesToJson(op.reduceAxes);
      }
      o["body"] = w.expr(op.body, 0);
    }
    ops.push_back(std::move(o));
  }
  return {{"ops", std::move(ops)}, {"outputs", dag.outputs()}};
}

namespace {

ComputeDAG readDag(const json& j) {
  if (!j.is_object() || !j.contains("ops") || !j["ops"].is_array() || !j.contains("outputs") ||
      !j["outputs"].is_array())
    throw std::invalid_argument("a compute definition is not {ops: [...], outputs: [...]}");
  Reader r;
  std::set<std::string> defined;
  std::vector<Op> ops;
  for (const json& o : j["ops"]) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string() || !o.contains("shape") ||
        !o["shape"].is_array())
      throw std::invalid_argument("an operation has no name or shape");
    Op op;
    op.name = o["name"].get<std::string>();
    if (op.name.empty() || defined.count(op.name))
      throw std::invalid_argument("operation name '" + op.name + "' is empty or defined twice");
    for (const json& d : o["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 1)
        throw std::invalid_argument("operation '" + op.name + "' has a dimension that is not a positive integer");
      op.shape.push_back(d.get<int64_t>());
    }
    op.placeholder = o.value("placeholder", false);
    op.layoutFree = o.value("layout_free", false);
    if (!op.placeholder) {
      if (!o.contains("axes") || !o.contains("body"))
        throw std::invalid_argument("compute operation '" + op.name + "' has no axes or body");
      op.axes = axesFromJson(o["axes"]);
      if (op.axes.size() != op.shape.size())
        throw std::invalid_argument("compute operation '" + op.name + "' has " + std::to_string(op.axes.size()) +
                                    " axes for " + std::to_string(op.shape.size()) + " dimensions");
      if (o.contains("reduce")) {
        const size_t k = indexIn(kReduceNames, o["reduce"], "reduction");
        if (k == 0) throw std::invalid_argument("operation '" + op.name + "' names an empty reduction");
        op.reduce = ReduceKind(k);
        op.reduceAxes = axesFromJson(o.value("reduce_axes", json::array()));
      }
      r.vars.clear();
      for (const IterVar& v : op.axes)
        r.vars.insert(v.name);
      for (const IterVar& v : op.reduceAxes)
        r.vars.insert(v.name);
      op.body = r.expr(o["body"], 0);
    }
    defined.insert(op.name);
    r.ranks[op.name] = op.shape.size();
    ops.push_back(std::move(op));
  }
  std::vector<std::string> outputs;
  for (const json& name : j["outputs"]) {
    if (!name.is_string() || !defined.count(name.get<std::string>()))
      throw std::invalid_argument("an output names no operation: " + name.dump());
    outputs.push_back(name.get<std::string>());
  }
  if (ops.empty() || outputs.empty()) throw std::invalid_argument("a compute definition has no operation or output");
  return ComputeDAG(std::move(ops), std::move(outputs));
}

}  // namespace

ComputeDAG dagFromJson(const json& j) {
  try {
    return readDag(j);
  } catch (const json::exception& e) {  // a value of the wrong type
    throw std::invalid_argument(std::string("a compute definition does not read: ") + e.what());
  }
}

}  // namespace tessel::te
