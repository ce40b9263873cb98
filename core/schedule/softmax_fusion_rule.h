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
// Registered for "cpu" and "cuda". On the CPU (BERT-Tiny's attention, 200
// trials, seeds 1 and 2, a busy 2-core Zen 3) single-threaded kernels tune to
// the same latency with and without it (0.2247 / 0.2289 ms, 0.2308 / 0.2248
// ms); with two threads a 64-trial look gave 0.250 against 0.378 ms, 200
// trials of seed 1 under a heavier load 0.3814 against 0.3884 ms. If the
// two-thread figures on a quiet machine show no gain, register it for "cuda"
// only (docs/benchmarks.md has the command).
std::shared_ptr<SketchRule> makeSoftmaxFusionRule();

}  // namespace tessel::schedule
