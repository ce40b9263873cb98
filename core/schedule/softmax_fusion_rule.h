// AutoGTCO's sketch rule for attention: a softmax computed inside the tiles of
// the batch matmul that reads it (softmax(Q K^T) V in one kernel), so the
// attention matrix never goes through memory as a whole tensor.
#pragma once

#include <memory>
#include <optional>

#include "schedule/sketch.h"

namespace tessel::schedule {

// The stages of a softmax over the last axis, as te::softmax and the ONNX
// lowering build it: max = max_k x[.., k]; exp = exp(x - max);
// sum = sum_k exp[.., k]; norm = exp / sum. `input` is x when it is a compute
// stage only those two read (the attention's scaling), else -1.
struct SoftmaxStages {
  int input = -1, max = -1, exp = -1, sum = -1, norm = -1;
};
// The softmax whose normalised values stage `norm` computes, if it is one.
std::optional<SoftmaxStages> matchSoftmax(const State& s, int norm);

// "fuse_softmax_into_batch_matmul": applies to a batch matmul (a stage with
// data reuse, batch axes and one reduction) that reads a softmax's output
// along its reduction, directly or through an element-wise stage it inlines.
// Beside the other sketches it derives one where every softmax stage is
// computed at the matmul's row tile: on the CPU at the level-1 row-tile loop
// of its multi-level tiling, the column loops moved under it (parallel loops
// stop there), on the GPU at the loop
// bound to blockIdx, the normalised rows computed by the block's threads
// into shared memory (when one row fits), the row max and sum per thread.
// Registered for "cuda" only: on the CPU (BERT-Tiny's attention, 200 trials,
// seeds 1 and 2, a quiet 2-core Zen 3) it tuned to 1.01x and 1.02x of the
// latency without it with two threads, and single-threaded the best programs
// were other sketches' (docs/results.md). CPU tests add it themselves
// (registerSketchRule(Kind::Cpu, ..., "add_cache_write")).
std::shared_ptr<SketchRule> makeSoftmaxFusionRule();

}  // namespace tessel::schedule
