// The limits of a target that sketches and annotations are fitted to.
#pragma once

#include <cstdint>
#include <string>

#include "target/target.h"

namespace tessel::schedule {

struct HardwareParams {
  // What the schedules are for: its kind picks the sketch rules and its CUDA
  // limits (threads and shared memory per block) bound the annotations.
  target::Target target = target::Target::host();
  // CPU threads a parallel loop is split for: the target's threads, set by
  // hardwareParams(); 2 by default so that a schedule test's sketches do not
  // depend on the machine it runs on.
  int cores = 2;
  int maxInnermostSplit = 64;  // longest innermost tile
  // Widest fused innermost extent a vectorize annotation may take, in floats.
  int maxVectorLanes = 16;
};

// What a target implies: the target itself, its threads (every core of this
// machine for threads = 0). The vectorize limit stays 16 floats (one
// AVX-512 vector, two AVX2 or four SSE ones, which GCC unrolls), never less
// than one of the target's vectors: the vector width itself reaches the
// kernels through -march and the register tiles (codegen::vectorIsa).
HardwareParams hardwareParams(const target::Target& target);

}  // namespace tessel::schedule
