// What the CPU a kernel is built for offers its code: the widest float vector
// and how many vector registers, and the compiler flags. Both come from the
// kernel's target (target/target.h, CPUID for this machine's "cpu"), so the
// measured kernels, the executor's and the exported ones agree.
#pragma once

#include <string>
#include <vector>

#include "target/target.h"

namespace tessel::codegen {

struct VectorIsa {
  std::string name;    // "avx512", "avx2", "sse"
  int lanes = 4;       // float32 lanes of the widest vector
  int registers = 16;  // vector registers the compiler may allocate
};

// A CPU target's (AVX-512: 16 lanes, 32 registers; AVX2: 8 lanes, 16
// registers; SSE: 4 lanes, 16 registers).
VectorIsa vectorIsa(const target::Target& target);
// This machine's: the target "cpu".
const VectorIsa& nativeVectorIsa();

// The target's kernel flags (Target::compilerFlags); without one, this
// machine's: -O3 -march=native -fopenmp -std=c++17 (+ -mprefer-vector-width=512
// with AVX-512).
std::vector<std::string> kernelCompilerFlags(const target::Target& target = target::Target::host());

// -O2 -std=c++17 -w: the naive program each kernel is checked against, plainly
// compiled (no -march, no OpenMP), so that an optimisation the tuned kernels
// rely on cannot also hide in the reference.
std::vector<std::string> referenceCompilerFlags();

}  // namespace tessel::codegen
