// GPU baselines for `tune-op --compare`: the same operator run by cuBLAS and
// cuDNN on this machine's first NVIDIA GPU, the peers of Tessel's CUDA
// kernels as oneDNN, OpenBLAS and LibTorch are of its CPU ones
// (baselines.h). Nothing of CUDA is linked: the driver (measure/cuda_driver.h),
// libcublas.so.13 and libcudnn.so.9 are loaded at run time, and where one is
// missing the peer's note says which and why.
//
// Timing follows baselines.h's rule, with CUDA events on the default stream
// around the calls: one warm-up call, then 3 repeats; each repeat calls the
// op `number` times, `number` doubling from 1 until a repeat lasts at least
// 20 ms; the cost is the median over the repeats of time / number. Unless
// the cache state is Warm, each call is timed alone, after the GPU's L2 was
// put in that state (a write over twice the L2; under Model the activations
// and output are then brought back into it), and a repeat is long enough
// once calls and evictions together last 20 ms. A measurement whose repeats
// spread is taken again, and flagged when it stays disturbed.
//
// What each peer times, once its operands are in device memory (FP32
// throughout, no TF32):
// - cuBLAS (matmul, batch_matmul, dense): one cublasSgemm_v2, one
//   cublasSgemmStridedBatched for batch_matmul; dense is two cublasSgemm_v2
//   calls, as at::addmm does it: the bias broadcast into the output (a rank-1
//   product with a column of ones), then the product accumulated onto it.
// - cuDNN (conv2d, conv2d_bias_relu, depthwise_conv2d; NCHW, KCRS weights):
//   one cudnnConvolutionForward with the fastest FP32 algorithm of
//   cudnnFindConvolutionForwardAlgorithm (its workspace allocated before, not
//   timed); for conv2d_bias_relu one fused
//   cudnnConvolutionBiasActivationForward (relu(conv(x) + bias)).
// Every other op is "not applicable to OP" for that peer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/cache_state.h"

namespace tessel::baseline {

struct CudaBaselineResult {
  // Seconds per call (median of the repeats); empty when that peer did not
  // run (see notes).
  std::optional<double> cublasSeconds, cudnnSeconds;
  // Peer -> seconds per call of every repeat that gave its time.
  std::map<std::string, std::vector<double>> repeats;
  // Peer -> why its time is not to be trusted (see baselines.h).
  std::map<std::string, std::string> disturbed;
  // Peer name ("cublas", "cudnn") -> why it has no time: not applicable to
  // the op, no NVIDIA driver or GPU, its library missing, or the error it
  // raised (a wrong output included).
  std::map<std::string, std::string> notes;
  // The GPU the peers ran on (cuDeviceGetName); empty when none was reached.
  std::string gpu;
};

// The GPU peer names, in the order measureCudaBaselines runs them.
const std::vector<std::string>& cudaPeerNames();
// Whether `peer` implements `op` (false for an unknown peer).
bool cudaPeerApplies(const std::string& peer, const std::string& op);
// Why `peer` cannot run on this machine ("no NVIDIA driver: ...", "cuBLAS:
// libcublas.so.13 could not be loaded (...)", "unknown GPU peer ..."); ""
// when it can.
std::string cudaPeerUnavailableReason(const std::string& peer);

// Measures every GPU peer on `op` at `shape`, exactly as `tessel tune-op`
// takes them (see te/operators.h), on the CPU peers' uniform random inputs
// in [-1, 1), with each timed call first having the L2 put in `cacheState`.
// Throws std::invalid_argument for an unknown op or a bad shape, as
// measureBaselines does; every other failure (no driver, a missing library,
// an op the peer does not implement, an error or a NaN or infinite output
// of its checked first call) becomes that peer's note.
CudaBaselineResult measureCudaBaselines(const std::string& op, const std::vector<int64_t>& shape,
                                        measure::CacheState cacheState = measure::CacheState::Warm);

// Runs `op` once with GPU `peer` on the given inputs (row-major, in the order
// of baselineInputShapes) and returns the output, row-major in the op's
// layout (NCHW for convolutions). For checking the peers against a
// reference. Throws std::invalid_argument for an unknown peer, op, bad shape
// or inputs of the wrong count or size, std::runtime_error when the peer is
// not applicable to the op, cannot run here (the note's text), or fails.
std::vector<float> runCudaBaselineOnce(const std::string& peer, const std::string& op,
                                       const std::vector<int64_t>& shape,
                                       const std::vector<std::vector<float>>& inputs);

}  // namespace tessel::baseline
