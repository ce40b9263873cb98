// The oneDNN executor's other ops: element-wise functions and binary ops,
// softmax, layer normalisation, reductions, and data movement (views,
// transposes as reorders, concatenation, and Gather on the host, which
// oneDNN has no primitive for).
#include <algorithm>
#include <cstring>
#include <limits>

#include "graph/shape_utils.h"
#include "reference/onednn_program.h"

namespace tessel::reference::onednn {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

constexpr float kHuge = std::numeric_limits<float>::max();

// The single value of a one-element float constant.
std::optional<float> scalarConstant(const Program& p, const std::string& name) {
  if (name.empty() || !p.isConstant(name) || elementsOf(p.dimsOf(name)) != 1) return std::nullopt;
  return p.constantFloats(name).at(0);
}

// Add/Sub/Mul/Div/Pow with one scalar constant operand, as eltwise functions
// of the other operand.
std::optional<std::vector<Eltwise>> scalarArithmetic(const Program& p, const Node& n) {
  if (n.inputs.size() != 2) return std::nullopt;
  const std::optional<float> second = scalarConstant(p, n.inputs[1]);
  const std::optional<float> first = second ? std::nullopt : scalarConstant(p, n.inputs[0]);
  if (!first && !second) return std::nullopt;
  const float c = second ? *second : *first;
  const std::string& op = n.op;
  if (op == "Add") return std::vector<Eltwise>{{algorithm::eltwise_linear, 1.0f, c}};
  if (op == "Mul") return std::vector<Eltwise>{{algorithm::eltwise_linear, c, 0.0f}};
  if (op == "Sub")
    return std::vector<Eltwise>{second ? Eltwise{algorithm::eltwise_linear, 1.0f, -c}
                                       : Eltwise{algorithm::eltwise_linear, -1.0f, c}};
  if (op == "Div")
    return std::vector<Eltwise>{second ? Eltwise{algorithm::eltwise_linear, 1.0f / c, 0.0f}
                                       : Eltwise{algorithm::eltwise_pow, c, -1.0f}};
  if (op == "Pow" && second) return std::vector<Eltwise>{{algorithm::eltwise_pow, 1.0f, c}};
  return std::nullopt;
}

// Clip's bounds: attributes (older opsets) or constant inputs.
std::optional<std::vector<Eltwise>> clipOf(const Program& p, const Node& n) {
  float lo = n.has("min") ? float(n.attrFloat("min", 0)) : -kHuge;
  float hi = n.has("max") ? float(n.attrFloat("max", 0)) : kHuge;
  for (size_t i : {size_t(1), size_t(2)}) {
    if (i >= n.inputs.size() || n.inputs[i].empty()) continue;
    const std::optional<float> bound = scalarConstant(p, n.inputs[i]);
    if (!bound) return std::nullopt;  // a bound computed at run time
    (i == 1 ? lo : hi) = *bound;
  }
  return std::vector<Eltwise>{{algorithm::eltwise_clip, lo, hi}};
}

// A view of `m`'s buffer (row-major) with `dims`.
memory viewAs(Program& p, const memory& m, const Dims& dims) {
  return memory(plainDesc(dims), p.engine(), m.get_data_handle());
}

// `dims` with leading 1s up to `rank` axes.
Dims broadcastTo(Dims dims, size_t rank) {
  dims.insert(dims.begin(), int64_t(rank - std::min(rank, dims.size())), 1);
  return dims;
}

int64_t axisOf(const Node& n, int64_t axis, size_t rank) {
  return graph::normaliseAxis(n, axis, int64_t(rank));
}

}  // namespace

