// Internal to tessel_baseline: what the GPU peers (cublas_baseline.cpp,
// cudnn_baseline.cpp) and their dispatcher (cuda_baselines.cpp) share: the
// GPU they run on, device memory, CUDA events, the L2 cache states and the
// kernel interface. Everything goes through the driver API of
// measure/cuda_driver.h on the current thread's primary context, the one
// cuBLAS and cuDNN use, and the default stream.
#pragma once

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "baseline/peer.h"
#include "measure/cache_state.h"
#include "measure/cuda_driver.h"

namespace tessel::baseline::detail::gpu {

namespace cuda = measure::cuda;

// GPU 0's primary context made current on this thread while the session
// lives (the thread's previous context is current again after). The context
// is retained once for the process and never released: cuBLAS's and cuDNN's
// runtime keep their state in it, which a release of the last reference
// would destroy under them. Throws std::runtime_error saying why there is no
// GPU ("no NVIDIA driver: ...").
class GpuSession {
 public:
  GpuSession();
  ~GpuSession();
  GpuSession(const GpuSession&) = delete;
  GpuSession& operator=(const GpuSession&) = delete;

  const cuda::GpuInfo& info() const;
  // Waits for everything queued on the GPU.
  void synchronize() const;

 private:
  cuda::Context previous_ = nullptr;  // the thread's current context before, restored after
};

// `bytes` bytes of device memory, freed with the object.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes);
  // A buffer holding `values`.
  static DeviceBuffer upload(const std::vector<float>& values);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  cuda::DevicePtr ptr() const { return ptr_; }
  float* floats() const { return reinterpret_cast<float*>(ptr_); }
  size_t bytes() const { return bytes_; }
  // The contents, after the work queued before is done.
  std::vector<float> download() const;
  // Queues a copy of `source` (as large as this buffer) into this one.
  void copyFrom(const DeviceBuffer& source) const;

 private:
  cuda::DevicePtr ptr_ = 0;
  size_t bytes_ = 0;
};

// Two events on the default stream around the calls being timed.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void start();
  void stop();
  // Seconds between start() and stop(), once stop() has been reached.
  double seconds();

 private:
  cuda::Event start_ = nullptr, stop_ = nullptr;
};

// One op bound to its inputs in device memory, ready to be called many
// times. The base holds the inputs (placeholder order) and the output.
class GpuKernel {
 public:
  GpuKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs);
  virtual ~GpuKernel() = default;
  GpuKernel(const GpuKernel&) = delete;
  GpuKernel& operator=(const GpuKernel&) = delete;

  // Queues one call of the op on the default stream.
  virtual void run() = 0;
  // The output of the latest run, row-major in the op's layout (NCHW).
  std::vector<float> output() const { return output_.download(); }

  const std::vector<DeviceBuffer>& inputs() const { return inputs_; }
  // Per input: a weight (constant in a model) rather than an activation.
  const std::vector<bool>& weights() const { return weights_; }
  const DeviceBuffer& outputBuffer() const { return output_; }

 protected:
  std::vector<DeviceBuffer> inputs_;
  std::vector<bool> weights_;
  DeviceBuffer output_;
};

// Puts a kernel's buffers in a cache state before each timed call, as
// Tessel's worker does on the CPU with the GPU's L2 as the shared cache:
// Cold writes a buffer of twice the L2 over it (cuMemsetD8), so every
// operand comes from device memory; Model does that, then rewrites the
// activation inputs from copies of them and clears the output, so that they
// sit in the L2 as after the previous kernel of a model, and the weights come
// from memory. Warm does nothing. Only what prepare() queues is untimed.
class CacheConditioner {
 public:
  CacheConditioner(const GpuSession& session, const GpuKernel& kernel, measure::CacheState state);
  bool active() const { return state_ != measure::CacheState::Warm; }
  // Queues the eviction (and refill) on the default stream.
  void prepare() const;

 private:
  measure::CacheState state_;
  const GpuKernel& kernel_;
  DeviceBuffer flush_;
  std::vector<DeviceBuffer> pristine_;  // per input: a copy of an activation, empty for a weight
};

// The ops each peer implements, and their factories (which throw
// std::runtime_error when the library is missing or fails).
const std::set<std::string>& cublasOps();
const std::set<std::string>& cudnnOps();
std::unique_ptr<GpuKernel> makeCublasKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs);
std::unique_ptr<GpuKernel> makeCudnnKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs);

// `value` as an int for a library's 32-bit sizes; throws std::runtime_error
// naming `library` when it does not fit.
int fitInt(int64_t value, const char* library);

}  // namespace tessel::baseline::detail::gpu
