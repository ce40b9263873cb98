// The GPU peers' device plumbing (see cuda_peer.h): session, memory, events,
// cache states.
#include <algorithm>
#include <climits>
#include <stdexcept>
#include <utility>

#include "baseline/cuda_peer.h"

namespace tessel::baseline::detail::gpu {

namespace {

// GPU 0 and its primary context, retained for the process (see GpuSession).
struct Primary {
  cuda::GpuInfo info;
  cuda::Context context = nullptr;
};

const Primary& primary() {
  static const Primary p = [] {
    const cuda::Driver& d = cuda::driver();
    const std::vector<cuda::GpuInfo> all = cuda::gpus();
    if (all.empty()) throw std::runtime_error("no NVIDIA GPU: the driver lists none");
    Primary out;
    out.info = all.front();
    cuda::Device device = 0;
    d.check(d.deviceGet(&device, out.info.ordinal), "cuDeviceGet");
    d.check(d.primaryCtxRetain(&out.context, device), "cuDevicePrimaryCtxRetain");
    return out;
  }();  // a throw leaves it to be tried again by the next session
  return p;
}

}  // namespace

int fitInt(int64_t value, const char* library) {
  if (value > INT_MAX)
    throw std::runtime_error(std::string(library) + ": a size of " + std::to_string(value) +
                             " exceeds its 32-bit sizes");
  return int(value);
}

GpuSession::GpuSession() {
  const cuda::Driver& d = cuda::driver();  // throws "no NVIDIA driver: ..."
  const cuda::Context context = primary().context;
  d.check(cuda::driver().ctxGetCurrent(&previous_), "cuCtxGetCurrent");
  d.check(d.ctxSetCurrent(context), "cuCtxSetCurrent");
}

GpuSession::~GpuSession() {
  const cuda::Driver& d = cuda::driver();
  d.ctxSynchronize();
  d.ctxSetCurrent(previous_);
}

const cuda::GpuInfo& GpuSession::info() const {
  return primary().info;
}

void GpuSession::synchronize() const {
  const cuda::Driver& d = cuda::driver();
  d.check(d.ctxSynchronize(), "cuCtxSynchronize");
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  const cuda::Driver& d = cuda::driver();
  d.check(d.memAlloc(&ptr_, bytes), "cuMemAlloc");
}

DeviceBuffer DeviceBuffer::upload(const std::vector<float>& values) {
  DeviceBuffer b(values.size() * sizeof(float));
  if (b.bytes_ == 0) return b;
  const cuda::Driver& d = cuda::driver();
  d.check(d.memcpyHtoD(b.ptr_, values.data(), b.bytes_), "cuMemcpyHtoD");
  return b;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cuda::driver().memFree(ptr_);
}

std::vector<float> DeviceBuffer::download() const {
  std::vector<float> values(bytes_ / sizeof(float));
  if (bytes_ == 0) return values;
  const cuda::Driver& d = cuda::driver();
  d.check(d.memcpyDtoH(values.data(), ptr_, bytes_), "cuMemcpyDtoH");
  return values;
}

void DeviceBuffer::copyFrom(const DeviceBuffer& source) const {
  if (bytes_ == 0) return;
  cuda::driver().check(cuda::driver().memcpyDtoD(ptr_, source.ptr_, std::min(bytes_, source.bytes_)), "cuMemcpyDtoD");
}

EventTimer::EventTimer() {
  const cuda::Driver& d = cuda::driver();
  d.check(d.eventCreate(&start_, 0), "cuEventCreate");
  if (const cuda::Result r = d.eventCreate(&stop_, 0); r != 0) {
    d.eventDestroy(start_);
    d.check(r, "cuEventCreate");
  }
}

EventTimer::~EventTimer() {
  const cuda::Driver& d = cuda::driver();
  d.eventDestroy(start_);
  d.eventDestroy(stop_);
}

void EventTimer::start() {
  const cuda::Driver& d = cuda::driver();
  d.check(d.eventRecord(start_, nullptr), "cuEventRecord");
}

void EventTimer::stop() {
  const cuda::Driver& d = cuda::driver();
  d.check(d.eventRecord(stop_, nullptr), "cuEventRecord");
}

double EventTimer::seconds() {
  const cuda::Driver& d = cuda::driver();
  d.check(d.eventSynchronize(stop_), "cuEventSynchronize");
  float ms = 0;
  d.check(d.eventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
  return double(ms) * 1e-3;
}

GpuKernel::GpuKernel(const OpSpec& spec, const std::vector<std::vector<float>>& inputs)
    : weights_(spec.weights), output_(size_t(numElements(spec.output)) * sizeof(float)) {
  for (const std::vector<float>& values : inputs)
    inputs_.push_back(DeviceBuffer::upload(values));
  // Zeros, not whatever the allocation held: a call that reads its output
  // (cuDNN's fused z = y, scaled by 0) must not meet a NaN there.
  if (output_.bytes() > 0) {
    const cuda::Driver& d = cuda::driver();
    d.check(d.memsetD8(output_.ptr(), 0, output_.bytes()), "cuMemsetD8");
  }
}

CacheConditioner::CacheConditioner(const GpuSession& session, const GpuKernel& kernel, measure::CacheState state)
    : state_(state), kernel_(kernel) {
  if (!active()) return;
  // Twice the L2, so that nothing of the kernel's survives (8 MiB where the
  // driver reports no L2 size).
  constexpr int64_t kFallbackL2Bytes = int64_t(4) << 20;
  flush_ = DeviceBuffer(size_t(2 * std::max(session.info().l2Bytes, kFallbackL2Bytes)));
  if (state_ != measure::CacheState::Model) return;
  for (size_t i = 0; i < kernel.inputs().size(); ++i) {
    pristine_.emplace_back();
    if (kernel.weights()[i]) continue;
    pristine_.back() = DeviceBuffer(kernel.inputs()[i].bytes());
    pristine_.back().copyFrom(kernel.inputs()[i]);
  }
}

void CacheConditioner::prepare() const {
  if (!active()) return;
  const cuda::Driver& d = cuda::driver();
  d.check(d.memsetD8(flush_.ptr(), 0x5a, flush_.bytes()), "cuMemsetD8");
  if (state_ != measure::CacheState::Model) return;
  for (size_t i = 0; i < pristine_.size(); ++i)
    if (pristine_[i].bytes() > 0) kernel_.inputs()[i].copyFrom(pristine_[i]);
  const DeviceBuffer& out = kernel_.outputBuffer();
  if (out.bytes() > 0) d.check(d.memsetD8(out.ptr(), 0, out.bytes()), "cuMemsetD8");
}

}  // namespace tessel::baseline::detail::gpu
