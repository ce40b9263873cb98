#include "measure/cuda_worker.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>

#include "measure/cuda_driver.h"
#include "measure/cuda_manifest.h"
#include "measure/output_check.h"
#include "measure/timing_rule.h"

namespace tessel::measure {

namespace {

using Clock = std::chrono::steady_clock;

// Guard zone on each side of every device buffer, in floats (keeps 256-byte alignment).
constexpr size_t kGuardFloats = 64;
constexpr unsigned kCanary = 0xdeadbeefu;
constexpr unsigned kNanBits = 0x7fc00000u;  // a quiet float NaN
// Modules kept loaded at once; the least recently used is unloaded first.
constexpr size_t kMaxModules = 64;

// Every buffer of one run of a program, freed when it goes (errors ignored:
// after a sticky error the driver refuses, and the process ends anyway).
class DeviceBuffers {
 public:
  DeviceBuffers(const cuda::Driver& d, const CudaManifest& m) : d_(d) {
    for (const CudaManifest::Buffer& b : m.buffers) {
      cuda::DevicePtr p = 0;
      const size_t floats = size_t(b.size) + 2 * kGuardFloats;
      d_.check(d_.memAlloc(&p, floats * sizeof(float)), "cuMemAlloc");
      base_.push_back(p);
      sizes_.push_back(size_t(b.size));
      d_.check(d_.memsetD32(p, kCanary, floats), "cuMemsetD32");
    }
    for (size_t i = 0; i < base_.size(); ++i)
      data_.push_back(base_[i] + kGuardFloats * sizeof(float));
  }
  ~DeviceBuffers() {
    for (cuda::DevicePtr p : base_)
      d_.memFree(p);
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;

  // Inputs uploaded, everything else NaN, guards intact.
  void reset(const std::vector<std::vector<float>>& inputs) {
    for (size_t i = 0; i < base_.size(); ++i) {
      d_.check(d_.memsetD32(base_[i], kCanary, sizes_[i] + 2 * kGuardFloats), "cuMemsetD32");
      if (i < inputs.size())
        d_.check(d_.memcpyHtoD(data_[i], inputs[i].data(), sizes_[i] * sizeof(float)), "cuMemcpyHtoD");
      else
        d_.check(d_.memsetD32(data_[i], kNanBits, sizes_[i]), "cuMemsetD32");
    }
  }
  std::vector<float> download(size_t i) const {
    std::vector<float> out(sizes_[i]);
    d_.check(d_.memcpyDtoH(out.data(), data_[i], out.size() * sizeof(float)), "cuMemcpyDtoH");
    return out;
  }
  // The clobbered guard element nearest buffer i (relative to its start), if any.
  std::optional<int64_t> clobbered(size_t i) const {
    std::vector<unsigned> before(kGuardFloats), after(kGuardFloats);
    d_.check(d_.memcpyDtoH(before.data(), base_[i], kGuardFloats * sizeof(float)), "cuMemcpyDtoH");
    d_.check(d_.memcpyDtoH(after.data(), data_[i] + sizes_[i] * sizeof(float), kGuardFloats * sizeof(float)),
             "cuMemcpyDtoH");
    for (size_t g = kGuardFloats; g-- > 0;)
      if (before[g] != kCanary) return int64_t(g) - int64_t(kGuardFloats);
    for (size_t g = 0; g < kGuardFloats; ++g)
      if (after[g] != kCanary) return int64_t(sizes_[i] + g);
    return std::nullopt;
  }
  size_t size(size_t i) const { return sizes_[i]; }
  // Stable addresses: the launch parameters point at these.
  const cuda::DevicePtr* data() const { return data_.data(); }

 private:
  const cuda::Driver& d_;
  std::vector<cuda::DevicePtr> base_, data_;
  std::vector<size_t> sizes_;
};

class EventPair {
 public:
  explicit EventPair(const cuda::Driver& d) : d_(d) {
    d_.check(d_.eventCreate(&start_, 0), "cuEventCreate");
    d_.check(d_.eventCreate(&stop_, 0), "cuEventCreate");
  }
  ~EventPair() {
    d_.eventDestroy(start_);
    d_.eventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  void start() { d_.check(d_.eventRecord(start_, nullptr), "cuEventRecord"); }
  // Waits for the work recorded since start() and returns its GPU time.
  double stopSeconds() {
    d_.check(d_.eventRecord(stop_, nullptr), "cuEventRecord");
    d_.check(d_.eventSynchronize(stop_), "cuEventSynchronize");
    float ms = 0;
    d_.check(d_.eventElapsedTime(&ms, start_, stop_), "cuEventElapsedTime");
    return double(ms) / 1e3;
  }

 private:
  const cuda::Driver& d_;
  cuda::Event start_ = nullptr, stop_ = nullptr;
};

int64_t mtimeNs(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec : 0;
}

}  // namespace

struct CudaWorker::Impl {
  struct LoadedModule {
    cuda::Module module = nullptr;
    int64_t mtimeNs = 0;
    uint64_t lastUse = 0;
  };

