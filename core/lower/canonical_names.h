// A lowered kernel with its buffers and loop variables renamed by position
// (in0.., out0.., tmp0.., i0..), so that two graph partitions that compute the
// same thing on differently named tensors emit the same code: the executor
// then compiles one function for a model's repeated blocks, and its kernel
// cache finds a kernel whatever the exporter called the model's values.
#pragma once

#include "lower/loop_nest.h"

namespace tessel::lower {

LoweredFunc withCanonicalNames(const LoweredFunc& f);

}  // namespace tessel::lower
