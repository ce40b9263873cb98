// C++ code generation for the CPU: OpenMP for parallel loops, explicit vector
// code for the register tiles of reductions (register_tile.h), OpenMP SIMD for
// other vectorised innermost loops, GCC unroll pragmas for unrolled ones. GPU
// bindings (blockIdx, threadIdx, vthread) become serial loops, which is what
// they mean for one thread of the host: it lets GPU schedules be checked here.
#pragma once

#include <string>

#include "codegen/cpu_features.h"
#include "lower/loop_nest.h"

namespace tessel::codegen {

// Includes and helpers, once per translation unit.
std::string cppPrelude();
struct CppOptions {
  CppOptions();                                       // this machine's vectors, register tiles on
  explicit CppOptions(const target::Target& target);  // the target's vectors
  bool registerTiles = true;  // off: every loop as the plain emitter writes it (for comparisons)
  // Constant inputs read in the layout the loops walk (lower/layout_rewrite.h);
  // off: in their own layout (for comparisons, and the reference program).
  bool layoutRewrite = true;
  VectorIsa isa;
};

// One kernel: extern "C" int `symbol`(float* const* args), args = f.args.
std::string emitCppKernel(const lower::LoweredFunc& f, const std::string& symbol,
                          const CppOptions& options = CppOptions());

// The packing of a kernel's constant inputs (f.packed, lower/layout_rewrite.h):
// extern "C" int `symbol`(float* const* plain, float* const* packed) fills
// packed[i] from plain[i] for every packed input i; other entries are not
// read. Empty when f has no packed input.
std::string emitCppPack(const lower::LoweredFunc& f, const std::string& symbol);
// The symbol of a kernel's packing function in the code below.
std::string packSymbol(const std::string& kernelSymbol);
// The kernel, followed by its packing function (packSymbol) if it has one.
std::string emitCppKernelAndPack(const lower::LoweredFunc& f, const std::string& symbol,
                                 const CppOptions& options = CppOptions());

}  // namespace tessel::codegen
