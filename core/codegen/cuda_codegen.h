// CUDA C code generation: a lowered program (lower/loop_nest.h) becomes
// __global__ kernels and a host function that launches them in order.
//
// The split (as TVM's host/device split): every root-level statement of the
// program is one kernel, launched after the one before it on the same
// stream, so what one kernel writes the next can read. Inside a kernel,
// blockIdx/threadIdx loops become index variables, vthread loops stay
// (unrolled) serial loops of each thread, Shared allocations are __shared__
// arrays, and other allocations are per-thread arrays (registers or local
// memory). A root-level statement without bindings is a kernel of one block
// of one thread.
//
// The calling convention of the host function `name` (program.name):
//   extern "C" int name(float* const* buffers);
// buffers[i] is a device pointer to program.buffers[i]: the function's args
// (inputs then outputs, as lower::LoweredFunc::args) then its temps (the
// intermediate tensors that one kernel writes and a later one reads), each
// of buffer.size floats. The caller allocates all of them, temps included.
// An input listed in f.packed is passed already packed (emitCppPack packs it
// on the host). It returns the launch status (cudaGetLastError, 0 = fine).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "lower/loop_nest.h"

namespace tessel::codegen {

// A program this generator cannot express (e.g. a cross-thread reduction
// over threadIdx.y).
struct CudaCodegenError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CudaDim {
  int64_t x = 1, y = 1, z = 1;
  int64_t count() const { return x * y * z; }
};

struct CudaKernel {
  std::string name;                   // its extern "C" symbol
  std::string source;                 // the __global__ function (needs cudaPrelude())
  CudaDim grid;                       // blocks
  CudaDim block;                      // threads per block
  int64_t sharedBytes = 0;            // static __shared__ memory per block, bytes
  std::vector<size_t> params;         // its arguments, in order: indices into CudaProgram::buffers
  bool crossThreadReduction = false;  // block-wide shuffles (block.x a multiple of 32, y = z = 1)
};

struct CudaProgram {
  std::string name;                    // the host function's symbol
  std::vector<lower::Buffer> buffers;  // f.args then f.temps: the host function's `buffers`
  std::vector<CudaKernel> kernels;     // in launch order
  std::string source;                  // one translation unit: prelude, kernels, host function
  std::string deviceSource;            // the prelude and the kernels alone: what NVRTC compiles
};

// Helpers every kernel uses (float min/max, the block reduction) and the
// launch macro of the host function. Guarded: several programs' sources may
// be concatenated into one translation unit.
std::string cudaPrelude();

// Throws CudaCodegenError for a program it cannot express.
CudaProgram emitCudaProgram(const lower::LoweredFunc& f, const std::string& name);

}  // namespace tessel::codegen