  const cuda::Driver* d = nullptr;
  cuda::GpuInfo gpu;
  cuda::Device device = 0;
  cuda::DevicePtr flush = 0;  // written over before each cold run: twice the L2
  size_t flushBytes = 0;
  unsigned char flushByte = 0;
  std::map<std::string, LoadedModule> modules;
  uint64_t clock = 0;

  ~Impl() {
    if (!d) return;
    for (auto& [path, m] : modules)
      d->moduleUnload(m.module);
    if (flush) d->memFree(flush);
    d->primaryCtxRelease(device);
  }

  // The driver, the GPU's primary context made current, the flush buffer.
  // Throws std::runtime_error naming why there is no GPU.
  void start() {
    if (d) return;
    const cuda::Driver& api = cuda::driver();
    const std::vector<cuda::GpuInfo> all = cuda::gpus();
    if (all.empty()) throw std::runtime_error("the NVIDIA driver sees no GPU");
    gpu = all.front();
    api.check(api.deviceGet(&device, gpu.ordinal), "cuDeviceGet");
    cuda::Context ctx = nullptr;
    api.check(api.primaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain");
    api.check(api.ctxSetCurrent(ctx), "cuCtxSetCurrent");
    flushBytes = size_t(std::max<int64_t>(gpu.l2Bytes, 1 << 20)) * 2;
    api.check(api.memAlloc(&flush, flushBytes), "cuMemAlloc");
    d = &api;
  }

  cuda::Module module(const std::string& path, const std::string& cubin) {
    const int64_t mtime = mtimeNs(path);
    if (auto it = modules.find(path); it != modules.end()) {
      // A program rebuilt at the same path is loaded again, never served stale.
      if (it->second.mtimeNs == mtime) {
        it->second.lastUse = ++clock;
        return it->second.module;
      }
      d->moduleUnload(it->second.module);
      modules.erase(it);
    }
    if (modules.size() >= kMaxModules) {
      auto oldest = std::min_element(modules.begin(), modules.end(),
                                     [](const auto& a, const auto& b) { return a.second.lastUse < b.second.lastUse; });
      d->moduleUnload(oldest->second.module);
      modules.erase(oldest);
    }
    cuda::Module mod = nullptr;
    d->check(d->moduleLoadData(&mod, cubin.data()), "cuModuleLoadData");
    modules[path] = {mod, mtime, ++clock};
    return mod;
  }

  void flushL2() {
    // A new value each time, so no cache can keep a line it already holds.
    d->check(d->memsetD8(flush, ++flushByte, flushBytes), "cuMemsetD8");
  }

  void measure(const protocol::Request& req, const std::vector<std::vector<float>>& inputs,
               const std::vector<std::vector<float>>* reference, protocol::Response& res);
  double timeRepeat(const protocol::Request& req, int64_t number, const std::function<void()>& run, EventPair& ev,
                    bool& longEnough);
};

namespace {

// The manifest must describe this task's buffers: its args first, sized alike.
std::string mismatch(const CudaManifest& m, const protocol::Request& req) {
  if (m.buffers.size() < req.bufferSizes.size())
    return "the program has " + std::to_string(m.buffers.size()) + " buffers, the task " +
           std::to_string(req.bufferSizes.size());
  for (size_t i = 0; i < req.bufferSizes.size(); ++i)
    if (m.buffers[i].size != req.bufferSizes[i])
      return "buffer " + std::to_string(i) + " ('" + m.buffers[i].name + "') has " + std::to_string(m.buffers[i].size) +
             " elements, the task's " + std::to_string(req.bufferSizes[i]);
  return "";
}

void fail(protocol::Response& res, ErrorCode code, std::string message) {
  res.error = code;
  res.message = std::move(message);
  res.costs.clear();
}

}  // namespace

void CudaWorker::Impl::measure(const protocol::Request& req, const std::vector<std::vector<float>>& inputs,
                               const std::vector<std::vector<float>>* reference, protocol::Response& res) {
  const CudaManifest m = readCudaManifest(req.library);
  if (const std::string why = mismatch(m, req); !why.empty())
    return fail(res, ErrorCode::Runtime, "the CUDA program does not fit the task: " + why);
  if (!req.packSymbol.empty()) return fail(res, ErrorCode::Runtime, "packed inputs are not supported on the GPU");
  const std::string cubin = readCudaCubin(req.library, m);
  start();
  if (m.arch != gpu.arch())
    return fail(res, ErrorCode::Runtime,
                "the program was compiled for " + m.arch + ", GPU " + std::to_string(gpu.ordinal) + " (" + gpu.name +
                    ") is " + gpu.arch());
  const cuda::Module mod = module(req.library, cubin);
  std::vector<cuda::Function> fns(m.kernels.size());
  for (size_t k = 0; k < m.kernels.size(); ++k)
    d->check(d->moduleGetFunction(&fns[k], mod, m.kernels[k].name.c_str()), "cuModuleGetFunction");

  DeviceBuffers bufs(*d, m);
  // Per kernel, pointers to its arguments' device addresses (what cuLaunchKernel takes).
  std::vector<std::vector<void*>> params(m.kernels.size());
  for (size_t k = 0; k < m.kernels.size(); ++k)
    for (size_t p : m.kernels[k].params)
      params[k].push_back(const_cast<cuda::DevicePtr*>(bufs.data() + p));
  const std::function<void()> run = [&] {
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      const CudaManifest::Kernel& kn = m.kernels[k];
      d->check(d->launchKernel(fns[k], unsigned(kn.grid[0]), unsigned(kn.grid[1]), unsigned(kn.grid[2]),
                               unsigned(kn.block[0]), unsigned(kn.block[1]), unsigned(kn.block[2]), 0, nullptr,
                               params[k].data(), nullptr),
               "cuLaunchKernel");
    }
  };

