// Lowering a set of nodes: their values as placeholders or computed tensors,
// the subgraph's outputs, and the table that attaches each op's rule (the
// rules themselves: te_lowering_nn.cpp and te_lowering_data.cpp).
#include <algorithm>
#include <set>

#include "graph/shape_utils.h"
#include "graph/te_lowerer.h"
#include "lower/loop_nest.h"

namespace tessel::graph {

using namespace lowering;

namespace {

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

LoweringContext makeLoweringContext(const Graph& g, const LoweringOptions& options) {
  LoweringContext c;
  if (options.imageLayout == te::Layout::NHWC) c.nhwcValues = nhwcValues(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty()) c.readers[in].push_back(i);
  c.graphOutputs.insert(g.outputs.begin(), g.outputs.end());
  return c;
}

TeLowerer::TeLowerer(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& o,
                     const LoweringContext& c)
    : g_(g), nodes_(nodes), nhwc_(o.imageLayout == te::Layout::NHWC), context_(c) {
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

LoweredSubgraph TeLowerer::run() {
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
      bool needed = context_.graphOutputs.count(o) > 0;
      if (auto r = context_.readers.find(o); r != context_.readers.end())
        for (size_t c : r->second)
          needed |= !inSet.count(c);
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

std::string TeLowerer::uniq(const std::string& raw) {
  std::string s = lower::cIdent(raw);
  if (s[0] == '_') s = "v" + s;
  if (reservedName(s)) s += "_";
  std::string base = s;
  for (int k = 2; used_.count(s); ++k)
    s = base + "_" + std::to_string(k);
  used_.insert(s);
  return s;
}

const ValueInfo* TeLowerer::info(const std::string& v) const {
  auto it = g_.values.find(v);
  if (it != g_.values.end()) return &it->second;
  auto in = g_.initializers.find(v);
  if (in != g_.initializers.end()) return &in->second.info;
  for (const ValueInfo& x : g_.inputs)
    if (x.name == v) return &x;
  return nullptr;
}

const Node* TeLowerer::constantNode(const std::string& v) const {
  int p = g_.producer(v);
  if (p >= 0 && isConstantNode(g_.nodes[size_t(p)])) return &g_.nodes[size_t(p)];
  return nullptr;
}

std::optional<std::vector<int64_t>> TeLowerer::constInts(const std::string& v) const {
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

std::optional<std::vector<float>> TeLowerer::constFloats(const std::string& v) const {
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

std::vector<int64_t> TeLowerer::needInts(const Node& n, size_t input, const char* what) const {
  const std::string& v = n.inputs.at(input);
  auto c = constInts(v);
  if (!c)
    throw GraphError(n.describe() + ": " + what + " ('" + v +
                     "') must be a constant int64 tensor (an initializer with data)");
  return *c;
}

Val TeLowerer::in(const Node& n, size_t i) {
  if (!hasInput(n, i)) throw GraphError(n.describe() + ": input " + std::to_string(i) + " is missing");
  return value(n, n.inputs[i]);
}

Val TeLowerer::value(const Node& n, const std::string& v) {
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
    else if (context_.nhwcValues.count(v))
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

Val TeLowerer::compute(const std::string& name, const std::vector<int64_t>& shape, const Perm& perm,
                       const std::function<Expr(const Indices&)>& f) {
  checkShape(name, shape);
  size_t rank = shape.size();
  Tensor t =
      b_.compute(uniq(name), storageShape(shape, perm), [&](const Indices& s) { return f(toLogical(s, perm, rank)); });
  return Val{t, shape, perm};
}

Val TeLowerer::reduce(const std::string& name, const std::vector<int64_t>& shape, const Perm& perm, ReduceKind kind,
                      const std::vector<int64_t>& extents,
                      const std::function<Expr(const Indices&, const Indices&)>& f) {
  checkShape(name, shape);
  size_t rank = shape.size();
  Tensor t = b_.reduce(uniq(name), storageShape(shape, perm), kind, extents,
                       [&](const Indices& s, const Indices& r) { return f(toLogical(s, perm, rank), r); });
  return Val{t, shape, perm};
}

void TeLowerer::checkShape(const std::string& name, const std::vector<int64_t>& shape) const {
  for (int64_t d : shape)
    if (d <= 0)
      throw GraphError(cur_->describe() + ": '" + name + "' would have an empty dimension " + shapeString(shape) +
                       " (zero-size tensors are not supported)");
}

Val TeLowerer::out(const Node& n, size_t i, const std::vector<int64_t>& shape,
                   const std::function<Expr(const Indices&)>& f) {
  Val v = compute(n.outputs.at(i), shape, outPerm(n.outputs[i], shape), f);
  vals_[n.outputs[i]] = v;
  return v;
}

void TeLowerer::unusedExtraOutputs(const Node& n, size_t from) const {
  for (size_t i = from; i < n.outputs.size(); ++i) {
    if (n.outputs[i].empty()) continue;
    bool used = !g_.consumers(n.outputs[i]).empty() ||
                std::find(g_.outputs.begin(), g_.outputs.end(), n.outputs[i]) != g_.outputs.end();
    if (used)
      throw GraphError(n.describe() + ": output " + std::to_string(i) + " ('" + n.outputs[i] +
                       "') is not supported (only the first output can be used)");
  }
}

void TeLowerer::lowerNode(const Node& n) {
  cur_ = &n;
  if (n.outputs.empty() || n.outputs[0].empty()) throw GraphError(n.describe() + ": has no output");
  const OpDef& def = opOf(n);
  if (!def.lower) throw GraphError(n.describe() + ": op '" + n.op + "' cannot be lowered to tensor expressions");
  def.lower(*this, n);
}

void TeLowerer::foldedFirst(const Node& n) {
  throw GraphError(n.describe() + ": " + n.op + " produces int64 and must be removed by foldConstants before lowering");
}

std::optional<Expr> TeLowerer::scalarOperand(const Node& n, size_t i) {
  if (!hasInput(n, i)) return std::nullopt;
  if (auto c = constFloats(n.inputs[i]); c && c->size() == 1) return floatImm((*c)[0]);
  Val v = in(n, i);
  if (product(v.shape) != 1) throw GraphError(n.describe() + ": input " + std::to_string(i) + " must be a scalar");
  return v.at(Indices(v.shape.size(), intImm(0)));
}

std::vector<int64_t> TeLowerer::axesOf(const Node& n, size_t input) const {
  if (hasInput(n, input)) return needInts(n, input, "axes");
  return n.attrInts("axes");
}
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
      {"Resize", method(&L::resize)},
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
  return lowerSubgraph(g, nodes, options, makeLoweringContext(g, options));
}

LoweredSubgraph lowerSubgraph(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& options,
                              const LoweringContext& context) {
  try {
    return TeLowerer(g, nodes, options, context).run();
  } catch (const GraphError&) {
    throw;
  } catch (const std::exception& e) {
    throw GraphError(std::string("lowering failed: ") + e.what());
  }
}

}  // namespace tessel::graph
