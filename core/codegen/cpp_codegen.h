// C++ code generation for the CPU: OpenMP for parallel loops, OpenMP SIMD for
// vectorised innermost loops, GCC unroll pragmas for unrolled ones. GPU
// bindings (blockIdx, threadIdx, vthread) become serial loops, which is what
// they mean for one thread of the host: it lets GPU schedules be checked here.
#pragma once

#include <string>

#include "lower/loop_nest.h"

namespace tessel::codegen {

// Includes and helpers, once per translation unit.
std::string cppPrelude();
// One kernel: extern "C" int `symbol`(float* const* args), args = f.args.
std::string emitCppKernel(const lower::LoweredFunc& f, const std::string& symbol);

}  // namespace tessel::codegen