  // Correctness first: a wrong program's time must never count.
  bufs.reset(inputs);
  run();
  d->check(d->ctxSynchronize(), "cuCtxSynchronize");
  const size_t numArgs = req.bufferSizes.size();
  for (size_t a = 0; a < numArgs; ++a)
    if (const std::optional<int64_t> at = bufs.clobbered(a))
      return fail(
          res, ErrorCode::Runtime,
          "kernel wrote out of bounds of " +
              (a < req.numInputs ? "input " + std::to_string(a) : "output " + std::to_string(a - req.numInputs)) +
              " (element " + std::to_string(*at) + " of a buffer of " + std::to_string(bufs.size(a)) + ")");
  std::vector<std::vector<float>> outputs;
  for (size_t a = req.numInputs; a < numArgs; ++a)
    outputs.push_back(bufs.download(a));
  const std::vector<std::span<const float>> views(outputs.begin(), outputs.end());
  const OutputCheck check = checkOutputs(views, reference, req.tolerance);
  res.maxAbsError = check.maxAbsError;
  if (!check.ok) return fail(res, ErrorCode::WrongAnswer, check.message);

  for (int i = 0; i < req.warmup; ++i)
    run();
  d->check(d->ctxSynchronize(), "cuCtxSynchronize");
  EventPair ev(*d);
  const TimingRule rule{req.warmup, req.repeats, req.minRepeatSeconds};
  const std::optional<std::vector<double>> costs =
      timeRepeats(rule, maxNumber(req.cacheState, TimedOn::Gpu), [&](int64_t number) -> std::optional<RepeatTime> {
        RepeatTime t;
        t.seconds = timeRepeat(req, number, run, ev, t.longEnough);
        return t;
      });
  res.costs.insert(res.costs.end(), costs->begin(), costs->end());  // (a failed launch throws)
}

// GPU seconds of `number` runs: back to back when warm, else each after an
// L2 flush and timed alone (longEnough: runs and flushes lasted minRepeatSeconds).
double CudaWorker::Impl::timeRepeat(const protocol::Request& req, int64_t number, const std::function<void()>& run,
                                    EventPair& ev, bool& longEnough) {
  if (req.cacheState == CacheState::Warm) {
    ev.start();
    for (int64_t i = 0; i < number; ++i)
      run();
    return ev.stopSeconds();
  }
  double seconds = 0;
  const auto start = Clock::now();
  for (int64_t i = 0; i < number; ++i) {
    flushL2();
    ev.start();
    run();
    seconds += ev.stopSeconds();
  }
  longEnough = std::chrono::duration<double>(Clock::now() - start).count() >= req.minRepeatSeconds;
  return seconds;
}

CudaWorker::CudaWorker() : impl_(std::make_unique<Impl>()) {}

CudaWorker::~CudaWorker() = default;

protocol::Response CudaWorker::measure(const protocol::Request& req, const std::vector<std::vector<float>>& inputs,
                                       const std::vector<std::vector<float>>* reference) {
  protocol::Response res;
  try {
    impl_->measure(req, inputs, reference, res);
  } catch (const cuda::DriverError& e) {
    fail(res, ErrorCode::Runtime, e.what());
    // The context is lost: this process cannot use the GPU again.
    res.workerExits = e.sticky();
  } catch (const std::bad_alloc&) {
    fail(res, ErrorCode::Runtime, "out of host memory while measuring on the GPU");
  } catch (const std::exception& e) {
    fail(res, ErrorCode::Runtime, e.what());
  }
  return res;
}

}  // namespace tessel::measure
