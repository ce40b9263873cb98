// Internal to tessel_baseline: what the dispatcher (baselines.cpp) and the
// three peers (onednn_baseline.cpp, openblas_baseline.cpp,
// libtorch_baseline.cpp) share. Plain C++ only, so that no vendor header
// leaks from one peer's translation unit into another.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "measure/cache_flush.h"

namespace tessel::baseline::detail {

// An operator of `tune-op`, checked by te::makeOperator, with the parameters
// the peers need spelled out.
struct OpSpec {
  std::string op;
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> inputs;  // shapes, in placeholder order
  std::vector<bool> weights;                 // per input: constant in a model (te::Op::layoutFree)
  std::vector<int64_t> output;

  // conv2d, conv2d_bias_relu and depthwise_conv2d (groups = C): input
  // [n, c, h, w], weights [k, c / groups, r, s], output [n, k, oh, ow].
  // max_pool2d / avg_pool2d / global_avg_pool: input [n, c, h, w], an r x s
  // window (r = s = kernel; global: h x w), output [n, c, oh, ow].
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0;
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
  int64_t oh = 0, ow = 0;

  // Which of the two families above it is (set by specOf from its op).
  bool conv = false, pool = false;
  bool isConv() const { return conv; }
  bool isPool() const { return pool; }
};

int64_t numElements(const std::vector<int64_t>& shape);

// The spec of `op` at `shape` (te::makeOperator checks them: throws
// std::invalid_argument as measureBaselines does). For the GPU peers
// (cuda_baselines.cpp), which share the CPU peers' decoding.
OpSpec specOf(const std::string& op, const std::vector<int64_t>& shape);

// Raised by a peer for an op it does not implement: a note, not an error.
class NotApplicable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One op bound to its inputs, ready to be called many times.
class PeerKernel {
 public:
  virtual ~PeerKernel() = default;
  // One call of the op.
  virtual void run() = 0;
  // The output of the latest run, row-major in the op's layout.
  virtual std::vector<float> output() = 0;
  // The memory a run reads and writes (inputs in the layouts it runs on,
  // weights, output), for the cache state before each timed call.
  virtual std::vector<measure::CallBuffer> buffers() const = 0;
};

// Each peer's factory; `inputs` match spec.inputs (checked by the caller).
// The kernel sets the peer's thread count to `threads` while it lives.
std::unique_ptr<PeerKernel> makeOnednnKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                                             int threads);
std::unique_ptr<PeerKernel> makeOpenblasKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                                               int threads);
std::unique_ptr<PeerKernel> makeLibtorchKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs,
                                               int threads);

// OpenBLAS keeps its own thread pool, which LibTorch's matmul also uses:
// sets its size and returns the previous one (-1 without OpenBLAS).
int setOpenblasThreads(int threads);

}  // namespace tessel::baseline::detail
