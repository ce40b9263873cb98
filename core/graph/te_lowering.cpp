#include "graph/te_lowering.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "graph/op_registry.h"
#include "graph/shape_utils.h"
#include "lower/loop_nest.h"

namespace tessel::graph {

namespace {

using te::Expr;
using te::floatImm;
using te::Indices;
using te::intImm;
using te::ReduceKind;
using te::Tensor;

using Perm = std::vector<size_t>;  // storage dim d holds logical dim perm[d]; empty: identity
const Perm kNHWC = {0, 2, 3, 1};
const Perm kRSCK = {2, 3, 1, 0};

// A graph value inside the DAG: the tensor storing it and how its logical
// (graph) index maps to the storage index. Scalars are stored as [1].
struct Val {
  Tensor t;
  std::vector<int64_t> shape;  // logical
  Perm perm;
  Expr at(const Indices& logical) const {
    if (shape.empty()) return t({intImm(0)});
    if (perm.empty()) return t(logical);
    Indices s;
    for (size_t p : perm)
      s.push_back(logical[p]);
    return t(s);
  }
};

std::vector<int64_t> storageShape(const std::vector<int64_t>& shape, const Perm& perm) {
  if (shape.empty()) return {1};
  if (perm.empty()) return shape;
  std::vector<int64_t> s;
  for (size_t p : perm)
    s.push_back(shape[p]);
  return s;
}

Indices toLogical(const Indices& storage, const Perm& perm, size_t rank) {
  if (rank == 0) return {};
  if (perm.empty()) return storage;
  Indices l(rank);
  for (size_t d = 0; d < perm.size(); ++d)
    l[perm[d]] = storage[d];
  return l;
}

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

Expr minI(const Expr& a, const Expr& b) {
  return te::select(a < b, a, b);
}
Expr maxI(const Expr& a, const Expr& b) {
  return te::select(a > b, a, b);
}

bool isImageOp(const std::string& op) {
  const OpDef* d = findOp(op);
  return d && d->image;
}

bool isElementwiseOp(const std::string& op) {
  const OpDef* d = findOp(op);
  return d && d->pattern == OpPattern::ElementWise;
}

bool isConstantNode(const Node& n) {
  const OpDef* d = findOp(n.op);
  return d && d->constant;
}

bool reservedName(const std::string& s) {
  static const std::set<std::string> words = {
      "alignas",  "alignof",  "and",     "asm",      "auto",        "bool",        "break",    "case",     "catch",
      "char",     "class",    "const",   "continue", "default",     "delete",      "do",       "double",   "else",
      "enum",     "extern",   "false",   "float",    "for",         "friend",      "goto",     "if",       "inline",
      "int",      "long",     "new",     "not",      "or",          "private",     "public",   "register", "return",
      "short",    "signed",   "sizeof",  "static",   "struct",      "switch",      "template", "this",     "throw",
      "true",     "try",      "typedef", "union",    "unsigned",    "using",       "virtual",  "void",     "volatile",
      "while",    "xor",      "args",    "std",      "expf",        "tanhf",       "erff",     "sqrtf",    "logf",
      "fabsf",    "powf",     "fminf",   "fmaxf",    "tessel_minf", "tessel_maxf", "INFINITY", "NAN",      "main",
      "operator", "namespace"};
  return words.count(s) > 0;
}

// The NHWC decision for every value of the graph, independent of how it is
// cut into groups so that producers and consumers agree.
std::set<std::string> nhwcValues(const Graph& g) {
  std::set<std::string> out;
  auto rank4 = [&](const std::string& v) {
    auto it = g.values.find(v);
    if (it != g.values.end()) return it->second.shape.size() == 4 && it->second.dtype == DType::Float32;
    auto in = g.initializers.find(v);
    return in != g.initializers.end() && in->second.info.shape.size() == 4 && !in->second.isInt();
  };
  std::map<std::string, int> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& o : g.nodes[i].outputs)
      producer[o] = int(i);
  // External activations (graph inputs, initializers, constants) read by image ops.
  for (const Node& n : g.nodes) {
    if (!isImageOp(n.op) || n.inputs.empty()) continue;
    const std::string& v = n.inputs[0];
    auto p = producer.find(v);
    if ((p == producer.end() || isConstantNode(g.nodes[size_t(p->second)])) && rank4(v)) out.insert(v);
  }
  for (const Node& n : g.nodes) {
    if (n.outputs.empty() || n.outputs[0].empty() || !rank4(n.outputs[0])) continue;
    if (isImageOp(n.op)) {
      out.insert(n.outputs[0]);
    } else if (isElementwiseOp(n.op)) {
      for (const std::string& in : n.inputs)
        if (!in.empty() && out.count(in) && rank4(in)) {
          out.insert(n.outputs[0]);
          break;
        }
    }
  }
  return out;
}

}  // namespace

// Lowers a group of nodes; the per-op rules are its public methods, attached
// to the ops in the registry (attachLoweringRules below).
class TeLowerer {
  friend void attachLoweringRules(std::vector<OpDef>& table);

 public:
  TeLowerer(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& o)
      : g_(g), nodes_(nodes), nhwc_(o.imageLayout == te::Layout::NHWC) {
    if (nhwc_) nhwcSet_ = nhwcValues(g);
    std::set<size_t> seen;
    for (size_t i : nodes) {
      if (i >= g.nodes.size()) throw GraphError("lowerSubgraph: node index " + std::to_string(i) + " out of range");
      if (!seen.insert(i).second) throw GraphError("lowerSubgraph: node index " + std::to_string(i) + " repeated");
      const Node& n = g.nodes[i];
      if (const OpDef* d = findOp(n.op))
        for (size_t w : d->imageWeightInputs)
          if (w < n.inputs.size() && !n.inputs[w].empty()) convWeights_.insert(n.inputs[w]);
      for (const std::string& o2 : n.outputs)
        if (!o2.empty()) producedInSet_.insert(o2);
    }
  }

  LoweredSubgraph run() {
    for (size_t i : nodes_) {
      const Node& n = g_.nodes[i];
      lowerNode(n);
      for (const std::string& o : n.outputs) {
        if (o.empty() || !vals_.count(o)) continue;
        auto it = g_.values.find(o);
        if (it != g_.values.end() && it->second.shape != vals_.at(o).shape)
          throw GraphError(n.describe() + ": lowered output '" + o + "' has shape " + shapeString(vals_.at(o).shape) +
                           " but the graph says " + shapeString(it->second.shape));
      }
    }
    // Outputs: values made here that are read outside the set or are graph outputs.
    std::set<size_t> inSet(nodes_.begin(), nodes_.end());
    LoweredSubgraph res;
    std::vector<std::string> outNames;
    std::set<std::string> claimed;
    for (size_t i : nodes_) {
      for (const std::string& o : g_.nodes[i].outputs) {
        if (o.empty() || !vals_.count(o)) continue;
        bool needed = std::find(g_.outputs.begin(), g_.outputs.end(), o) != g_.outputs.end();
        for (size_t c = 0; c < g_.nodes.size() && !needed; ++c)
          if (!inSet.count(c))
            for (const std::string& in : g_.nodes[c].inputs)
              if (in == o) needed = true;
        if (!needed) continue;
        Val v = vals_.at(o);
        if (placeholderNames_.count(v.t.name()) || claimed.count(v.t.name()) || (!v.perm.empty() && v.perm != kNHWC)) {
          Perm p = v.perm == kNHWC ? kNHWC : Perm{};
          v = compute(o, v.shape, p, [&](const Indices& i) { return v.at(i); });
        }
        claimed.insert(v.t.name());
        outNames.push_back(v.t.name());
        res.outputValues.push_back(o);
        res.outputLayouts.push_back(v.perm == kNHWC ? te::Layout::NHWC : te::Layout::NCHW);
      }
    }
    if (outNames.empty()) return res;  // nothing to compute (constants only)
    // Keep only what the outputs need (unused results of multi-output ops,
    // placeholders read only by them).
    te::ComputeDAG full = b_.build(outNames);
    std::set<std::string> live(outNames.begin(), outNames.end());
    for (size_t i = full.ops().size(); i-- > 0;)
      if (live.count(full.ops()[i].name))
        for (const std::string& r : full.ops()[i].inputs())
          live.insert(r);
    std::vector<te::Op> ops;
    for (const te::Op& op : full.ops())
      if (live.count(op.name)) ops.push_back(op);
    res.dag = te::ComputeDAG(std::move(ops), outNames);
    for (size_t i = 0; i < inputValues_.size(); ++i)
      if (live.count(placeholderOf_.at(inputValues_[i]))) {
        res.inputValues.push_back(inputValues_[i]);
        res.inputLayouts.push_back(inputLayouts_[i]);
      }
    return res;
  }

