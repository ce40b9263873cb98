// The operator library: compute definitions of the ops Tessel tunes, both as
// building blocks (for graph tasks) and as whole tasks from `tune-op` shapes.
#pragma once

#include <string>
#include <vector>

#include "te/compute_dag.h"

namespace tessel::te {

// Storage order of image tensors. NHWC (weights RSCK, "HWIO") puts the
// channels innermost, so output channels vectorise with contiguous loads: the
// layout Ansor tunes convolutions in on CPUs. NCHW (weights KCRS) is ONNX's.
enum class Layout { NCHW, NHWC };
const char* layoutName(Layout l);
// "nchw" or "nhwc"; throws std::invalid_argument otherwise.
Layout parseLayout(const std::string& name);

struct Conv2dParams {
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
  Layout layout = Layout::NCHW;
};

Tensor matmul(DagBuilder& b, const Tensor& a, const Tensor& w, const std::string& name = "C");
Tensor batchMatmul(DagBuilder& b, const Tensor& a, const Tensor& w, const std::string& name = "C");
// x[M,K] times w[N,K] transposed, as in a fully connected layer.
Tensor dense(DagBuilder& b, const Tensor& x, const Tensor& w, const std::string& name = "dense");
Tensor conv2d(DagBuilder& b, const Tensor& x, const Tensor& w, const Conv2dParams& p, const std::string& name = "conv");
Tensor maxPool2d(DagBuilder& b, const Tensor& x, int64_t kernel, int64_t stride, int64_t pad,
                 Layout layout = Layout::NCHW);
Tensor avgPool2d(DagBuilder& b, const Tensor& x, int64_t kernel, int64_t stride, int64_t pad,
                 Layout layout = Layout::NCHW);
Tensor globalAvgPool(DagBuilder& b, const Tensor& x, Layout layout = Layout::NCHW);
Tensor relu(DagBuilder& b, const Tensor& x, const std::string& name = "relu");
Tensor gelu(DagBuilder& b, const Tensor& x, const std::string& name = "gelu");
Tensor add(DagBuilder& b, const Tensor& x, const Tensor& y, const std::string& name = "add");
Tensor mul(DagBuilder& b, const Tensor& x, const Tensor& y, const std::string& name = "mul");
// Adds bias[c] along axis `axis` of x.
Tensor biasAdd(DagBuilder& b, const Tensor& x, const Tensor& bias, size_t axis, const std::string& name = "bias_add");
// Over the last axis.
Tensor softmax(DagBuilder& b, const Tensor& x);
Tensor layerNorm(DagBuilder& b, const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5);

// The ops `tune-op` accepts, with the meaning of their shape lists.
struct OpSignature {
  std::string name;
  std::string shapeHelp;
};
const std::vector<OpSignature>& tunableOps();

// Builds the task of `op` at `shape`; throws std::invalid_argument with a
// message naming the problem for an unknown op or a bad shape. Shapes are
// always given in NCHW terms; `layout` only changes how image ops store them.
ComputeDAG makeOperator(const std::string& op, const std::vector<int64_t>& shape, Layout layout = Layout::NCHW);
// Whether `layout` changes op's definition (convolutions and pools).
bool hasImageLayout(const std::string& op);

}  // namespace tessel::te
