// The limits of a target that sketches and annotations are fitted to.
#pragma once

#include <cstdint>
#include <string>

#include "target/target.h"

namespace tessel::schedule {

struct HardwareParams {
  std::string target = "cpu";  // the target's kind: "cpu" or "cuda"
  int cores = 2;               // CPU threads a parallel loop is split for
  int maxInnermostSplit = 64;  // longest innermost tile
  // Widest fused innermost extent a vectorize annotation may take, in floats.
  int maxVectorLanes = 16;
  int maxThreadsPerBlock = 1024;             // CUDA
  int64_t maxSharedMemoryBytes = 48 * 1024;  // CUDA, per block
};

// What a target implies: its kind, its threads (every core of this machine for
// threads = 0) and its CUDA limits. The vectorize limit stays 16 floats (one
// AVX-512 vector, two AVX2 or four SSE ones, which GCC unrolls), never less
// than one of the target's vectors: the vector width itself reaches the
// kernels through -march and the register tiles (codegen::vectorIsa).
HardwareParams hardwareParams(const target::Target& target);

}  // namespace tessel::schedule