 private:
  // ---- names, values, constants --------------------------------------------

  std::string uniq(const std::string& raw) {
    std::string s = lower::cIdent(raw);
    if (s[0] == '_') s = "v" + s;
    if (reservedName(s)) s += "_";
    std::string base = s;
    for (int k = 2; used_.count(s); ++k)
      s = base + "_" + std::to_string(k);
    used_.insert(s);
    return s;
  }

  const ValueInfo* info(const std::string& v) const {
    auto it = g_.values.find(v);
    if (it != g_.values.end()) return &it->second;
    auto in = g_.initializers.find(v);
    if (in != g_.initializers.end()) return &in->second.info;
    for (const ValueInfo& x : g_.inputs)
      if (x.name == v) return &x;
    return nullptr;
  }

  const Node* constantNode(const std::string& v) const {
    int p = g_.producer(v);
    if (p >= 0 && isConstantNode(g_.nodes[size_t(p)])) return &g_.nodes[size_t(p)];
    return nullptr;
  }

  // Values of an Int64/Int32 constant (initializer or Constant node).
  std::optional<std::vector<int64_t>> constInts(const std::string& v) const {
    auto in = g_.initializers.find(v);
    if (in != g_.initializers.end()) {
      if (in->second.isInt() && in->second.hasData()) return in->second.ints;
      return std::nullopt;
    }
    if (const Node* c = constantNode(v)) {
      if (c->has("value_int")) return std::vector<int64_t>{c->attrInt("value_int", 0)};
      if (c->has("value_ints")) return c->attrInts("value_ints");
      if (c->has("value")) {
        const AttrValue& a = c->attrs.at("value");
        if (auto* i = std::get_if<int64_t>(&a)) return std::vector<int64_t>{*i};
        if (auto* l = std::get_if<std::vector<int64_t>>(&a)) return *l;
      }
    }
    return std::nullopt;
  }

  // Values of a small Float32 constant (for scalars read at lowering time).
  std::optional<std::vector<float>> constFloats(const std::string& v) const {
    auto in = g_.initializers.find(v);
    if (in != g_.initializers.end()) {
      if (in->second.isInt() || in->second.info.numElements() > 64) return std::nullopt;
      Initializer copy = in->second;
      copy.materialise();
      return copy.data;
    }
    if (const Node* c = constantNode(v)) {
      if (c->has("value_float")) return std::vector<float>{float(c->attrFloat("value_float", 0))};
      if (c->has("value_floats")) {
        std::vector<float> out;
        for (double d : c->attrFloats("value_floats"))
          out.push_back(float(d));
        return out;
      }
      if (c->has("value")) {
        const AttrValue& a = c->attrs.at("value");
        if (auto* d = std::get_if<double>(&a)) return std::vector<float>{float(*d)};
        if (auto* l = std::get_if<std::vector<double>>(&a)) {
          std::vector<float> out;
          for (double x : *l)
            out.push_back(float(x));
          return out;
        }
      }
    }
    return std::nullopt;
  }

  std::vector<int64_t> needInts(const Node& n, size_t input, const char* what) const {
    const std::string& v = n.inputs.at(input);
    auto c = constInts(v);
    if (!c)
      throw GraphError(n.describe() + ": " + what + " ('" + v +
                       "') must be a constant int64 tensor (an initializer with data)");
    return *c;
  }

  bool hasInput(const Node& n, size_t i) const { return n.inputs.size() > i && !n.inputs[i].empty(); }

  // The float tensor of a value: computed in the set, or a placeholder.
  Val in(const Node& n, size_t i) {
    if (!hasInput(n, i)) throw GraphError(n.describe() + ": input " + std::to_string(i) + " is missing");
    return value(n, n.inputs[i]);
  }

  Val value(const Node& n, const std::string& v) {
    auto it = vals_.find(v);
    if (it != vals_.end()) return it->second;
    if (producedInSet_.count(v) && !constantNode(v))
      throw GraphError(n.describe() + ": input '" + v + "' is produced later in the set (not topological order)");
    const ValueInfo* vi = info(v);
    if (!vi) throw GraphError(n.describe() + ": unknown value '" + v + "' (run inferShapes first)");
    // Computed booleans are stored as 0 / 1 floats, like every computed value.
    const bool computedBool = vi->dtype == DType::Bool && g_.producer(v) >= 0 && !constantNode(v);
    if (vi->dtype != DType::Float32 && !computedBool)
      throw GraphError(n.describe() + ": input '" + v + "' is " + dtypeName(vi->dtype) +
                       "; only float32 tensors are computed (integer inputs must be constants used as parameters)");
    for (int64_t d : vi->shape)
      if (d <= 0) throw GraphError(n.describe() + ": input '" + v + "' has an empty or unknown dimension");
    Perm p;
    if (nhwc_ && vi->shape.size() == 4) {
      if (convWeights_.count(v))
        p = kRSCK;
      else if (nhwcSet_.count(v))
        p = kNHWC;
    }
    // Weights (initializers, constants) may be packed for the kernel that reads them.
    const bool constant = g_.isInitializer(v) || constantNode(v) != nullptr;
    Tensor t = b_.placeholder(uniq(v), storageShape(vi->shape, p), constant);
    placeholderNames_.insert(t.name());
    placeholderOf_[v] = t.name();
    inputValues_.push_back(v);
    inputLayouts_.push_back(p.empty() ? te::Layout::NCHW : te::Layout::NHWC);
    Val val{t, vi->shape, p};
    vals_[v] = val;
    return val;
  }

  Perm outPerm(const std::string& v, const std::vector<int64_t>& shape) const {
    return nhwc_ && shape.size() == 4 && nhwcSet_.count(v) ? kNHWC : Perm{};
  }

  Val compute(const std::string& name, const std::vector<int64_t>& shape, const Perm& perm,
              const std::function<Expr(const Indices&)>& f) {
    checkShape(name, shape);
    size_t rank = shape.size();
    Tensor t = b_.compute(uniq(name), storageShape(shape, perm),
                          [&](const Indices& s) { return f(toLogical(s, perm, rank)); });
    return Val{t, shape, perm};
  }

  Val reduce(const std::string& name, const std::vector<int64_t>& shape, const Perm& perm, ReduceKind kind,
             const std::vector<int64_t>& extents, const std::function<Expr(const Indices&, const Indices&)>& f) {
    checkShape(name, shape);
    size_t rank = shape.size();
    Tensor t = b_.reduce(uniq(name), storageShape(shape, perm), kind, extents,
                         [&](const Indices& s, const Indices& r) { return f(toLogical(s, perm, rank), r); });
    return Val{t, shape, perm};
  }

  void checkShape(const std::string& name, const std::vector<int64_t>& shape) const {
    for (int64_t d : shape)
      if (d <= 0)
        throw GraphError(cur_->describe() + ": '" + name + "' would have an empty dimension " + shapeString(shape) +
                         " (zero-size tensors are not supported)");
  }

  // The final stage of a node output, named after the value.
  Val out(const Node& n, size_t i, const std::vector<int64_t>& shape, const std::function<Expr(const Indices&)>& f) {
    Val v = compute(n.outputs.at(i), shape, outPerm(n.outputs[i], shape), f);
    vals_[n.outputs[i]] = v;
    return v;
  }

  void set(const Node& n, size_t i, const Val& v) { vals_[n.outputs.at(i)] = v; }

  // Indices of a broadcast operand from the output's indices (right-aligned).
  static Indices bcast(const Val& v, const Indices& o) {
    Indices idx;
    size_t lead = o.size() - v.shape.size();
    for (size_t d = 0; d < v.shape.size(); ++d)
      idx.push_back(v.shape[d] == 1 ? intImm(0) : o[lead + d]);
    return idx;
  }

  int64_t axisAttr(const Node& n, const char* name, int64_t fallback, size_t rank) const {
    return normaliseAxis(n, n.attrInt(name, fallback), int64_t(rank));
  }

  void unusedExtraOutputs(const Node& n, size_t from) const {
    for (size_t i = from; i < n.outputs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      bool used = !g_.consumers(n.outputs[i]).empty() ||
                  std::find(g_.outputs.begin(), g_.outputs.end(), n.outputs[i]) != g_.outputs.end();
      if (used)
        throw GraphError(n.describe() + ": output " + std::to_string(i) + " ('" + n.outputs[i] +
                         "') is not supported (only the first output can be used)");
    }
  }

  // ---- ops -------------------------------------------------------------------

  void lowerNode(const Node& n) {
    cur_ = &n;
    if (n.outputs.empty() || n.outputs[0].empty()) throw GraphError(n.describe() + ": has no output");
    const OpDef& def = opOf(n);
    if (!def.lower) throw GraphError(n.describe() + ": op '" + n.op + "' cannot be lowered to tensor expressions");
    def.lower(*this, n);
  }

