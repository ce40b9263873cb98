#include "measure/cuda_driver.h"

#include <dlfcn.h>

#include <mutex>

namespace tessel::measure::cuda {

namespace {

// cuda.h's values of the codes and attributes used.
constexpr Result kStubLibrary = 34;  // CUDA_ERROR_STUB_LIBRARY
constexpr int kAttrMaxThreadsPerBlock = 1, kAttrSharedPerBlock = 8, kAttrMultiprocessors = 16, kAttrL2Bytes = 38,
              kAttrMajor = 75, kAttrMinor = 76;

struct Loaded {
  Driver api{};
  std::string error;  // empty: usable
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded out;
    void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      out.error = "no NVIDIA driver: libcuda.so.1 could not be loaded (" + std::string(dlerror()) +
                  "); CUDA kernels can be generated and compiled here, not measured";
      return out;
    }
    auto bind = [&](auto& fn, std::initializer_list<const char*> names) {
      for (const char* n : names)
        if ((fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, n)))) return;
      if (out.error.empty()) out.error = std::string("the NVIDIA driver lacks ") + *names.begin() + " (too old?)";
    };
    Driver& d = out.api;
    bind(d.init, {"cuInit"});
    bind(d.driverGetVersion, {"cuDriverGetVersion"});
    bind(d.deviceGetCount, {"cuDeviceGetCount"});
    bind(d.deviceGet, {"cuDeviceGet"});
    bind(d.deviceGetName, {"cuDeviceGetName"});
    bind(d.deviceGetAttribute, {"cuDeviceGetAttribute"});
    bind(d.deviceTotalMem, {"cuDeviceTotalMem_v2"});
    bind(d.primaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
    bind(d.primaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
    bind(d.ctxSetCurrent, {"cuCtxSetCurrent"});
    bind(d.ctxGetCurrent, {"cuCtxGetCurrent"});
    bind(d.ctxSynchronize, {"cuCtxSynchronize"});
    bind(d.moduleLoadData, {"cuModuleLoadData"});
    bind(d.moduleUnload, {"cuModuleUnload"});
    bind(d.moduleGetFunction, {"cuModuleGetFunction"});
    bind(d.memAlloc, {"cuMemAlloc_v2"});
    bind(d.memFree, {"cuMemFree_v2"});
    bind(d.memcpyHtoD, {"cuMemcpyHtoD_v2"});
    bind(d.memcpyDtoH, {"cuMemcpyDtoH_v2"});
    bind(d.memcpyDtoD, {"cuMemcpyDtoD_v2"});
    bind(d.memsetD8, {"cuMemsetD8_v2"});
    bind(d.memsetD32, {"cuMemsetD32_v2"});
    bind(d.launchKernel, {"cuLaunchKernel"});
    bind(d.eventCreate, {"cuEventCreate"});
    bind(d.eventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"});
    bind(d.eventRecord, {"cuEventRecord"});
    bind(d.eventSynchronize, {"cuEventSynchronize"});
    bind(d.eventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
    bind(d.getErrorString, {"cuGetErrorString"});
    if (!out.error.empty()) return out;
    if (const Result r = d.init(0); r != 0) {
      if (r == kStubLibrary)
        out.error = "no NVIDIA driver: libcuda.so.1 here is the CUDA toolkit's stub library, not a driver";
      else {
        const char* text = nullptr;
        d.getErrorString(r, &text);
        out.error = "the NVIDIA driver cannot start (cuInit: " + std::string(text ? text : "unknown error") +
                    ", code " + std::to_string(r) + "): is there a GPU?";
      }
    }
    return out;
  }();
  return l;
}

}  // namespace

DriverError::DriverError(const std::string& call, Result c, const std::string& message)
    : std::runtime_error(call + ": " + message + " (CUDA error " + std::to_string(c) + ")"), code(c) {}

bool DriverError::sticky() const {
  // cuda.h: illegal address 700, hardware stack error 714, illegal
  // instruction 715, misaligned address 716, invalid address space 717,
  // invalid pc 718, launch failed 719 (and launch timeout 702).
  return code == 700 || code == 702 || (code >= 714 && code <= 719);
}

void Driver::check(Result r, const char* call) const {
  if (r == 0) return;
  const char* text = nullptr;
  if (getErrorString) getErrorString(r, &text);
  throw DriverError(call, r, text ? text : "unknown error");
}

const Driver& driver() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw std::runtime_error(l.error);
  return l.api;
}

std::string unavailableReason() {
  return loaded().error;
}

std::vector<GpuInfo> gpus() {
  const Driver& d = driver();
  int count = 0;
  d.check(d.deviceGetCount(&count), "cuDeviceGetCount");
  std::vector<GpuInfo> out;
  for (int i = 0; i < count; ++i) {
    Device dev = 0;
    d.check(d.deviceGet(&dev, i), "cuDeviceGet");
    GpuInfo g;
    g.ordinal = i;
    char name[256] = {};
    d.check(d.deviceGetName(name, int(sizeof name), dev), "cuDeviceGetName");
    g.name = name;
    int l2 = 0, shared = 0;
    d.check(d.deviceGetAttribute(&g.major, kAttrMajor, dev), "cuDeviceGetAttribute");
    d.check(d.deviceGetAttribute(&g.minor, kAttrMinor, dev), "cuDeviceGetAttribute");
    d.check(d.deviceGetAttribute(&g.multiprocessors, kAttrMultiprocessors, dev), "cuDeviceGetAttribute");
    d.check(d.deviceGetAttribute(&l2, kAttrL2Bytes, dev), "cuDeviceGetAttribute");
    d.check(d.deviceGetAttribute(&g.maxThreadsPerBlock, kAttrMaxThreadsPerBlock, dev), "cuDeviceGetAttribute");
    d.check(d.deviceGetAttribute(&shared, kAttrSharedPerBlock, dev), "cuDeviceGetAttribute");
    g.l2Bytes = l2;
    g.sharedBytesPerBlock = shared;
    size_t memory = 0;
    d.check(d.deviceTotalMem(&memory, dev), "cuDeviceTotalMem");
    g.memoryBytes = int64_t(memory);
    out.push_back(g);
  }
  return out;
}

}  // namespace tessel::measure::cuda