std::optional<std::vector<Eltwise>> eltwiseOf(const Program& p, const Node& n) {
  const std::string& op = n.op;
  using A = algorithm;
  static const std::map<std::string, A> plain = {{"Relu", A::eltwise_relu},        {"Tanh", A::eltwise_tanh},
                                                 {"Sigmoid", A::eltwise_logistic}, {"Exp", A::eltwise_exp},
                                                 {"Log", A::eltwise_log},          {"Sqrt", A::eltwise_sqrt},
                                                 {"Abs", A::eltwise_abs},          {"Elu", A::eltwise_elu},
                                                 {"LeakyRelu", A::eltwise_relu},   {"Softplus", A::eltwise_soft_relu}};
  if (auto it = plain.find(op); it != plain.end()) {
    float alpha = 0;
    if (op == "Elu") alpha = float(n.attrFloat("alpha", 1.0));
    if (op == "LeakyRelu") alpha = float(n.attrFloat("alpha", 0.01));
    if (op == "Softplus") alpha = 1.0f;  // oneDNN 3's soft_relu scale; 2.x ignores it
    return std::vector<Eltwise>{{it->second, alpha, 0.0f}};
  }
  if (op == "Neg") return std::vector<Eltwise>{{A::eltwise_linear, -1.0f, 0.0f}};
  if (op == "Reciprocal") return std::vector<Eltwise>{{A::eltwise_pow, 1.0f, -1.0f}};
  if (op == "HardSwish") return std::vector<Eltwise>{{A::eltwise_hardswish, 1.0f / 6, 0.5f}};
  if (op == "HardSigmoid")  // oneDNN 2 has no hardsigmoid: clip(alpha x + beta, 0, 1)
    return std::vector<Eltwise>{{A::eltwise_linear, float(n.attrFloat("alpha", 0.2)), float(n.attrFloat("beta", 0.5))},
                                {A::eltwise_clip, 0.0f, 1.0f}};
  if (op == "Gelu") {
    const std::string approximate = n.attrString("approximate", "none");
    if (approximate == "none") return std::vector<Eltwise>{{A::eltwise_gelu_erf, 0.0f, 0.0f}};
    if (approximate == "tanh") return std::vector<Eltwise>{{A::eltwise_gelu_tanh, 0.0f, 0.0f}};
    return std::nullopt;
  }
  if (op == "Clip") return clipOf(p, n);
  return scalarArithmetic(p, n);
}

void buildEltwise(Program& p, const Node& n, const std::vector<Eltwise>& fns) {
  // The non-constant operand (Add/Mul may hold the scalar first).
  const std::string& x = n.inputs.size() > 1 && p.isConstant(n.inputs[0]) ? n.inputs[1] : n.inputs[0];
  const Dims yd = p.dimsOf(n.outputs.at(0));
  if (elementsOf(yd) != elementsOf(p.dimsOf(x))) fail(n, "a scalar operand that broadcasts the other is not supported");
  // Blocked layouts stay blocked when the shape does not change.
  memory src = yd == p.dimsOf(x) ? p.value(x) : viewAs(p, p.plainValue(x), yd);
  memory dst(src.get_desc(), p.engine());
  for (const Eltwise& e : fns) {
    dnnl::eltwise_forward::desc d(prop_kind::forward_inference, e.alg, src.get_desc(), e.alpha, e.beta);
    const dnnl::eltwise_forward::primitive_desc pd(d, p.engine());
    p.add({n.name, dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, {}});
    src = dst;  // the next function runs in place
  }
  p.define(n.outputs[0], dst);
}

void buildBinary(Program& p, const Node& n) {
  static const std::map<std::string, algorithm> algs = {{"Add", algorithm::binary_add}, {"Sub", algorithm::binary_sub},
                                                        {"Mul", algorithm::binary_mul}, {"Div", algorithm::binary_div},
                                                        {"Max", algorithm::binary_max}, {"Min", algorithm::binary_min}};
  const algorithm alg = algs.at(n.op);
  if (n.inputs.size() != 2) fail(n, "the oneDNN executor runs " + n.op + " on two operands");
  const Dims yd = p.dimsOf(n.outputs.at(0));
  std::string a = n.inputs[0], b = n.inputs[1];
  if (broadcastTo(p.dimsOf(a), yd.size()) != yd) {
    if (n.op == "Sub" || n.op == "Div") fail(n, "a first operand that broadcasts to the second is not supported");
    std::swap(a, b);
    if (broadcastTo(p.dimsOf(a), yd.size()) != yd) fail(n, "operands that both broadcast are not supported");
  }
  memory srcA = p.value(a), srcB = p.value(b);
  // Equal shapes in one layout (blocked ones too) stay as they are; otherwise
  // both operands are row-major, the second broadcast.
  if (!(p.dimsOf(a) == p.dimsOf(b) && srcA.get_desc() == srcB.get_desc())) {
    srcA = viewAs(p, p.plainValue(a), yd);
    srcB = viewAs(p, p.plainValue(b), broadcastTo(p.dimsOf(b), yd.size()));
  }
  dnnl::binary::desc d(alg, srcA.get_desc(), srcB.get_desc(), srcA.get_desc());
  const dnnl::binary::primitive_desc pd(d, p.engine());
  memory dst(pd.dst_desc(), p.engine());
  p.add({n.name, dnnl::binary(pd), {{DNNL_ARG_SRC_0, srcA}, {DNNL_ARG_SRC_1, srcB}, {DNNL_ARG_DST, dst}}, {}});
  p.define(n.outputs[0], dst);
}

