// What the CPU that compiles and runs the kernels offers their code: the
// widest float vector and how many vector registers, read from CPUID, and the
// compiler flags chosen from them. One place for the flags the measured
// kernels, the executor's and the exported ones are built with.
#pragma once

#include <string>
#include <vector>

namespace tessel::codegen {

struct VectorIsa {
  std::string name;    // "avx512", "avx2", "sse"
  int lanes = 4;       // float32 lanes of the widest vector
  int registers = 16;  // vector registers the compiler may allocate
};

// This machine's (AVX-512F: 16 lanes, 32 registers; AVX2 with FMA: 8 lanes,
// 16 registers; otherwise SSE: 4 lanes, 16 registers).
const VectorIsa& nativeVectorIsa();

// -O3 -march=native -fopenmp -std=c++17, plus -mprefer-vector-width=512 on a
// CPU with AVX-512: GCC otherwise keeps the auto-vectorised loops of some
// AVX-512 CPUs (Intel's among them) at 256 bits.
std::vector<std::string> kernelCompilerFlags();

// -O2 -std=c++17 -w: the naive program each kernel is checked against, plainly
// compiled (no -march, no OpenMP), so that an optimisation the tuned kernels
// rely on cannot also hide in the reference.
std::vector<std::string> referenceCompilerFlags();

}  // namespace tessel::codegen