 public:
  // The rules, one per kind of op.
  void none(const Node&) {}  // a Constant: its value is a placeholder (or a constant read here)
  void foldedFirst(const Node& n) {
    throw GraphError(n.describe() + ": " + n.op +
                     " produces int64 and must be removed by foldConstants before lowering");
  }
  void passThrough(const Node& n) { set(n, 0, in(n, 0)); }
  // Inference: the identity, and a mask of ones (true) where it is read.
  void dropout(const Node& n) {
    const Val x = in(n, 0);
    set(n, 0, x);
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) out(n, 1, x.shape, [](const Indices&) { return floatImm(1.0); });
  }
  void cast(const Node& n) {
    if (dtypeFromOnnx(n.attrInt("to", 1)) != DType::Float32)
      throw GraphError(n.describe() + ": only casts to float32 are supported");
    set(n, 0, in(n, 0));
  }

  // Inputs broadcast together and combined left to right (Max and Min take
  // any number of inputs, the others two).
  void binary(const Node& n, const std::function<Expr(const Expr&, const Expr&)>& combine, bool variadic) {
    std::vector<Val> ins;
    std::vector<int64_t> shape;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (n.inputs[i].empty()) continue;
      ins.push_back(in(n, i));
      shape = ins.size() == 1 ? ins.back().shape : broadcastShapes(n, shape, ins.back().shape);
    }
    if (ins.empty()) throw GraphError(n.describe() + ": has no inputs");
    if (!variadic && ins.size() != 2) throw GraphError(n.describe() + ": needs two inputs");
    out(n, 0, shape, [&](const Indices& i) {
      Expr acc = ins[0].at(bcast(ins[0], i));
      for (size_t k = 1; k < ins.size(); ++k)
        acc = combine(acc, ins[k].at(bcast(ins[k], i)));
      return acc;
    });
  }

  // A constant scalar exponent becomes multiplications (or a square root).
  void power(const Node& n) {
    if (!hasInput(n, 0) || !hasInput(n, 1)) throw GraphError(n.describe() + ": needs two inputs");
    Val x = in(n, 0);
    auto c = constFloats(n.inputs[1]);
    if (c && c->size() == 1 && info(n.inputs[1])->shape.size() <= x.shape.size()) {
      const float e = (*c)[0];
      out(n, 0, broadcastShapes(n, x.shape, info(n.inputs[1])->shape), [&](const Indices& i) {
        Expr v = x.at(bcast(x, i));
        if (e == 2.0f) return v * v;
        if (e == 1.0f) return v;
        if (e == 0.5f) return te::call(te::CallFn::Sqrt, {v});
        if (e == 3.0f) return v * v * v;
        return te::call(te::CallFn::Pow, {v, floatImm(e)});
      });
      return;
    }
    binary(
        n,
        [](const Expr& a, const Expr& b) {
          return te::call(te::CallFn::Pow, {a, b});
        },
        false);
  }

  // f of each element of the one input.
  void map(const Node& n, const std::function<Expr(const Expr&)>& f) {
    Val x = in(n, 0);
    out(n, 0, x.shape, [&](const Indices& i) { return f(x.at(i)); });
  }

  void clip(const Node& n) {
    std::optional<Expr> lo = scalarOperand(n, 1), hi = scalarOperand(n, 2);
    if (!lo && n.has("min")) lo = floatImm(n.attrFloat("min", 0));
    if (!hi && n.has("max")) hi = floatImm(n.attrFloat("max", 0));
    map(n, [&](const Expr& v) {
      Expr r = v;
      if (lo) r = te::maxExpr(r, *lo);
      if (hi) r = te::minExpr(r, *hi);
      return r;
    });
  }

  void gelu(const Node& n) {
    using te::call;
    using te::CallFn;
    const std::string approx = n.attrString("approximate", "none");
    if (approx != "none" && approx != "tanh") throw GraphError(n.describe() + ": unknown approximate '" + approx + "'");
    map(n, [&](const Expr& v) -> Expr {
      if (approx == "tanh") {
        Expr inner = floatImm(std::sqrt(2.0 / M_PI)) * (v + floatImm(0.044715) * v * v * v);
        return floatImm(0.5) * v * (floatImm(1.0) + call(CallFn::Tanh, {inner}));
      }
      return floatImm(0.5) * v * (floatImm(1.0) + call(CallFn::Erf, {v * floatImm(M_SQRT1_2)}));
    });
  }

 private:
  // A scalar operand: a constant read now, or a loaded placeholder.
  std::optional<Expr> scalarOperand(const Node& n, size_t i) {
    if (!hasInput(n, i)) return std::nullopt;
    if (auto c = constFloats(n.inputs[i]); c && c->size() == 1) return floatImm((*c)[0]);
    Val v = in(n, i);
    if (product(v.shape) != 1) throw GraphError(n.describe() + ": input " + std::to_string(i) + " must be a scalar");
    return v.at(Indices(v.shape.size(), intImm(0)));
  }

  // Spatial parameters of Conv and the pools.
  struct Window {
    std::vector<int64_t> kernel, stride, dilation, padBegin, padEnd, outSize;
  };

  Window window(const Node& n, const std::vector<int64_t>& inShape, const std::vector<int64_t>& kernel, bool ceilMode) {
    size_t sp = inShape.size() - 2;
    Window w;
    w.kernel = kernel;
    w.stride = n.attrInts("strides", std::vector<int64_t>(sp, 1));
    w.dilation = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
    std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
    if (w.kernel.size() != sp || w.stride.size() != sp || w.dilation.size() != sp || pads.size() != 2 * sp)
      throw GraphError(n.describe() + ": kernel_shape/strides/dilations/pads do not match " + std::to_string(sp) +
                       " spatial dims");
    std::string autoPad = n.attrString("auto_pad", "NOTSET");
    for (size_t d = 0; d < sp; ++d) {
      int64_t in = inShape[2 + d], s = w.stride[d], eff = w.dilation[d] * (w.kernel[d] - 1) + 1;
      if (s <= 0 || w.dilation[d] <= 0 || w.kernel[d] <= 0)
        throw GraphError(n.describe() + ": strides, dilations and kernel must be positive");
      int64_t pb = pads[d], pe = pads[sp + d], o;
      if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
        o = (in + s - 1) / s;
        int64_t total = std::max<int64_t>(0, (o - 1) * s + eff - in);
        pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
        pe = total - pb;
      } else {
        if (autoPad == "VALID")
          pb = pe = 0;
        else if (autoPad != "NOTSET")
          throw GraphError(n.describe() + ": unknown auto_pad '" + autoPad + "'");
        int64_t num = in + pb + pe - eff;
        if (num < 0) throw GraphError(n.describe() + ": the window does not fit the padded input");
        o = (ceilMode ? (num + s - 1) / s : num / s) + 1;
        if (ceilMode && (o - 1) * s >= in + pb) --o;
      }
      w.padBegin.push_back(pb);
      w.padEnd.push_back(pe);
      w.outSize.push_back(o);
    }
    return w;
  }

  // x padded with `value` so that every window of `w` lies inside (logical
  // NC + spatial); x itself when nothing is needed.
  Val padded(const Node& n, const Val& x, const Window& w, double value, const Perm& perm) {
    size_t sp = w.kernel.size();
    std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
    bool any = false;
    for (size_t d = 0; d < sp; ++d) {
      int64_t need = (w.outSize[d] - 1) * w.stride[d] + w.dilation[d] * (w.kernel[d] - 1) + 1;
      int64_t size = std::max(need, x.shape[2 + d] + w.padBegin[d]);
      shape.push_back(size);
      any |= w.padBegin[d] > 0 || size > x.shape[2 + d];
    }
    if (!any) return x;
    return compute(n.outputs[0] + "_pad", shape, perm, [&](const Indices& i) {
      Expr cond = intImm(1);
      Indices j = {i[0], i[1]};
      for (size_t d = 0; d < sp; ++d) {
        Expr y = i[2 + d] - w.padBegin[d];
        j.push_back(y);
        if (w.padBegin[d] > 0) cond = cond && (y >= intImm(0));
        if (shape[2 + d] > x.shape[2 + d] + w.padBegin[d]) cond = cond && (y < intImm(x.shape[2 + d]));
      }
      return te::select(cond, x.at(j), floatImm(value));
    });
  }

  void conv(const Node& n) {
    Val x = in(n, 0), wt = in(n, 1);
    if (x.shape.size() < 3 || wt.shape.size() != x.shape.size())
      throw GraphError(n.describe() + ": input and weight must have the same rank (3 to 5)");
    size_t sp = x.shape.size() - 2;
    int64_t groups = n.attrInt("group", 1), c = x.shape[1], k = wt.shape[0], cg = wt.shape[1];
    if (groups <= 0 || c % groups || k % groups || cg * groups != c)
      throw GraphError(n.describe() + ": weight " + shapeString(wt.shape) + " does not match input " +
                       shapeString(x.shape) + " with group " + std::to_string(groups));
    std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
    if (n.has("kernel_shape") && n.attrInts("kernel_shape") != kernel)
      throw GraphError(n.describe() + ": kernel_shape does not match the weight");
    Window w = window(n, x.shape, kernel, false);
    const std::string& o = n.outputs[0];
    std::vector<int64_t> shape = {x.shape[0], k};
    shape.insert(shape.end(), w.outSize.begin(), w.outSize.end());
    Perm perm = outPerm(o, shape);
    Val p = padded(n, x, w, 0.0, perm);
    // Channels innermost in the reduction when they are innermost in storage.
    bool cLast = perm == kNHWC;
    std::vector<int64_t> extents;
    if (!cLast) extents.push_back(cg);
    extents.insert(extents.end(), kernel.begin(), kernel.end());
    if (cLast) extents.push_back(cg);
    int64_t kg = k / groups;
    bool bias = hasInput(n, 2);
    Val b = bias ? in(n, 2) : Val{};
    Val r =
        reduce(bias ? o + "_conv" : o, shape, perm, ReduceKind::Sum, extents, [&](const Indices& i, const Indices& rd) {
          Expr rc = cLast ? rd.back() : rd[0];
          Indices xi = {i[0], groups == 1 ? rc : (i[1] / kg) * cg + rc};
          Indices wi = {i[1], rc};
          for (size_t d = 0; d < sp; ++d) {
            Expr rr = rd[cLast ? d : d + 1];
            xi.push_back(i[2 + d] * w.stride[d] + rr * w.dilation[d]);
            wi.push_back(rr);
          }
          return p.at(xi) * wt.at(wi);
        });
    if (!bias) return set(n, 0, r);
    out(n, 0, shape, [&](const Indices& i) { return r.at(i) + b.at({i[1]}); });
  }

  void gemm(const Node& n) {
    Val a = in(n, 0), bm = in(n, 1);
    if (a.shape.size() != 2 || bm.shape.size() != 2) throw GraphError(n.describe() + ": A and B must be 2-D");
    bool ta = n.attrInt("transA", 0), tb = n.attrInt("transB", 0);
    double alpha = n.attrFloat("alpha", 1.0), beta = n.attrFloat("beta", 1.0);
    int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
    int64_t k2 = tb ? bm.shape[1] : bm.shape[0], nn = tb ? bm.shape[0] : bm.shape[1];
    if (k != k2)
      throw GraphError(n.describe() + ": inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(k2) +
                       ")");
    bool hasC = hasInput(n, 2) && beta != 0.0;
    bool epilogue = hasC || alpha != 1.0;
    const std::string& o = n.outputs[0];
    Val r =
        reduce(epilogue ? o + "_mm" : o, {m, nn}, {}, ReduceKind::Sum, {k}, [&](const Indices& i, const Indices& rd) {
          Expr av = ta ? a.at({rd[0], i[0]}) : a.at({i[0], rd[0]});
          Expr bv = tb ? bm.at({i[1], rd[0]}) : bm.at({rd[0], i[1]});
          return av * bv;
        });
    if (!epilogue) return set(n, 0, r);
    Val c = hasC ? in(n, 2) : Val{};
    if (hasC) broadcastShapes(n, {m, nn}, c.shape);
    out(n, 0, {m, nn}, [&](const Indices& i) {
      Expr v = alpha == 1.0 ? r.at(i) : r.at(i) * floatImm(alpha);
      if (hasC) v = v + (beta == 1.0 ? c.at(bcast(c, i)) : c.at(bcast(c, i)) * floatImm(beta));
      return v;
    });
  }

  void matmul(const Node& n) {
    Val a = in(n, 0), b = in(n, 1);
    size_t ra = a.shape.size(), rb = b.shape.size();
    if (ra == 0 || rb == 0) throw GraphError(n.describe() + ": MatMul of a scalar");
    int64_t k = a.shape.back(), kb = rb == 1 ? b.shape[0] : b.shape[rb - 2];
    if (k != kb)
      throw GraphError(n.describe() + ": inner dimensions differ (" + shapeString(a.shape) + " x " +
                       shapeString(b.shape) + ")");
    std::vector<int64_t> ba =
        ra > 2 ? std::vector<int64_t>(a.shape.begin(), a.shape.end() - 2) : std::vector<int64_t>{};
    std::vector<int64_t> bb =
        rb > 2 ? std::vector<int64_t>(b.shape.begin(), b.shape.end() - 2) : std::vector<int64_t>{};
    std::vector<int64_t> batch = broadcastShapes(n, ba, bb), shape = batch;
    if (ra > 1) shape.push_back(a.shape[ra - 2]);
    if (rb > 1) shape.push_back(b.shape.back());
    size_t nb = batch.size();
    auto batchIdx = [&](const std::vector<int64_t>& own, const Indices& i) {
      Indices idx;
      size_t lead = nb - own.size();
      for (size_t d = 0; d < own.size(); ++d)
        idx.push_back(own[d] == 1 ? intImm(0) : i[lead + d]);
      return idx;
    };
    Val r = reduce(n.outputs[0], shape, outPerm(n.outputs[0], shape), ReduceKind::Sum, {k},
                   [&](const Indices& i, const Indices& rd) {
                     Expr av, bv;
                     if (ra == 1) {
                       av = a.at({rd[0]});
                     } else {
                       Indices ai = batchIdx(ba, i);
                       ai.push_back(i[nb]);
                       ai.push_back(rd[0]);
                       av = a.at(ai);
                     }
                     if (rb == 1) {
                       bv = b.at({rd[0]});
                     } else {
                       Indices bi = batchIdx(bb, i);
                       bi.push_back(rd[0]);
                       bi.push_back(i.back());
                       bv = b.at(bi);
                     }
                     return av * bv;
                   });
    set(n, 0, r);
  }

  // Shape without `axis` (reductions over one axis).
  static Indices withAxis(const Indices& outer, size_t axis, const Expr& v) {
    Indices j = outer;
    j.insert(j.begin() + long(axis), v);
    return j;
  }
  static Indices withoutAxis(const Indices& i, size_t axis) {
    Indices j = i;
    j.erase(j.begin() + long(axis));
    return j;
  }

  void softmax(const Node& n) { softmaxOf(n, false); }
  void logSoftmax(const Node& n) { softmaxOf(n, true); }

  // ReduceLogSumExp with the maximum taken out first, as log-softmax does.
  void reduceLogSumExp(const Node& n) {
    Val x = in(n, 0);
    const std::string& o = n.outputs[0];
    Node maxNode = n;
    maxNode.outputs = {o + "_max"};
    reduceAxes(maxNode, ReduceKind::Max, false);
    const Val mx = vals_.at(o + "_max");
    const size_t rank = x.shape.size();
    const bool keep = n.attrInt("keepdims", 1) != 0;
    std::vector<int64_t> axes = axesOf(n, 1);
    std::vector<bool> red(rank, axes.empty());
    for (int64_t a : axes)
      red[size_t(normaliseAxis(n, a, int64_t(rank)))] = true;
    auto outerOf = [&](const Indices& i) {
      Indices j;
      for (size_t d = 0; d < rank; ++d)
        if (!red[d])
          j.push_back(i[d]);
        else if (keep)
          j.push_back(intImm(0));
      return j;
    };
    Val shifted = compute(o + "_shifted", x.shape, {},
                          [&](const Indices& i) { return te::call(te::CallFn::Exp, {x.at(i) - mx.at(outerOf(i))}); });
    Node sumNode = n;
    sumNode.inputs[0] = o + "_shifted";
    sumNode.outputs = {o + "_sum"};
    vals_[o + "_shifted"] = shifted;
    reduceAxes(sumNode, ReduceKind::Sum, false);
    const Val sum = vals_.at(o + "_sum");
    out(n, 0, mx.shape, [&](const Indices& i) { return mx.at(i) + te::call(te::CallFn::Log, {sum.at(i)}); });
  }

  // Each (n, c) normalised over the spatial axes, then scaled and shifted per channel.
  void instanceNorm(const Node& n) {
    Val x = in(n, 0), scale = in(n, 1), bias = in(n, 2);
    const double eps = n.attrFloat("epsilon", 1e-5);
    std::vector<int64_t> outer = {x.shape[0], x.shape[1]};
    std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
    const double invN = 1.0 / double(product(spatial));
    auto full = [](const Indices& nc, const Indices& r) {
      Indices j = nc;
      j.insert(j.end(), r.begin(), r.end());
      return j;
    };
    const std::string& o = n.outputs[0];
    Val sum = reduce(o + "_sum", outer, {}, ReduceKind::Sum, spatial,
                     [&](const Indices& i, const Indices& r) { return x.at(full(i, r)); });
    Val var = reduce(o + "_var", outer, {}, ReduceKind::Sum, spatial, [&](const Indices& i, const Indices& r) {
      Expr d = x.at(full(i, r)) - sum.at(i) * floatImm(invN);
      return d * d;
    });
    out(n, 0, x.shape, [&](const Indices& i) {
      const Indices nc = {i[0], i[1]};
      Expr rstd = floatImm(1.0) / te::call(te::CallFn::Sqrt, {var.at(nc) * floatImm(invN) + floatImm(eps)});
      return (x.at(i) - sum.at(nc) * floatImm(invN)) * rstd * scale.at({i[1]}) + bias.at({i[1]});
    });
  }

 private:
  void softmaxOf(const Node& n, bool log) {
    Val x = in(n, 0);
    size_t rank = x.shape.size();
    if (rank == 0) throw GraphError(n.describe() + ": Softmax of a scalar");
    size_t axis = size_t(axisAttr(n, "axis", -1, rank));
    std::vector<int64_t> outer = x.shape;
    outer.erase(outer.begin() + long(axis));
    int64_t len = x.shape[axis];
    const std::string& o = n.outputs[0];
    Val mx = reduce(o + "_max", outer, {}, ReduceKind::Max, {len},
                    [&](const Indices& i, const Indices& r) { return x.at(withAxis(i, axis, r[0])); });
    Val ex = compute(o + "_exp", x.shape, {}, [&](const Indices& i) {
      return te::call(te::CallFn::Exp, {x.at(i) - mx.at(withoutAxis(i, axis))});
    });
    Val sum = reduce(o + "_sum", outer, {}, ReduceKind::Sum, {len},
                     [&](const Indices& i, const Indices& r) { return ex.at(withAxis(i, axis, r[0])); });
    if (log) {
      out(n, 0, x.shape, [&](const Indices& i) {
        const Indices j = withoutAxis(i, axis);
        return x.at(i) - mx.at(j) - te::call(te::CallFn::Log, {sum.at(j)});
      });
      return;
    }
    out(n, 0, x.shape, [&](const Indices& i) { return ex.at(i) / sum.at(withoutAxis(i, axis)); });
  }

 public:
  void layerNorm(const Node& n) {
    Val x = in(n, 0), scale = in(n, 1);
    size_t rank = x.shape.size();
    size_t axis = size_t(axisAttr(n, "axis", -1, rank));
    double eps = n.attrFloat("epsilon", 1e-5);
    std::vector<int64_t> outer(x.shape.begin(), x.shape.begin() + long(axis));
    std::vector<int64_t> inner(x.shape.begin() + long(axis), x.shape.end());
    double invN = 1.0 / double(product(inner));
    bool hasB = hasInput(n, 2);
    Val bias = hasB ? in(n, 2) : Val{};
    broadcastShapes(n, x.shape, scale.shape);
    if (hasB) broadcastShapes(n, x.shape, bias.shape);
    const std::string& o = n.outputs[0];
    auto full = [&](const Indices& i, const Indices& r) {
      Indices j(i.begin(), i.begin() + long(axis));
      j.insert(j.end(), r.begin(), r.end());
      return j;
    };
    auto outerOf = [&](const Indices& i) { return Indices(i.begin(), i.begin() + long(axis)); };
    Val sum = reduce(o + "_sum", outer, {}, ReduceKind::Sum, inner,
                     [&](const Indices& i, const Indices& r) { return x.at(full(i, r)); });
    Val var = reduce(o + "_var", outer, {}, ReduceKind::Sum, inner, [&](const Indices& i, const Indices& r) {
      Expr d = x.at(full(i, r)) - sum.at(i) * floatImm(invN);
      return d * d;
    });
    auto rstd = [&](const Indices& oi) {
      return floatImm(1.0) / te::call(te::CallFn::Sqrt, {var.at(oi) * floatImm(invN) + floatImm(eps)});
    };
    out(n, 0, x.shape, [&](const Indices& i) {
      Expr v = (x.at(i) - sum.at(outerOf(i)) * floatImm(invN)) * rstd(outerOf(i)) * scale.at(bcast(scale, i));
      return hasB ? v + bias.at(bcast(bias, i)) : v;
    });
    // Optional Mean and InvStdDev: outer dims then ones.
    std::vector<int64_t> statShape = outer;
    statShape.resize(rank, 1);
    for (size_t k = 1; k < 3 && k < n.outputs.size(); ++k) {
      if (n.outputs[k].empty()) continue;
      out(n, k, statShape, [&](const Indices& i) {
        Indices oi(i.begin(), i.begin() + long(axis));
        return k == 1 ? sum.at(oi) * floatImm(invN) : rstd(oi);
      });
    }
  }

  void batchNorm(const Node& n) {
    if (n.attrInt("training_mode", 0)) throw GraphError(n.describe() + ": training_mode is not supported");
    unusedExtraOutputs(n, 1);
    Val x = in(n, 0), scale = in(n, 1), b = in(n, 2), mean = in(n, 3), var = in(n, 4);
    if (x.shape.size() < 2) throw GraphError(n.describe() + ": input must have a channel axis");
    int64_t c = x.shape[1];
    for (const Val* v : {&scale, &b, &mean, &var})
      if (v->shape != std::vector<int64_t>{c})
        throw GraphError(n.describe() + ": parameters must have shape [" + std::to_string(c) + "]");
    double eps = n.attrFloat("epsilon", 1e-5);
    const std::string& o = n.outputs[0];
    Val s = compute(o + "_scale", {c}, {}, [&](const Indices& i) {
      return scale.at(i) / te::call(te::CallFn::Sqrt, {var.at(i) + floatImm(eps)});
    });
    Val sh = compute(o + "_shift", {c}, {}, [&](const Indices& i) { return b.at(i) - mean.at(i) * s.at(i); });
    out(n, 0, x.shape, [&](const Indices& i) { return x.at(i) * s.at({i[1]}) + sh.at({i[1]}); });
  }

  void pool(const Node& n, bool isMax) {
    if (isMax) unusedExtraOutputs(n, 1);
    Val x = in(n, 0);
    if (x.shape.size() < 3) throw GraphError(n.describe() + ": input must be N x C x spatial");
    if (!n.has("kernel_shape")) throw GraphError(n.describe() + ": kernel_shape is required");
    if (!isMax && n.has("dilations"))
      for (int64_t d : n.attrInts("dilations"))
        if (d != 1) throw GraphError(n.describe() + ": AveragePool with dilations is not supported");
    Window w = window(n, x.shape, n.attrInts("kernel_shape"), n.attrInt("ceil_mode", 0) != 0);
    size_t sp = w.kernel.size();
    const std::string& o = n.outputs[0];
    std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
    shape.insert(shape.end(), w.outSize.begin(), w.outSize.end());
    Perm perm = outPerm(o, shape);
    Val p = padded(n, x, w, isMax ? -std::numeric_limits<double>::infinity() : 0.0, perm);
    auto body = [&](const Indices& i, const Indices& r) {
      Indices j = {i[0], i[1]};
      for (size_t d = 0; d < sp; ++d)
        j.push_back(i[2 + d] * w.stride[d] + r[d] * w.dilation[d]);
      return p.at(j);
    };
    if (isMax) return set(n, 0, reduce(o, shape, perm, ReduceKind::Max, w.kernel, body));
    Val sum = reduce(o + "_sum", shape, perm, ReduceKind::Sum, w.kernel, body);
    bool includePad = n.attrInt("count_include_pad", 0) != 0;
    // The divisor is constant unless some window covers elements that do not count.
    bool constant = true;
    for (size_t d = 0; d < sp; ++d) {
      int64_t covered = (w.outSize[d] - 1) * w.stride[d] + w.kernel[d];  // padded extent the windows span
      int64_t lo = includePad ? 0 : w.padBegin[d];
      int64_t hi = includePad ? x.shape[2 + d] + w.padBegin[d] + w.padEnd[d] : x.shape[2 + d] + w.padBegin[d];
      if (lo > 0 || covered > hi) constant = false;
    }
    out(n, 0, shape, [&](const Indices& i) {
      if (constant) return sum.at(i) * floatImm(1.0 / double(product(w.kernel)));
      Expr count = intImm(1);
      for (size_t d = 0; d < sp; ++d) {
        int64_t lo = includePad ? -w.padBegin[d] : 0;
        int64_t hi = includePad ? x.shape[2 + d] + w.padEnd[d] : x.shape[2 + d];
        Expr start = i[2 + d] * w.stride[d] - w.padBegin[d];
        count = count * (minI(start + w.kernel[d], intImm(hi)) - maxI(start, intImm(lo)));
      }
      return sum.at(i) / te::cast(te::DType::Float32, count);
    });
  }

  void globalPool(const Node& n) {
    Val x = in(n, 0);
    if (x.shape.size() < 3) throw GraphError(n.describe() + ": input must be N x C x spatial");
    std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
    std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
    shape.resize(x.shape.size(), 1);
    const std::string& o = n.outputs[0];
    Perm perm = outPerm(o, shape);
    Val sum = reduce(o + "_sum", shape, perm, ReduceKind::Sum, spatial, [&](const Indices& i, const Indices& r) {
      Indices j = {i[0], i[1]};
      j.insert(j.end(), r.begin(), r.end());
      return x.at(j);
    });
    out(n, 0, shape, [&](const Indices& i) { return sum.at(i) * floatImm(1.0 / double(product(spatial))); });
  }

  // A new view of the same row-major elements.
  void reshapeTo(const Node& n, const Val& x, const std::vector<int64_t>& shape) {
    if (product(shape) != product(x.shape))
      throw GraphError(n.describe() + ": cannot reshape " + shapeString(x.shape) + " to " + shapeString(shape));
    std::vector<int64_t> a, b;
    for (int64_t d : x.shape)
      if (d != 1) a.push_back(d);
    for (int64_t d : shape)
      if (d != 1) b.push_back(d);
    if (a == b) {  // only unit dimensions change: map indices directly
      out(n, 0, shape, [&](const Indices& i) {
        Indices nonUnit;
        for (size_t d = 0; d < shape.size(); ++d)
          if (shape[d] != 1) nonUnit.push_back(i[d]);
        Indices j;
        size_t k = 0;
        for (int64_t d : x.shape)
          j.push_back(d == 1 ? intImm(0) : nonUnit[k++]);
        return x.at(j);
      });
      return;
    }
    std::vector<int64_t> os = rowMajorStrides(shape), is = rowMajorStrides(x.shape);
    out(n, 0, shape, [&](const Indices& i) {
      Expr lin = intImm(0);
      for (size_t d = 0; d < shape.size(); ++d)
        lin = lin + i[d] * os[d];
      Indices j;
      for (size_t d = 0; d < x.shape.size(); ++d) {
        Expr v = lin;
        if (is[d] != 1) v = v / is[d];
        if (d > 0) v = v % x.shape[d];
        j.push_back(v);
      }
      return x.at(j);
    });
  }

  std::vector<int64_t> axesOf(const Node& n, size_t input) const {
    if (hasInput(n, input)) return needInts(n, input, "axes");
    return n.attrInts("axes");
  }

  // Flatten, Reshape, Squeeze, Unsqueeze: the same elements in the shape
  // shape inference gave the output.
  void reshapeLike(const Node& n) {
    const ValueInfo* o = info(n.outputs[0]);
    if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
    reshapeTo(n, in(n, 0), o->shape);
  }

  void transpose(const Node& n) {
    Val x = in(n, 0);
    size_t rank = x.shape.size();
    std::vector<int64_t> perm = n.attrInts("perm");
    if (perm.empty())
      for (size_t d = rank; d-- > 0;)
        perm.push_back(int64_t(d));
    if (perm.size() != rank) throw GraphError(n.describe() + ": perm does not match the rank");
    std::vector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(x.shape.at(size_t(normaliseAxis(n, p, int64_t(rank)))));
    out(n, 0, shape, [&](const Indices& i) {
      Indices j(rank);
      for (size_t d = 0; d < rank; ++d)
        j[size_t(normaliseAxis(n, perm[d], int64_t(rank)))] = i[d];
      return x.at(j);
    });
  }

  void concat(const Node& n) {
    std::vector<Val> ins;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (hasInput(n, i)) ins.push_back(in(n, i));
    if (ins.empty()) throw GraphError(n.describe() + ": has no inputs");
    size_t rank = ins[0].shape.size();
    size_t axis = size_t(axisAttr(n, "axis", 0, rank));
    std::vector<int64_t> shape = ins[0].shape;
    shape[axis] = 0;
    for (const Val& v : ins) {
      if (v.shape.size() != rank) throw GraphError(n.describe() + ": inputs have different ranks");
      for (size_t d = 0; d < rank; ++d)
        if (d != axis && v.shape[d] != shape[d]) throw GraphError(n.describe() + ": input shapes differ off the axis");
      shape[axis] += v.shape[axis];
    }
    out(n, 0, shape, [&](const Indices& i) {
      // Last input first, then wrap the earlier ones in selects.
      int64_t offset = shape[axis] - ins.back().shape[axis];
      Indices j = i;
      j[axis] = i[axis] - offset;
      Expr e = ins.back().at(j);
      for (size_t k = ins.size() - 1; k-- > 0;) {
        offset -= ins[k].shape[axis];
        Indices jk = i;
        jk[axis] = i[axis] - offset;
        e = te::select(i[axis] < intImm(offset + ins[k].shape[axis]), ins[k].at(jk), e);
      }
      return e;
    });
  }

  void slice(const Node& n) {
    Val x = in(n, 0);
    const std::vector<SliceRange> r =
        sliceOf(n, x.shape, [&](size_t i, const char* what) { return needInts(n, i, what); });
    std::vector<int64_t> shape;
    for (const SliceRange& s : r)
      shape.push_back(s.count);
    out(n, 0, shape, [&](const Indices& i) {
      Indices j;
      for (size_t d = 0; d < r.size(); ++d)
        j.push_back(i[d] * r[d].step + r[d].start);
      return x.at(j);
    });
  }

  void gather(const Node& n) {
    Val x = in(n, 0);
    if (!hasInput(n, 1)) throw GraphError(n.describe() + ": needs indices");
    auto idx = constInts(n.inputs[1]);
    if (!idx)
      throw GraphError(n.describe() + ": indices '" + n.inputs[1] +
                       "' are not constant; only Gather with constant (initializer) indices can be lowered");
    const ValueInfo* ii = info(n.inputs[1]);
    std::vector<int64_t> ishape = ii ? ii->shape : std::vector<int64_t>{int64_t(idx->size())};
    if (product(ishape) != int64_t(idx->size())) throw GraphError(n.describe() + ": indices have the wrong size");
    size_t rank = x.shape.size();
    size_t axis = size_t(axisAttr(n, "axis", 0, rank));
    int64_t dim = x.shape[axis];
    std::vector<int64_t> table;
    for (int64_t v : *idx) {
      if (v < -dim || v >= dim) throw GraphError(n.describe() + ": index " + std::to_string(v) + " out of range");
      table.push_back(v < 0 ? v + dim : v);
    }
    bool affine = true;
    for (size_t p = 2; p < table.size() && affine; ++p)
      affine = table[p] - table[p - 1] == table[1] - table[0];
    std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + long(axis));
    shape.insert(shape.end(), ishape.begin(), ishape.end());
    shape.insert(shape.end(), x.shape.begin() + long(axis) + 1, x.shape.end());
    std::vector<int64_t> is = rowMajorStrides(ishape);
    out(n, 0, shape, [&](const Indices& i) {
      Expr pos = intImm(0);
      for (size_t d = 0; d < ishape.size(); ++d)
        pos = pos + i[axis + d] * is[d];
      Expr src;
      if (affine) {
        src = table.size() == 1 ? intImm(table[0]) : pos * (table[1] - table[0]) + table[0];
      } else {
        src = intImm(table.back());
        for (size_t p = table.size() - 1; p-- > 0;)
          src = te::select(te::binary(te::ExprKind::EQ, pos, intImm(int64_t(p))), intImm(table[p]), src);
      }
      Indices j(i.begin(), i.begin() + long(axis));
      j.push_back(src);
      j.insert(j.end(), i.begin() + long(axis + ishape.size()), i.end());
      return x.at(j);
    });
  }

  void split(const Node& n) {
    Val x = in(n, 0);
    size_t rank = x.shape.size();
    size_t axis = size_t(axisAttr(n, "axis", 0, rank));
    int64_t dim = x.shape[axis];
    std::vector<int64_t> sizes = hasInput(n, 1) ? needInts(n, 1, "split") : n.attrInts("split");
    size_t parts = n.outputs.size();
    if (sizes.empty()) {
      int64_t num = n.attrInt("num_outputs", int64_t(parts));
      int64_t chunk = (dim + num - 1) / num;
      for (int64_t k = 0; k < num; ++k)
        sizes.push_back(std::min(chunk, dim - k * chunk));
    }
    if (sizes.size() != parts) throw GraphError(n.describe() + ": split sizes do not match the outputs");
    int64_t offset = 0;
    for (size_t k = 0; k < parts; ++k) {
      std::vector<int64_t> shape = x.shape;
      shape[axis] = sizes[k];
      if (!n.outputs[k].empty())
        out(n, k, shape, [&](const Indices& i) {
          Indices j = i;
          j[axis] = i[axis] + offset;
          return x.at(j);
        });
      offset += sizes[k];
    }
    if (offset != dim) throw GraphError(n.describe() + ": split sizes do not add up to " + std::to_string(dim));
  }

  void pad(const Node& n) {
    Val x = in(n, 0);
    size_t rank = x.shape.size();
    std::string mode = n.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge")
      throw GraphError(n.describe() + ": mode '" + mode + "' is not supported");
    std::vector<int64_t> pads = hasInput(n, 1) ? needInts(n, 1, "pads") : n.attrInts("pads");
    std::vector<int64_t> axes;
    if (hasInput(n, 3)) {
      axes = needInts(n, 3, "axes");
    } else {
      for (size_t d = 0; d < rank; ++d)
        axes.push_back(int64_t(d));
    }
    if (pads.size() != 2 * axes.size()) throw GraphError(n.describe() + ": pads has the wrong length");
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      size_t a = size_t(normaliseAxis(n, axes[k], int64_t(rank)));
      before[a] = pads[k];
      after[a] = pads[axes.size() + k];
    }
    Expr value = floatImm(n.attrFloat("value", 0.0));
    if (mode == "constant")
      if (auto v = scalarOperand(n, 2)) value = *v;
    std::vector<int64_t> shape;
    for (size_t d = 0; d < rank; ++d) {
      shape.push_back(x.shape[d] + before[d] + after[d]);
      if (mode == "reflect" && (before[d] >= x.shape[d] || after[d] >= x.shape[d]))
        throw GraphError(n.describe() + ": reflect pads must be smaller than the dimension");
    }
    out(n, 0, shape, [&](const Indices& i) {
      Expr cond = intImm(1);
      Indices j;
      for (size_t d = 0; d < rank; ++d) {
        Expr y = i[d] - before[d];
        int64_t len = x.shape[d];
        if (mode == "constant") {
          if (before[d] > 0) cond = cond && (y >= intImm(0));
          if (after[d] > 0) cond = cond && (y < intImm(len));
        } else if (mode == "edge") {
          if (before[d] > 0) y = maxI(y, intImm(0));
          if (after[d] > 0) y = minI(y, intImm(len - 1));
        } else {
          if (before[d] > 0) y = te::select(y < intImm(0), intImm(0) - y, y);
          if (after[d] > 0) y = te::select(y >= intImm(len), intImm(2 * (len - 1)) - y, y);
        }
        j.push_back(y);
      }
      return mode == "constant" ? te::select(cond, x.at(j), value) : x.at(j);
    });
  }

  // ReduceMean / Sum / Max / Min over the given axes (all when none); the
  // others reduce f(x) and take g of the result (L2: x * x, then the root).
  using ExprFn = std::function<Expr(const Expr&)>;
  void reduceAxes(const Node& n, ReduceKind kind, bool mean, const ExprFn& pre = nullptr,
                  const ExprFn& post = nullptr) {
    Val x = in(n, 0);
    size_t rank = x.shape.size();
    std::vector<int64_t> axes = axesOf(n, 1);
    bool keep = n.attrInt("keepdims", 1) != 0;
    if (axes.empty() && n.attrInt("noop_with_empty_axes", 0)) return set(n, 0, x);
    std::vector<bool> red(rank, axes.empty());
    for (int64_t a : axes)
      red[size_t(normaliseAxis(n, a, int64_t(rank)))] = true;
    std::vector<int64_t> shape, extents;
    for (size_t d = 0; d < rank; ++d) {
      if (red[d]) extents.push_back(x.shape[d]);
      if (!red[d] || keep) shape.push_back(red[d] ? 1 : x.shape[d]);
    }
    if (extents.empty()) return set(n, 0, x);
    const std::string& o = n.outputs[0];
    auto body = [&](const Indices& i, const Indices& r) {
      Indices j;
      size_t k = 0, q = 0;
      for (size_t d = 0; d < rank; ++d) {
        if (red[d]) {
          j.push_back(r[k++]);
          if (keep) ++q;
        } else {
          j.push_back(i[q++]);
        }
      }
      return pre ? pre(x.at(j)) : x.at(j);
    };
    if (post) {
      Val r = reduce(o + "_red", shape, {}, kind, extents, body);
      out(n, 0, shape, [&](const Indices& i) { return post(r.at(i)); });
      return;
    }
    if (!mean) {
      set(n, 0, reduce(o, shape, outPerm(o, shape), kind, extents, body));
      return;
    }
    Val sum = reduce(o + "_sum", shape, {}, ReduceKind::Sum, extents, body);
    out(n, 0, shape, [&](const Indices& i) { return sum.at(i) * floatImm(1.0 / double(product(extents))); });
  }

  // Where(condition, X, Y): the condition is 0 / 1 (a comparison computed
  // here, or a constant the importer made float).
  void where(const Node& n) {
    Val c = in(n, 0), x = in(n, 1), y = in(n, 2);
    std::vector<int64_t> shape = broadcastShapes(n, broadcastShapes(n, c.shape, x.shape), y.shape);
    out(n, 0, shape, [&](const Indices& i) {
      return te::select(te::binary(te::ExprKind::NE, c.at(bcast(c, i)), floatImm(0.0)), x.at(bcast(x, i)),
                        y.at(bcast(y, i)));
    });
  }

  // Expand and Tile: each output element reads one input element.
  void expand(const Node& n) {
    Val x = in(n, 0);
    const ValueInfo* o = info(n.outputs[0]);
    if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
    out(n, 0, o->shape, [&](const Indices& i) { return x.at(bcast(x, i)); });
  }
  void tile(const Node& n) {
    Val x = in(n, 0);
    const ValueInfo* o = info(n.outputs[0]);
    if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
    out(n, 0, o->shape, [&](const Indices& i) {
      Indices j;
      for (size_t d = 0; d < i.size(); ++d)
        j.push_back(x.shape[d] == o->shape[d] ? i[d] : i[d] % x.shape[d]);
      return x.at(j);
    });
  }

  // Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the last two axes.
  void trilu(const Node& n) {
    Val x = in(n, 0);
    const int64_t k = hasInput(n, 1) ? needInts(n, 1, "k").at(0) : 0;
    const bool upper = n.attrInt("upper", 1) != 0;
    const size_t r = x.shape.size();
    out(n, 0, x.shape, [&](const Indices& i) {
      Expr diff = i[r - 1] - i[r - 2];
      Expr keep = upper ? diff >= intImm(k) : diff <= intImm(k);
      return te::select(keep, x.at(i), floatImm(0.0));
    });
  }

  // Outputs defined by attributes and constant scalars alone.
  void constantOfShape(const Node& n) {
    const ValueInfo* o = info(n.outputs[0]);
    if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
    const double v = n.has("value") ? n.attrFloat("value", 0) : 0;
    out(n, 0, o->shape, [&](const Indices&) { return floatImm(v); });
  }
  void range(const Node& n) {
    auto start = constFloats(n.inputs.at(0)), delta = constFloats(n.inputs.at(2));
    if (!start || !delta) throw GraphError(n.describe() + ": start and delta must be float constants");
    const ValueInfo* o = info(n.outputs[0]);
    out(n, 0, o->shape, [&](const Indices& i) {
      return floatImm((*start)[0]) + te::cast(te::DType::Float32, i[0]) * floatImm((*delta)[0]);
    });
  }

  // C's fmod on floats (fmod=1; fmod=0 is for integers, which are folded).
  void mod(const Node& n) {
    if (n.attrInt("fmod", 0) == 0)
      throw UnsupportedError(n.describe() + ": integer Mod (fmod=0) of computed values is not supported");
    binary(
        n,
        [](const Expr& a, const Expr& b) {
          return a - te::cast(te::DType::Float32, te::cast(te::DType::Int32, a / b)) * b;
        },
        false);
  }

  void unsupportedComputed(const Node& n) {
    throw UnsupportedError(n.describe() + ": " + n.op +
                           " of computed values is not supported (Tessel evaluates it when its inputs are constants)");
  }

  const Graph& g_;
  std::vector<size_t> nodes_;
  bool nhwc_;
  std::set<std::string> nhwcSet_, convWeights_, producedInSet_, used_, placeholderNames_;
  std::map<std::string, Val> vals_;
  std::map<std::string, std::string> placeholderOf_;
  std::vector<std::string> inputValues_;
  std::vector<te::Layout> inputLayouts_;
  te::DagBuilder b_;
  const Node* cur_ = nullptr;
};

