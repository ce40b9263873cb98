// Explicit vector code for the innermost tile of a reduction: the block of a
// cache_write buffer that multi-level tiling ("SSRSRS") leaves innermost, under
// the reduction loops that update it. Its accumulators are loaded into vector
// registers once, updated by broadcast-times-vector FMAs (or adds, max, min) at
// every step of the reduction loops, and stored once; an operand that several
// accumulators share (a convolution's weights, a matmul's B row) is loaded once
// per step. The vectors have the machine's width (VectorIsa), so the kernel
// does not depend on how the compiler's auto-vectoriser is tuned for the CPU.
//
// The nest it takes: a perfect loop nest whose outer loops (the reduction) do
// not index the stored buffer and whose inner loops (the tile) all do, the
// innermost one with stride 1; a single store T[i] = T[i] + a * b (or + a,
// max, min), each operand either free of the innermost variable (broadcast) or
// a load with stride 1 in it. Anything else is left to the plain emitter.
#pragma once

#include <optional>
#include <string>

#include "codegen/cpu_features.h"
#include "lower/loop_nest.h"

namespace tessel::codegen {

// What the emitter makes of the nest rooted at `loop` when it is a tile: its
// store, its accumulators (vectors of `lanes` floats) and whether they fit
// the registers (the emitter writes the tile only then, and otherwise tries
// the loops inside). Nothing when the nest is not a tile. The cost models'
// features read it (cost/features.h): the two kinds of kernel differ ~10x.
struct RegisterTilePlan {
  const lower::StmtNode* store = nullptr;
  int64_t accumulators = 0;  // vector registers the tile's results take
  int lanes = 0;             // float32 lanes of each
  bool fits = false;
  // Per step of the reduction loops: the vectors loaded from memory (each
  // shared operand once, the others at each use) and broadcast (once per
  // point and operand); each step does `accumulators` FMAs (or adds).
  int64_t loadsPerStep = 0;
  int64_t reductionSteps = 0;  // steps the accumulators stay in registers (product of the reduction extents)
};
std::optional<RegisterTilePlan> planRegisterTile(const lower::StmtNode& loop, const VectorIsa& isa);

// The C++ of the nest rooted at `loop` (a For) at indentation `depth`, or
// nothing when the nest is not such a tile or it would not fit the registers.
std::optional<std::string> emitRegisterTile(const lower::Stmt& loop, int depth, const VectorIsa& isa);

// Vector types and helpers the tiles use (part of cppPrelude()).
std::string registerTilePrelude();

}  // namespace tessel::codegen
