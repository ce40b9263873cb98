// Ansor's layout rewrite for constant inputs (weights, te::Op::layoutFree):
// the kernel reads such a tensor in the order its loops walk it, one packed
// dimension per loop (or part of a fused loop) its index uses, outermost loop
// first. The slice an inner tile reads is then contiguous, instead of short
// rows a large power of two apart that crowd a few cache sets (NHWC conv
// weights are RSCK: a 32-channel slice is 128 B of every 1 KiB).
//
// The caller packs the plain tensor once, before the runs, with the function
// codegen::emitCppPack writes; the compute definition and its workload key do
// not change, so a stored schedule replays to the same layout.
#pragma once

#include "lower/loop_nest.h"

namespace tessel::lower {

// Rewrites the loads of every layoutFree input of `f` whose index is a sum of
// loop variables and parts of them (v / a, v % b, (v / a) % b) and records
// its layout in f->packed. An input is left plain when its loads disagree,
// when the order it would get is already its own, or when packing would more
// than quadruple it (uneven splits pad it).
void rewriteLayouts(LoweredFunc* f);

// The plain element a packed element holds (-1: none, it is padding).
int64_t plainIndex(const PackedLayout& layout, int64_t packedIndex);

}  // namespace tessel::lower
