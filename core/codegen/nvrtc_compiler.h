// Compiles CUDA C kernels to CUBIN with NVRTC, which is loaded when first
// needed (dlopen of libnvrtc.so.13): Tessel links nothing of CUDA, so a build
// or a machine without the toolkit runs and only CUDA work reports what is
// missing. Many sources are compiled at once on parallel threads; each
// kernel's resources (registers, spills, shared memory) are read back from
// ptxas' report, and kernels over the target's limits are rejected before
// anything is launched.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/cancellation.h"
#include "support/error_code.h"
#include "target/target.h"

namespace tessel::codegen {

// What one compiled kernel uses, as ptxas reports it.
struct CudaKernelResources {
  std::string name;
  int registers = 0;            // 32-bit registers per thread
  int64_t sharedBytes = 0;      // static shared memory per block
  int64_t stackBytes = 0;       // per thread
  int64_t spillStoreBytes = 0;  // per thread: registers spilled to local memory
  int64_t spillLoadBytes = 0;
};

struct CudaCompileOptions {
  std::string arch = "sm_90";      // the target's (a concrete sm_XX: NVRTC cannot detect a GPU)
  int jobs = 2;                    // sources compiled at once
  std::vector<std::string> flags;  // added to -arch, ptxas -v and -std=c++17
  support::CancelFlag cancel;      // set: sources not yet started are not compiled
};

struct CudaCompileOutput {
  support::ErrorCode error = support::ErrorCode::None;  // CompileDevice with the log when it fails
  std::string message;                                  // NVRTC's log on failure
  std::string cubin;                                    // the binary (bytes)
  std::vector<CudaKernelResources> kernels;             // one per __global__ function
  double seconds = 0;
};

// Whether NVRTC can be loaded here; otherwise *why says what is missing.
bool nvrtcAvailable(std::string* why = nullptr);
// Its version ("13.0"); throws std::runtime_error naming the library when absent.
std::string nvrtcVersion();

// One output per source, in order. Throws std::runtime_error when NVRTC
// cannot be loaded (naming the library and where it was looked for);
// a source that does not compile is an error output, never an exception.
std::vector<CudaCompileOutput> compileCuda(const std::vector<std::string>& sources, const CudaCompileOptions& options);

// Reads ptxas' verbose report (--ptxas-options=-v) into per-kernel resources.
std::vector<CudaKernelResources> parsePtxasReport(const std::string& log);

// Why a kernel of `threadsPerBlock` threads with these resources cannot be
// launched on the target (registers, shared memory, threads), or "" if it can.
std::string cudaLimitViolation(const CudaKernelResources& kernel, int64_t threadsPerBlock,
                               const target::Target& target);

}  // namespace tessel::codegen
