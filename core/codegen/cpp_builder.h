// Compiles generated kernels into shared libraries: many candidates per
// translation unit, the units compiled in parallel jobs. A unit that fails is
// rebuilt one candidate at a time, so one bad kernel costs only itself. With a
// kernel cache, each candidate is looked up by its own code, so a kernel built
// once in any unit is not compiled again.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpu_features.h"
#include "support/cancellation.h"
#include "support/error_code.h"

namespace tessel::codegen {

struct BuildCandidate {
  std::string code;    // the kernel function (emitCppKernel)
  std::string symbol;  // its name, unique in the batch
};

struct BuildOutput {
  support::ErrorCode error = support::ErrorCode::None;
  std::string message;
  std::string library;  // path of the .so holding the symbol
  double seconds = 0;   // compile time of its unit
};

// `flags` with -w: generated kernels are not worth the compiler's warnings.
inline std::vector<std::string> withoutWarnings(std::vector<std::string> flags) {
  flags.push_back("-w");
  return flags;
}

struct BuildOptions {
  std::string workDir;         // where sources and libraries go (must exist)
  int jobs = 2;                // parallel compiler processes
  double timeoutSeconds = 60;  // per translation unit
  int maxPerUnit = 8;          // candidates per translation unit
  std::string compiler;        // default: $TESSEL_CXX, else "c++"
  std::vector<std::string> flags = withoutWarnings(kernelCompilerFlags());
  support::CancelFlag cancel;  // kills the compilers when set
  std::string cacheDir;        // a KernelCache's folder: candidates built before are not compiled again ("" none)
};

std::vector<BuildOutput> buildCandidates(const std::vector<BuildCandidate>& candidates, const BuildOptions& options);

}  // namespace tessel::codegen