void buildSoftmax(Program& p, const Node& n) {
  const std::string& x = n.inputs.at(0);
  const Dims xd = p.dimsOf(x);
  const int axis = int(axisOf(n, n.attrInt("axis", -1), xd.size()));
  const memory src = p.plainValue(x);
  dnnl::softmax_forward::desc d(prop_kind::forward_inference, src.get_desc(), axis);
  const dnnl::softmax_forward::primitive_desc pd(d, p.engine());
  memory dst(pd.dst_desc(), p.engine());
  p.add({n.name, dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, {}});
  p.define(n.outputs[0], dst);
}

void buildLayerNorm(Program& p, const Node& n) {
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (!n.outputs[o].empty()) fail(n, "the mean and inverse deviation outputs are not supported");
  const std::string& x = n.inputs.at(0);
  const Dims xd = p.dimsOf(x);
  const int64_t axis = axisOf(n, n.attrInt("axis", -1), xd.size());
  const int64_t cols = elementsOf(Dims(xd.begin() + axis, xd.end())), rows = elementsOf(xd) / cols;
  const memory src = viewAs(p, p.plainValue(x), {rows, cols});
  const bool scale = n.inputs.size() > 1 && !n.inputs[1].empty();
  const bool shift = n.inputs.size() > 2 && !n.inputs[2].empty();
  auto flags = dnnl::normalization_flags::none;
  if (scale) flags |= dnnl::normalization_flags::use_scale;
  if (shift) flags |= dnnl::normalization_flags::use_shift;
  dnnl::layer_normalization_forward::desc d(prop_kind::forward_inference, src.get_desc(),
                                            float(n.attrFloat("epsilon", 1e-5)), flags);
  const dnnl::layer_normalization_forward::primitive_desc pd(d, p.engine());
  Step step{n.name, dnnl::layer_normalization_forward(pd), {{DNNL_ARG_SRC, src}}, {}};
  for (const auto& [present, input, arg] :
       {std::tuple{scale, size_t(1), DNNL_ARG_SCALE}, std::tuple{shift, size_t(2), DNNL_ARG_SHIFT}}) {
    if (!present) continue;
    if (elementsOf(p.dimsOf(n.inputs[input])) != cols)
      fail(n, "a scale or bias that broadcasts over the normalized axes is not supported");
    step.args[arg] = viewAs(p, p.plainValue(n.inputs[input]), {cols});
  }
  const memory out(plainDesc(xd), p.engine());
  step.args[DNNL_ARG_DST] = viewAs(p, out, {rows, cols});
  p.add(std::move(step));
  p.define(n.outputs[0], out);
}

void buildReduce(Program& p, const Node& n) {
  static const std::map<std::string, algorithm> algs = {{"ReduceMean", algorithm::reduction_mean},
                                                        {"ReduceSum", algorithm::reduction_sum},
                                                        {"ReduceMax", algorithm::reduction_max},
                                                        {"ReduceMin", algorithm::reduction_min}};
  auto alg = algs.find(n.op);
  if (alg == algs.end()) fail(n, "op '" + n.op + "' is not supported by the oneDNN executor");
  const std::string& x = n.inputs.at(0);
  const Dims xd = p.dimsOf(x);
  Dims axes = n.attrInts("axes");
  if (!n.has("axes") && n.inputs.size() > 1 && !n.inputs[1].empty()) axes = p.constantInts(n.inputs[1]);
  if (axes.empty() && n.attrInt("noop_with_empty_axes", 0) != 0) {
    p.define(n.outputs.at(0), p.viewOf(x, p.dimsOf(n.outputs[0])));
    return;
  }
  Dims kept = xd;
  for (size_t d = 0; d < xd.size(); ++d)
    if (axes.empty()) kept[d] = 1;
  for (int64_t a : axes)
    kept[size_t(axisOf(n, a, xd.size()))] = 1;
  const memory src = p.plainValue(x);
  dnnl::reduction::desc d(alg->second, src.get_desc(), plainDesc(kept), 0.0f, 0.0f);
  const dnnl::reduction::primitive_desc pd(d, p.engine());
  const memory out(plainDesc(p.dimsOf(n.outputs.at(0))), p.engine());
  p.add({n.name, dnnl::reduction(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, viewAs(p, out, kept)}}, {}});
  p.define(n.outputs[0], out);
}

