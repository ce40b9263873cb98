#include "graph/op_registry.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <unordered_map>

#include "graph/resize_plan.h"
#include "graph/shape_utils.h"

namespace tessel::graph {

namespace {

using FlopsFn = std::function<double(const Graph&, const Node&)>;

double outElements(const Graph& g, const Node& n) {
  return n.outputs.empty() || !g.values.count(n.outputs[0]) ? 0 : double(g.value(n.outputs[0]).numElements());
}

// Output elements times a constant: element-wise work.
FlopsFn perOutput(double flopsPerElement) {
  return [flopsPerElement](const Graph& g, const Node& n) { return flopsPerElement * outElements(g, n); };
}

// Each output element: (C / groups) x R x S multiply-adds.
double convMacFlops(const Graph& g, const Node& n) {
  const ValueInfo& w = g.value(n.inputs.at(1));
  double perOutput = 1;
  for (size_t d = 1; d < w.shape.size(); ++d)
    perOutput *= double(w.shape[d]);
  return 2 * outElements(g, n) * perOutput;
}

// Each output element: K multiply-adds (A's last axis, its first for Gemm with transA).
double matmulMacFlops(const Graph& g, const Node& n) {
  const ValueInfo& a = g.value(n.inputs.at(0));
  const bool transA = n.attrInt("transA", 0) != 0;  // Gemm only; MatMul has no such attribute
  const double k = a.shape.empty() ? 1 : double(transA ? a.shape.front() : a.shape.back());
  return 2 * outElements(g, n) * k;
}

std::function<std::string(const Graph&, const Node&)> named(std::string name) {
  return [name](const Graph&, const Node&) { return name; };
}

OpDef& findIn(std::vector<OpDef>& table, const std::string& name) {
  for (OpDef& d : table)
    if (d.name == name) return d;
  throw std::logic_error("op registry: no entry " + name);
}

[[noreturn]] void unsupported(const Node& n, const std::string& what) {
  throw UnsupportedError(n.describe() + ": " + what + " is not supported");
}

bool hasInput(const Node& n, size_t i) {
  return n.inputs.size() > i && !n.inputs[i].empty();
}

// The constant data of a value, or nullptr when it is computed.
const Initializer* constantData(const Graph& g, const std::string& v) {
  auto it = g.initializers.find(v);
  return it == g.initializers.end() || !it->second.hasData() ? nullptr : &it->second;
}

// What the lowering implements of each op's attributes (see checkSupported).
void attachSupportChecks(std::vector<OpDef>& t) {
  findIn(t, "BatchNormalization").checkSupported = [](const Graph&, const Node& n) {
    if (n.attrInt("training_mode", 0) != 0) unsupported(n, "training_mode=1 (batch statistics)");
  };
  findIn(t, "MaxPool").checkSupported = [](const Graph&, const Node& n) {
    if (n.outputs.size() > 1 && !n.outputs[1].empty()) unsupported(n, "the Indices output");
  };
  findIn(t, "AveragePool").checkSupported = [](const Graph&, const Node& n) {
    for (int64_t d : n.attrInts("dilations"))
      if (d != 1) unsupported(n, "dilations");
  };
  findIn(t, "Pad").checkSupported = [](const Graph&, const Node& n) {
    const std::string mode = n.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge") unsupported(n, "mode '" + mode + "'");
  };
  findIn(t, "Cast").checkSupported = [](const Graph& g, const Node& n) {
    const DType to = dtypeFromOnnx(n.attrInt("to", 1));
    if (hasInput(n, 0) && to != DType::Float32 && !constantData(g, n.inputs[0]))
      unsupported(n, std::string("casting computed values to ") +
                         (to == DType::Other ? "ONNX data type " + std::to_string(n.attrInt("to", 1)) : dtypeName(to)) +
                         " (Tessel computes float32)");
  };
  findIn(t, "Dropout").checkSupported = [](const Graph& g, const Node& n) {
    if (!hasInput(n, 2)) return;
    const Initializer* mode = constantData(g, n.inputs[2]);
    const Initializer* ratio = hasInput(n, 1) ? constantData(g, n.inputs[1]) : nullptr;
    const bool training = !mode || std::any_of(mode->ints.begin(), mode->ints.end(), [](int64_t x) { return x; });
    const bool zeroRatio = ratio && !ratio->isInt() && !ratio->data.empty() && ratio->data[0] == 0.0f;
    if (training && !zeroRatio)
      unsupported(n, std::string("training mode (random dropout") +
                         (mode ? "" : ", or a training_mode that is not a constant") + ")");
  };
  findIn(t, "Resize").checkSupported = [](const Graph&, const Node& n) { checkResizeSupported(n); };
  findIn(t, "Pow").floatConstantInputs = {1};
  // Evaluated at load time only (the swin mask's scatter, position ranges).
  auto constantInputsOnly = [](const Graph& g, const Node& n) {
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (hasInput(n, i) && !constantData(g, n.inputs[i]))
        unsupported(n, n.op + " of computed values (input '" + n.inputs[i] + "')");
  };
  findIn(t, "Range").checkSupported = constantInputsOnly;
  findIn(t, "ScatterND").checkSupported = [constantInputsOnly](const Graph& g, const Node& n) {
    const std::string reduction = n.attrString("reduction", "none");
    if (reduction != "none") unsupported(n, "reduction '" + reduction + "'");
    constantInputsOnly(g, n);
  };
}

std::vector<OpDef> builtIn() {
  using P = OpPattern;
  const FlopsFn none = [](const Graph&, const Node&) { return 0.0; };
  const FlopsFn one = perOutput(1), transcendental = perOutput(4);
  std::vector<OpDef> t;
  t.reserve(128);  // references returned by op() stay valid
  auto op = [&](std::string name, P pattern, FlopsFn flops) -> OpDef& {
    OpDef d;
    d.name = std::move(name);
    d.pattern = pattern;
    d.flops = std::move(flops);
    t.push_back(std::move(d));
    return t.back();
  };
  // Heavy ops: element-wise epilogues fuse into them.
  OpDef& conv = op("Conv", P::OutEWiseFusable, [](const Graph& g, const Node& n) {
    const bool bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    return convMacFlops(g, n) + (bias ? outElements(g, n) : 0);
  });
  conv.image = true;
  conv.imageWeightInputs = {1};
  conv.taskName = named("conv2d");
  conv.macFlops = convMacFlops;
  for (const char* name : {"Gemm", "MatMul"}) {
    OpDef& d = op(name, P::OutEWiseFusable, matmulMacFlops);
    d.macFlops = matmulMacFlops;
  }
  findIn(t, "Gemm").taskName = named("dense");
  findIn(t, "MatMul").taskName = [](const Graph& g, const Node& n) -> std::string {
    const bool batched = !n.outputs.empty() && g.values.count(n.outputs[0]) && g.value(n.outputs[0]).shape.size() > 2;
    return batched ? "batch_matmul" : "matmul";
  };
  for (const char* name : {"MaxPool", "AveragePool"}) {
    OpDef& d = op(name, P::OutEWiseFusable, [](const Graph& g, const Node& n) {
      double area = 1;
      for (int64_t k : n.attrInts("kernel_shape"))
        area *= double(k);
      return outElements(g, n) * area;
    });
    d.image = true;
  }
  findIn(t, "MaxPool").taskName = named("max_pool2d");
  findIn(t, "AveragePool").taskName = named("avg_pool2d");
  // Reductions.
  const FlopsFn inputElements = [](const Graph& g, const Node& n) {
    return n.inputs.empty() ? 0.0 : double(g.value(n.inputs[0]).numElements());
  };
  OpDef& gap = op("GlobalAveragePool", P::Reduction, inputElements);
  gap.image = true;
  gap.taskName = named("global_avg_pool");
  op("ReduceMean", P::Reduction, inputElements).taskName = named("reduce_mean");
  op("ReduceSum", P::Reduction, inputElements).taskName = named("reduce_sum");
  op("ReduceMax", P::Reduction, inputElements).taskName = named("reduce_max");
  op("ReduceMin", P::Reduction, inputElements).taskName = named("reduce_min");
  op("Softmax", P::Reduction, perOutput(5));
  op("LogSoftmax", P::Reduction, perOutput(5)).taskName = named("log_softmax");
  for (const char* name : {"ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    op(name, P::Reduction, inputElements);
  OpDef& instanceNorm = op("InstanceNormalization", P::Reduction, perOutput(8));
  instanceNorm.taskName = named("instancenorm");
  op("LayerNormalization", P::Reduction, perOutput(8)).taskName = named("layernorm");
  // Element-wise: one input, or several broadcast together.
  for (const char* name : {"Relu", "Clip", "Neg", "Abs", "Reciprocal", "Cast"})
    op(name, P::ElementWise, one);
  for (const char* name : {"Sigmoid", "Tanh", "Erf", "Exp"})
    op(name, P::ElementWise, transcendental);
  op("Gelu", P::ElementWise, perOutput(8));
  for (const char* name : {"Log", "Softplus", "Elu"})
    op(name, P::ElementWise, transcendental);
  for (const char* name : {"HardSigmoid", "HardSwish", "LeakyRelu", "Not"})
    op(name, P::ElementWise, perOutput(3));
  op("Sqrt", P::ElementWise, one);
  for (const char* name : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    op(name, P::ElementWise, one).broadcasts = true;
  op("Pow", P::ElementWise, transcendental).broadcasts = true;
  // Comparisons and logic: booleans, computed as 0 and 1 inside kernels.
  for (const char* name : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Mod"})
    op(name, P::ElementWise, one).broadcasts = true;
  OpDef& where = op("Where", P::ElementWise, one);
  where.broadcasts = true;
  where.floatConstantInputs = {0};  // a constant condition is read as 0 / 1
  OpDef& bn = op("BatchNormalization", P::Broadcast, one);
  bn.image = true;
  bn.taskName = named("batchnorm");
  bn.bufferInputs = {3, 4};  // running mean and variance
  // Views: no kernel of their own.
  for (const char* name : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    op(name, P::Injective, none).view = true;
  for (const char* name : {"Identity", "Dropout"})
    op(name, P::ElementWise, none).view = true;
  // Data movement.
  for (const char* name : {"Transpose", "Concat", "Slice", "Gather", "Split", "Pad", "Expand", "Tile", "Trilu"})
    op(name, P::Injective, one);
  // Resize reads 1 (nearest) or 2^m (m-linear) inputs per output.
  op("Resize", P::Injective, perOutput(4)).loadTimeInputs = {1, 2, 3};
  // Scatters: folded when constant (Swin's attention masks), else one opaque kernel.
  op("ScatterND", P::Opaque, one);
  // Values known when the model is loaded.
  op("Constant", P::Opaque, none).constant = true;
  op("Shape", P::Opaque, none).evalFromShapes = true;
  op("Size", P::Opaque, none).evalFromShapes = true;
  op("ConstantOfShape", P::Injective, none);
  op("Range", P::Injective, one);
  attachSupportChecks(t);
  attachShapeRules(t);
  attachLoweringRules(t);
  attachConstEvalRules(t);
  return t;
}

}  // namespace

const std::vector<OpDef>& ops() {
  static const std::vector<OpDef> table = builtIn();
  return table;
}

const OpDef* findOp(const std::string& op) {
  // Passes look ops up per node (fusion's DP per candidate): by hash, not by scan.
  static const std::unordered_map<std::string, const OpDef*> index = [] {
    std::unordered_map<std::string, const OpDef*> m;
    for (const OpDef& d : ops())
      m.emplace(d.name, &d);
    return m;
  }();
  auto it = index.find(op);
  return it == index.end() ? nullptr : it->second;
}

std::string taskNameOf(const Graph& g, const Node& n) {
  const OpDef* d = findOp(n.op);
  if (d && d->taskName) return d->taskName(g, n);
  std::string s;
  for (char c : n.op)
    s += char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const OpDef& opOf(const Node& n) {
  const OpDef* d = findOp(n.op);
  if (!d) throw GraphError(n.describe() + ": unsupported op '" + n.op + "'");
  return *d;
}

}  // namespace tessel::graph
