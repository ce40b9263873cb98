// The oneDNN executor's compute-heavy ops: convolution and matmul (with the
// bias, sum and element-wise nodes after them as post-ops) and pooling.
#include <algorithm>
#include <limits>

#include "graph/shape_utils.h"
#include "reference/onednn_program.h"

namespace tessel::reference::onednn {

namespace {

using dnnl::algorithm;
using dnnl::prop_kind;

// A Conv or pool node's window in oneDNN's terms: dilations count the
// skipped elements (0 is none).
struct Window {
  Dims strides, dilations, padL, padR;
};

Window windowOf(const Node& n, const Dims& in, const Dims& kernel) {
  if (in.size() != kernel.size() + 2) fail(n, "input rank " + std::to_string(in.size()) + " does not match the kernel");
  const graph::Window w = graph::windowOf(n, in, kernel, n.attrInt("ceil_mode", 0) != 0);
  Window out{w.stride, {}, w.padBegin, w.padEnd};
  for (int64_t d : w.dilation)
    out.dilations.push_back(d - 1);
  return out;
}

// The chain's post-ops; `scale` (Gemm's alpha) first, on the product and
// bias (the bias is divided by it beforehand).
dnnl::primitive_attr attrOf(const Chain& chain, float scale = 1.0f) {
  dnnl::post_ops ops;
  if (scale != 1.0f) ops.append_eltwise(1.0f, algorithm::eltwise_linear, scale, 0.0f);
  if (chain.sum) ops.append_sum(1.0f);
  for (const auto& [node, fns] : chain.eltwise)
    for (const Eltwise& e : fns)
      ops.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

// The memory the chain's result goes to, in layout `layout`: for a sum
// post-op it holds the added value first, which is written in place where
// nothing reads that value later, else copied (and reordered) into it.
memory destinationOf(Program& p, const Chain& chain, const memory::desc& layout) {
  if (!chain.sum) return memory(layout, p.engine());
  const memory added = p.value(chain.sumInput);
  if (added.get_desc() == layout && p.lastReadAt(chain.sumInput, *chain.sum)) return added;
  memory dst(layout, p.engine());
  p.reorderInto(added, dst);
  return dst;
}

}  // namespace

void buildConv(Program& p, const Node& n, size_t, const Chain& chain) {
  const std::string& x = n.inputs.at(0);
  const std::string& w = n.inputs.at(1);
  if (!p.isFloatConstant(w)) fail(n, "the oneDNN executor needs the weights to be a constant");
  const Dims xd = p.dimsOf(x), wd = p.dimsOf(w), yd = p.dimsOf(n.outputs.at(0));
  if (xd.size() < 3 || xd.size() > 5) fail(n, "only 1-D, 2-D and 3-D convolutions are supported");
  const Dims kernel(wd.begin() + 2, wd.end());
  const Window win = windowOf(n, xd, kernel);
  const int64_t group = n.attrInt("group", 1);
  Dims weights = wd;
  if (group != 1) {
    weights = {group, wd[0] / group, wd[1]};
    weights.insert(weights.end(), kernel.begin(), kernel.end());
  }
  const bool bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  const memory::desc biasDesc = bias ? plainDesc({wd[0]}) : memory::desc();
  dnnl::convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct, anyDesc(xd),
                                    anyDesc(weights), biasDesc, anyDesc(yd), win.strides, win.dilations, win.padL,
                                    win.padR);
  const dnnl::convolution_forward::primitive_desc pd(d, attrOf(chain), p.engine());
  Step step{n.name, dnnl::convolution_forward(pd), {}, {}};
  step.args[DNNL_ARG_SRC] = p.valueAs(x, pd.src_desc());
  step.args[DNNL_ARG_WEIGHTS] = p.constantAs(w, plainDesc(weights), pd.weights_desc());
  if (bias) step.args[DNNL_ARG_BIAS] = p.valueAs(n.inputs[2], pd.bias_desc());
  const memory dst = destinationOf(p, chain, pd.dst_desc());
  step.args[DNNL_ARG_DST] = dst;
  p.add(std::move(step));
  p.define(chain.output, dst);
}

void buildMatmul(Program& p, const Node& n, size_t, const Chain& chain) {
  const bool gemm = n.op == "Gemm";
  const std::string& a = n.inputs.at(0);
  const std::string& b = n.inputs.at(1);
  Dims ad = p.dimsOf(a), bd = p.dimsOf(b);
  const Dims yd = p.dimsOf(n.outputs.at(0));
  const bool transA = gemm && n.attrInt("transA", 0) != 0, transB = gemm && n.attrInt("transB", 0) != 0;
  const float alpha = gemm ? float(n.attrFloat("alpha", 1.0)) : 1.0f;
  if (gemm && (ad.size() != 2 || bd.size() != 2)) fail(n, "Gemm needs 2-D operands");
  if (ad.size() == 1) ad.insert(ad.begin(), 1);  // ONNX MatMul: a vector is a row (A) or column (B)
  if (bd.size() == 1) bd.push_back(1);
  const int64_t k = transA ? ad[ad.size() - 2] : ad.back(), cols = transB ? bd[bd.size() - 2] : bd.back();

  // The bias: Gemm's C (times beta) or the chain's Add of a constant row.
  std::vector<float> biasRow;
  if (gemm && n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const std::string& c = n.inputs[2];
    const Dims cd = p.isFloatConstant(c) ? p.dimsOf(c) : Dims{};
    if (cd.empty() || !(elementsOf(cd) == 1 || (elementsOf(cd) == cols && cd.back() == cols)))
      fail(n, "the oneDNN executor takes Gemm's C as a constant row of " + std::to_string(cols) + " values");
    biasRow = p.constantFloats(c);
    if (biasRow.size() == 1) biasRow.assign(size_t(cols), biasRow[0]);
    if (alpha == 0.0f) fail(n, "Gemm with alpha 0 is not supported");
    const float beta = float(n.attrFloat("beta", 1.0));
    for (float& v : biasRow)
      v *= beta / alpha;  // alpha scales the product and the bias together
  }
  if (chain.bias) {
    const Node& add = p.graph().nodes[*chain.bias];
    biasRow = p.constantFloats(add.inputs[0] == n.outputs[0] ? add.inputs[1] : add.inputs[0]);
  }

  // A constant 2-D B is the weights of a dense layer: A's leading axes are
  // rows, B is reordered once into oneDNN's layout. Otherwise both operands
  // are row-major activations of equal rank (leading axes broadcast).
  const bool dense = p.isFloatConstant(b) && bd.size() == 2;
  Dims srcDims, weightDims, dstDims;
  memory::desc srcGiven, weightsGiven;
  if (dense) {
    const int64_t rows = elementsOf(ad) / k;
    srcDims = {rows, k}, weightDims = {k, cols}, dstDims = {rows, cols};
    srcGiven = transA ? memory::desc(srcDims, memory::data_type::f32, memory::format_tag::ba) : plainDesc(srcDims);
    weightsGiven =
        transB ? memory::desc(weightDims, memory::data_type::f32, memory::format_tag::ba) : plainDesc(weightDims);
  } else {
    const size_t rank = std::max(ad.size(), bd.size());
    ad.insert(ad.begin(), int64_t(rank - ad.size()), 1);
    bd.insert(bd.begin(), int64_t(rank - bd.size()), 1);
    srcDims = ad, weightDims = bd;
    dstDims = Dims(ad.begin(), ad.end() - 1);
    dstDims.push_back(cols);
    for (size_t i = 0; i + 2 < rank; ++i)
      dstDims[i] = std::max(ad[i], bd[i]);
    srcGiven = plainDesc(srcDims), weightsGiven = plainDesc(weightDims);
  }
  if (elementsOf(dstDims) != elementsOf(yd)) fail(n, "the output's shape does not match its operands");
  Dims biasDims(dstDims.size(), 1);
  biasDims.back() = cols;
  if (!biasRow.empty() && int64_t(biasRow.size()) != cols)
    fail(n, "the bias has " + std::to_string(biasRow.size()) + " values for " + std::to_string(cols) + " columns");
  const memory::desc biasDesc = biasRow.empty() ? memory::desc() : plainDesc(biasDims);

  dnnl::matmul::desc d(srcGiven, dense ? anyDesc(weightDims) : weightsGiven, biasDesc, plainDesc(dstDims));
  const dnnl::matmul::primitive_desc pd(d, attrOf(chain, alpha), p.engine());
  Step step{n.name, dnnl::matmul(pd), {}, {}};
  step.args[DNNL_ARG_SRC] = memory(srcGiven, p.engine(), p.plainValue(a).get_data_handle());
  if (dense)
    step.args[DNNL_ARG_WEIGHTS] = p.constantAs(b, weightsGiven, pd.weights_desc());
  else
    step.args[DNNL_ARG_WEIGHTS] = memory(weightsGiven, p.engine(), p.plainValue(b).get_data_handle());
  if (!biasRow.empty()) {
    memory biasMemory(biasDesc, p.engine());
    std::copy(biasRow.begin(), biasRow.end(), static_cast<float*>(biasMemory.get_data_handle()));
    step.args[DNNL_ARG_BIAS] = biasMemory;
  }
  // The result is row-major with the output's own dims; the primitive sees it
  // with its 2-D (or broadcast) dims.
  const memory out = destinationOf(p, chain, plainDesc(p.dimsOf(chain.output)));
  step.args[DNNL_ARG_DST] = memory(plainDesc(dstDims), p.engine(), out.get_data_handle());
  p.add(std::move(step));
  p.define(chain.output, out);
}

void buildPool(Program& p, const Node& n) {
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) fail(n, "pooling indices are not supported");
  const std::string& x = n.inputs.at(0);
  const memory src = p.value(x);
  const Dims xd = p.dimsOf(x), yd = p.dimsOf(n.outputs.at(0));
  if (xd.size() < 3 || xd.size() > 5) fail(n, "only 1-D, 2-D and 3-D pooling is supported");
  const bool global = n.op == "GlobalAveragePool", isMax = n.op == "MaxPool";
  const Dims kernel = global ? Dims(xd.begin() + 2, xd.end()) : n.attrInts("kernel_shape");
  if (kernel.size() != xd.size() - 2) fail(n, "attribute 'kernel_shape' does not match the input's rank");
  Window win =
      global ? Window{Dims(kernel.size(), 1), Dims(kernel.size(), 0), Dims(kernel.size(), 0), Dims(kernel.size(), 0)}
             : windowOf(n, xd, kernel);
  const bool includePad = n.attrInt("count_include_pad", 0) != 0;
  // ceil_mode's extra windows: the right pad grows until oneDNN's output
  // extent is the graph's.
  for (size_t d = 0; d < kernel.size(); ++d) {
    const int64_t need = (yd[d + 2] - 1) * win.strides[d] + (kernel[d] - 1) * (win.dilations[d] + 1) + 1;
    const int64_t padR = need - xd[d + 2] - win.padL[d];
    if (padR > win.padR[d] && !isMax && includePad)
      fail(n, "average pooling that counts the pads, with ceil_mode windows past them, is not supported");
    win.padR[d] = std::max(win.padR[d], padR);
  }
  if (!isMax)
    for (int64_t dl : win.dilations)
      if (dl != 0) fail(n, "dilated average pooling is not supported");
  const algorithm alg = isMax        ? algorithm::pooling_max
                        : includePad ? algorithm::pooling_avg_include_padding
                                     : algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_v2_forward::desc d(prop_kind::forward_inference, alg, src.get_desc(), anyDesc(yd), win.strides, kernel,
                                   win.dilations, win.padL, win.padR);
  const dnnl::pooling_v2_forward::primitive_desc pd(d, p.engine());
  memory dst(pd.dst_desc(), p.engine());
  p.add({n.name, dnnl::pooling_v2_forward(pd), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, {}});
  p.define(n.outputs[0], dst);
}

}  // namespace tessel::reference::onednn
