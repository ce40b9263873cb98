// The NVIDIA driver API, loaded when first needed (dlopen of libcuda.so.1):
// Tessel links nothing of CUDA, so it runs where there is no driver and says
// so only when CUDA work is asked for. The entry points the CUDA runner uses,
// with their errors turned into exceptions that name the call and the
// driver's message, and what the machine's GPUs are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::measure::cuda {

// Opaque driver handles and the few types of cuda.h used (CUDA 12/13 ABI).
using Result = int;  // CUresult: 0 is CUDA_SUCCESS
using Device = int;
using Context = struct CUctx_st*;
using Module = struct CUmod_st*;
using Function = struct CUfunc_st*;
using Stream = struct CUstream_st*;
using Event = struct CUevent_st*;
using DevicePtr = unsigned long long;

// A driver call that failed: which call, the driver's code and message.
struct DriverError : std::runtime_error {
  DriverError(const std::string& call, Result code, const std::string& message);
  Result code;
  // The context is lost (an illegal address, a launch failure, ...): only a
  // new process can use the GPU again.
  bool sticky() const;
};

struct Driver {
  Result (*init)(unsigned);
  Result (*driverGetVersion)(int*);
  Result (*deviceGetCount)(int*);
  Result (*deviceGet)(Device*, int);
  Result (*deviceGetName)(char*, int, Device);
  Result (*deviceGetAttribute)(int*, int, Device);
  Result (*deviceTotalMem)(size_t*, Device);
  Result (*primaryCtxRetain)(Context*, Device);
  Result (*primaryCtxRelease)(Device);
  Result (*ctxSetCurrent)(Context);
  Result (*ctxGetCurrent)(Context*);
  Result (*ctxSynchronize)();
  Result (*moduleLoadData)(Module*, const void*);
  Result (*moduleUnload)(Module);
  Result (*moduleGetFunction)(Function*, Module, const char*);
  Result (*memAlloc)(DevicePtr*, size_t);
  Result (*memFree)(DevicePtr);
  Result (*memcpyHtoD)(DevicePtr, const void*, size_t);
  Result (*memcpyDtoH)(void*, DevicePtr, size_t);
  Result (*memcpyDtoD)(DevicePtr, DevicePtr, size_t);
  Result (*memsetD8)(DevicePtr, unsigned char, size_t);
  Result (*memsetD32)(DevicePtr, unsigned, size_t);
  Result (*launchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, Stream, void**,
                         void**);
  Result (*eventCreate)(Event*, unsigned);
  Result (*eventDestroy)(Event);
  Result (*eventRecord)(Event, Stream);
  Result (*eventSynchronize)(Event);
  Result (*eventElapsedTime)(float*, Event, Event);
  Result (*getErrorString)(Result, const char**);

  // Throws DriverError for a failed call.
  void check(Result r, const char* call) const;
};

// The driver, loaded and initialised once. Throws std::runtime_error saying
// why there is none: no libcuda.so.1 (no NVIDIA driver installed), the
// toolkit's stub library in its place, or cuInit failing (no GPU).
const Driver& driver();
// The same question without an exception: "" when the driver works here.
std::string unavailableReason();

struct GpuInfo {
  int ordinal = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  int64_t l2Bytes = 0, memoryBytes = 0;
  int maxThreadsPerBlock = 0, sharedBytesPerBlock = 0;
  std::string arch() const { return "sm_" + std::to_string(major * 10 + minor); }
};
// This machine's GPUs (throws as driver() does).
std::vector<GpuInfo> gpus();

}  // namespace tessel::measure::cuda