void attachLoweringRules(std::vector<OpDef>& table) {
  using L = TeLowerer;
  using te::call;
  using te::CallFn;
  using Rule = std::function<void(TeLowerer&, const Node&)>;
  auto method = [](void (L::*m)(const Node&)) -> Rule { return [m](L& l, const Node& n) { (l.*m)(n); }; };
  auto combine = [](std::function<Expr(const Expr&, const Expr&)> f, bool variadic) -> Rule {
    return [f, variadic](L& l, const Node& n) { l.binary(n, f, variadic); };
  };
  auto elementwise = [](std::function<Expr(const Expr&)> f) -> Rule {
    return [f](L& l, const Node& n) { l.map(n, f); };
  };
  auto activation = [](std::function<Expr(const Node&, const Expr&)> f) -> Rule {
    return [f](L& l, const Node& n) { l.map(n, [&](const Expr& v) { return f(n, v); }); };
  };
  auto truth = [](te::ExprKind cmp) {
    return
        [cmp](const Expr& a, const Expr& b) { return te::select(te::binary(cmp, a, b), floatImm(1.0), floatImm(0.0)); };
  };
  const std::map<std::string, Rule> rules = {
      {"Constant", method(&L::none)},
      {"Shape", method(&L::foldedFirst)},
      {"Identity", method(&L::passThrough)},
      {"Dropout", method(&L::dropout)},
      {"Cast", method(&L::cast)},
      {"Add", combine([](const Expr& a, const Expr& b) { return a + b; }, false)},
      {"Sub", combine([](const Expr& a, const Expr& b) { return a - b; }, false)},
      {"Mul", combine([](const Expr& a, const Expr& b) { return a * b; }, false)},
      {"Div", combine([](const Expr& a, const Expr& b) { return a / b; }, false)},
      {"Max", combine([](const Expr& a, const Expr& b) { return te::maxExpr(a, b); }, true)},
      {"Min", combine([](const Expr& a, const Expr& b) { return te::minExpr(a, b); }, true)},
      {"Pow", method(&L::power)},
      {"Relu", elementwise([](const Expr& v) { return te::maxExpr(v, floatImm(0.0)); })},
      {"Sqrt", elementwise([](const Expr& v) { return call(CallFn::Sqrt, {v}); })},
      {"Sigmoid", elementwise([](const Expr& v) {
         return floatImm(1.0) / (floatImm(1.0) + call(CallFn::Exp, {v * floatImm(-1.0)}));
       })},
      {"Tanh", elementwise([](const Expr& v) { return call(CallFn::Tanh, {v}); })},
      {"Erf", elementwise([](const Expr& v) { return call(CallFn::Erf, {v}); })},
      {"Exp", elementwise([](const Expr& v) { return call(CallFn::Exp, {v}); })},
      {"Neg", elementwise([](const Expr& v) { return v * floatImm(-1.0); })},
      {"Abs", elementwise([](const Expr& v) { return call(CallFn::Abs, {v}); })},
      {"Reciprocal", elementwise([](const Expr& v) { return floatImm(1.0) / v; })},
      {"Clip", method(&L::clip)},
      {"Gelu", method(&L::gelu)},
      {"Conv", method(&L::conv)},
      {"Gemm", method(&L::gemm)},
      {"MatMul", method(&L::matmul)},
      {"Softmax", method(&L::softmax)},
      {"LayerNormalization", method(&L::layerNorm)},
      {"BatchNormalization", method(&L::batchNorm)},
      {"MaxPool", [](L& l, const Node& n) { l.pool(n, true); }},
      {"AveragePool", [](L& l, const Node& n) { l.pool(n, false); }},
      {"GlobalAveragePool", method(&L::globalPool)},
      {"Flatten", method(&L::reshapeLike)},
      {"Reshape", method(&L::reshapeLike)},
      {"Squeeze", method(&L::reshapeLike)},
      {"Unsqueeze", method(&L::reshapeLike)},
      {"Transpose", method(&L::transpose)},
      {"Concat", method(&L::concat)},
      {"Slice", method(&L::slice)},
      {"Gather", method(&L::gather)},
      {"Split", method(&L::split)},
      {"Pad", method(&L::pad)},
      {"ReduceMean", [](L& l, const Node& n) { l.reduceAxes(n, te::ReduceKind::Sum, true); }},
      {"ReduceSum", [](L& l, const Node& n) { l.reduceAxes(n, te::ReduceKind::Sum, false); }},
      {"ReduceMax", [](L& l, const Node& n) { l.reduceAxes(n, te::ReduceKind::Max, false); }},
      {"ReduceMin", [](L& l, const Node& n) { l.reduceAxes(n, te::ReduceKind::Min, false); }},
      {"ReduceL1",
       [](L& l, const Node& n) {
         l.reduceAxes(n, te::ReduceKind::Sum, false, [](const Expr& v) { return call(CallFn::Abs, {v}); });
       }},
      {"ReduceL2",
       [](L& l, const Node& n) {
         l.reduceAxes(
             n, te::ReduceKind::Sum, false, [](const Expr& v) { return v * v; },
             [](const Expr& v) { return call(CallFn::Sqrt, {v}); });
       }},
      {"ReduceSumSquare",
       [](L& l, const Node& n) { l.reduceAxes(n, te::ReduceKind::Sum, false, [](const Expr& v) { return v * v; }); }},
      {"ReduceLogSum",
       [](L& l, const Node& n) {
         l.reduceAxes(n, te::ReduceKind::Sum, false, nullptr, [](const Expr& v) { return call(CallFn::Log, {v}); });
       }},
      {"ReduceLogSumExp", method(&L::reduceLogSumExp)},
      {"LogSoftmax", method(&L::logSoftmax)},
      {"InstanceNormalization", method(&L::instanceNorm)},
      {"Xor", combine(truth(te::ExprKind::NE), false)},
      {"Trilu", method(&L::trilu)},
      {"Log", elementwise([](const Expr& v) { return call(CallFn::Log, {v}); })},
      {"Softplus", elementwise([](const Expr& v) {
         return te::select(v > floatImm(20.0), v, call(CallFn::Log, {floatImm(1.0) + call(CallFn::Exp, {v})}));
       })},
      {"Elu", activation([](const Node& n, const Expr& v) {
         return te::select(v < floatImm(0.0),
                           floatImm(n.attrFloat("alpha", 1.0)) * (call(CallFn::Exp, {v}) - floatImm(1.0)), v);
       })},
      {"LeakyRelu", activation([](const Node& n, const Expr& v) {
         return te::select(v < floatImm(0.0), floatImm(n.attrFloat("alpha", 0.01)) * v, v);
       })},
      {"HardSigmoid", activation([](const Node& n, const Expr& v) {
         Expr lin = floatImm(n.attrFloat("alpha", 0.2)) * v + floatImm(n.attrFloat("beta", 0.5));
         return te::minExpr(te::maxExpr(lin, floatImm(0.0)), floatImm(1.0));
       })},
      {"HardSwish", elementwise([](const Expr& v) {
         return v * te::minExpr(te::maxExpr(v * floatImm(1.0 / 6.0) + floatImm(0.5), floatImm(0.0)), floatImm(1.0));
       })},
      // Booleans are 0 and 1 inside kernels.
      {"Not", elementwise([](const Expr& v) { return floatImm(1.0) - v; })},
      {"Equal", combine(truth(te::ExprKind::EQ), false)},
      {"Less", combine(truth(te::ExprKind::LT), false)},
      {"Greater", combine(truth(te::ExprKind::GT), false)},
      {"LessOrEqual", combine(truth(te::ExprKind::LE), false)},
      {"GreaterOrEqual", combine(truth(te::ExprKind::GE), false)},
      {"And", combine([](const Expr& a, const Expr& b) { return a * b; }, false)},
      {"Or", combine([](const Expr& a, const Expr& b) { return te::maxExpr(a, b); }, false)},
      {"Mod", method(&L::mod)},
      {"Where", method(&L::where)},
      {"Expand", method(&L::expand)},
      {"Tile", method(&L::tile)},
      {"ConstantOfShape", method(&L::constantOfShape)},
      {"Range", method(&L::range)},
      {"ScatterND", method(&L::unsupportedComputed)},
      {"Size", method(&L::foldedFirst)},
  };
  for (OpDef& d : table)
    if (auto r = rules.find(d.name); r != rules.end()) d.lower = r->second;
}

LoweredSubgraph lowerSubgraph(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& options) {
  try {
    return TeLowerer(g, nodes, options).run();
  } catch (const GraphError&) {
    throw;
  } catch (const std::exception& e) {
    throw GraphError(std::string("lowering failed: ") + e.what());
  }
}

}  // namespace tessel::graph