void buildView(Program& p, const Node& n) {
  for (size_t o = 1; o < n.outputs.size(); ++o)
    if (!n.outputs[o].empty()) fail(n, "only the first output is supported");
  p.define(n.outputs.at(0), p.viewOf(n.inputs.at(0), p.dimsOf(n.outputs[0])));
}

void buildTranspose(Program& p, const Node& n) {
  const std::string& x = n.inputs.at(0);
  const Dims xd = p.dimsOf(x), yd = p.dimsOf(n.outputs.at(0));
  Dims perm = n.attrInts("perm");
  if (perm.empty())
    for (size_t d = xd.size(); d-- > 0;)
      perm.push_back(int64_t(d));
  if (perm.size() != xd.size()) fail(n, "attribute 'perm' does not match the input's rank");
  // The input read through permuted strides, reordered into a row-major output.
  Dims strides(xd.size(), 1), permuted;
  for (size_t d = xd.size() - 1; d-- > 0;)
    strides[d] = strides[d + 1] * xd[d + 1];
  for (int64_t axis : perm)
    permuted.push_back(strides.at(size_t(axis)));
  const memory src(memory::desc(yd, memory::data_type::f32, permuted), p.engine(), p.plainValue(x).get_data_handle());
  const memory dst(plainDesc(yd), p.engine());
  p.add({n.name, dnnl::reorder(src, dst), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}}, {}});
  p.define(n.outputs[0], dst);
}

void buildConcat(Program& p, const Node& n) {
  const Dims yd = p.dimsOf(n.outputs.at(0));
  const int axis = int(axisOf(n, n.attrInt("axis", 0), yd.size()));
  std::vector<memory::desc> descs;
  Step step{n.name, {}, {}, {}};
  for (const std::string& in : n.inputs) {
    if (in.empty() || elementsOf(p.dimsOf(in)) == 0) continue;
    const memory m = p.plainValue(in);
    step.args[DNNL_ARG_MULTIPLE_SRC + int(descs.size())] = m;
    descs.push_back(m.get_desc());
  }
  const dnnl::concat::primitive_desc pd(plainDesc(yd), axis, descs, p.engine());
  const memory dst(pd.dst_desc(), p.engine());
  step.primitive = dnnl::concat(pd);
  step.args[DNNL_ARG_DST] = dst;
  p.add(std::move(step));
  p.define(n.outputs[0], dst);
}

void buildGather(Program& p, const Node& n) {
  const std::string& data = n.inputs.at(0);
  const std::string& indices = n.inputs.at(1);
  if (!p.isConstant(indices)) fail(n, "the oneDNN executor needs Gather's indices to be a constant");
  const Dims xd = p.dimsOf(data);
  const int64_t axis = axisOf(n, n.attrInt("axis", 0), xd.size());
  std::vector<int64_t> rows = p.constantInts(indices);
  for (int64_t& r : rows) {
    if (r < -xd[size_t(axis)] || r >= xd[size_t(axis)]) fail(n, "index " + std::to_string(r) + " is out of range");
    if (r < 0) r += xd[size_t(axis)];
  }
  const int64_t outer = elementsOf(Dims(xd.begin(), xd.begin() + axis));
  const int64_t inner = elementsOf(Dims(xd.begin() + axis + 1, xd.end()));
  const int64_t extent = xd[size_t(axis)];
  const memory src = p.plainValue(data);
  const memory dst(plainDesc(p.dimsOf(n.outputs.at(0))), p.engine());
  if (elementsOf(p.dimsOf(n.outputs[0])) != outer * int64_t(rows.size()) * inner)
    fail(n, "the output's shape does not match the data and indices");
  // oneDNN has no gather primitive: rows are copied on the host, as a
  // framework's own kernel would beside the library's.
  p.add({n.name, {}, {}, [src, dst, rows, outer, inner, extent] {
           const float* from = static_cast<const float*>(src.get_data_handle());
           float* to = static_cast<float*>(dst.get_data_handle());
           for (int64_t o = 0; o < outer; ++o)
             for (int64_t r : rows) {
               std::memcpy(to, from + (o * extent + r) * inner, size_t(inner) * sizeof(float));
               to += inner;
             }
         }});
  p.define(n.outputs[0], dst);
}

}  // namespace tessel::reference::onednn
