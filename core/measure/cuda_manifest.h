// A built CUDA program as the GPU runner loads it: a launch manifest (JSON)
// beside its CUBIN. The manifest lists the buffers to allocate (the task's
// inputs and outputs, then the temporaries one kernel hands to the next) and
// the kernels in launch order with their grid, block and parameters (indices
// into the buffers), and what the compiler reported for each. Written by
// CudaProgramBuilder, read and checked by the worker's GPU half: a manifest
// is input from a file, so every field is validated before anything launches.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessel::measure {

// The format's first field, checked by whoever reads one.
inline constexpr const char* kCudaManifestFormat = "tessel-cuda-program 1";

struct CudaManifest {
  struct Buffer {
    std::string name;
    int64_t size = 0;  // float32 elements
  };
  struct Kernel {
    std::string name;                // the __global__ function's symbol in the CUBIN
    std::array<int64_t, 3> grid{};   // blocks (x, y, z)
    std::array<int64_t, 3> block{};  // threads per block (x, y, z)
    int64_t sharedBytes = 0;         // static __shared__ bytes per block
    std::vector<size_t> params;      // indices into buffers, in argument order
    int registers = 0;               // per thread, from ptxas
    int64_t spillBytes = 0;          // local-memory spill stores and loads
  };
  std::string arch;   // sm_XX it was compiled for
  std::string cubin;  // the CUBIN's file name, relative to the manifest's folder
  std::vector<Buffer> buffers;
  std::vector<Kernel> kernels;
};

struct CudaManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Writes `m` to `path` (the CUBIN is written by the caller).
void writeCudaManifest(const std::string& path, const CudaManifest& m);
// Reads and validates the manifest at `path`: format, dimensions in range,
// parameters naming existing buffers. Throws CudaManifestError naming the file
// and the problem.
CudaManifest readCudaManifest(const std::string& path);
// The CUBIN's bytes (its path resolved against the manifest's folder).
std::string readCudaCubin(const std::string& manifestPath, const CudaManifest& m);

}  // namespace tessel::measure
