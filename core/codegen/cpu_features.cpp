#include "codegen/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace tessel::codegen {

namespace {

VectorIsa detect() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return {"avx512", 16, 32};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return {"avx2", 8, 16};
#endif
  return {"sse", 4, 16};
}

}  // namespace

const VectorIsa& nativeVectorIsa() {
  static const VectorIsa isa = detect();
  return isa;
}

std::vector<std::string> kernelCompilerFlags() {
  std::vector<std::string> flags = {"-O3", "-march=native", "-fopenmp", "-std=c++17"};
  if (nativeVectorIsa().lanes >= 16) flags.push_back("-mprefer-vector-width=512");
  return flags;
}

std::vector<std::string> referenceCompilerFlags() {
  return {"-O2", "-std=c++17", "-w"};
}

}  // namespace tessel::codegen
