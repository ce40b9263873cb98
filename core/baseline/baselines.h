// Vendor baselines for `tune-op --compare`: the same operator run by oneDNN,
// OpenBLAS and LibTorch in the calling process, timed with the rule of
// Tessel's measurement worker (one warm-up call, then 3 repeats; each repeat
// calls the op `number` times, `number` doubling from 1 until a repeat lasts
// at least 20 ms; the cost is the median over the repeats of time / number;
// with a cache flush, only the calls are timed, each after its buffers were
// put in the cache state, and a repeat is long enough once calls and
// evictions together last 20 ms). A measurement whose repeats spread is taken again; one that
// stays disturbed is flagged, never reported as a plain time.
//
// What each peer times, once its inputs are in place:
// - oneDNN: one primitive execution. Convolution sources, weights and
//   destinations use the layouts oneDNN picks (blocked, e.g. nChw16c), the
//   dense layer's weights too: the one-off reorders into them are not timed,
//   as in an inference framework that keeps its tensors in oneDNN's layouts.
//   Everything else uses the op's own plain row-major layout.
// - OpenBLAS: cblas_sgemm (a loop of them for batch_matmul, then the bias
//   loop for dense). Other ops are "not applicable".
// - LibTorch: the ATen call (at::matmul, at::conv2d, ...) under
//   c10::InferenceMode, output allocation included.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "measure/cache_state.h"
#include "support/tolerances.h"

namespace tessel::baseline {

struct BaselineResult {
  // Seconds per call (median of the repeats); empty when that peer did not
  // run (see notes).
  std::optional<double> onednnSeconds, openblasSeconds, libtorchSeconds;
  // Peer -> seconds per call of every repeat that gave its time.
  std::map<std::string, std::vector<double>> repeats;
  // Peer -> why its time is not to be trusted: its repeats spread (median
  // more than 1.15x the fastest) in two measurements, or the two disagreed.
  // Another process took the cores; the ratio against it is no speed-up.
  std::map<std::string, std::string> disturbed;
  // Peer name ("onednn", "openblas", "libtorch") -> why it has no time: not
  // applicable to the op, not built in, or the error it raised.
  std::map<std::string, std::string> notes;
};

// The peer names, in the order measureBaselines runs them.
const std::vector<std::string>& peerNames();
// Whether this build has `peer` ("not built with X" otherwise).
bool peerAvailable(const std::string& peer);

// Measures every peer on `op` at `shape`, exactly as `tessel tune-op` takes
// them (see te/operators.h), on uniform random inputs in [-1, 1), with
// `threads` threads (less than 1: all hardware threads). Throws
// std::invalid_argument for an unknown op or a bad shape; a failure inside a
// peer becomes that peer's note and the other peers still run.
// Each timed call first has the peer's buffers put in `cacheState`, as
// Tessel's worker does with the same --cache-flush. OpenMP peers run on a
// pinned team, like Tessel's kernels.
BaselineResult measureBaselines(const std::string& op, const std::vector<int64_t>& shape, int threads,
                                measure::CacheState cacheState = measure::CacheState::Warm);

using support::kDisturbedSpread;  // support/tolerances.h

// The verdict on a timing: "" when its repeats (`first`) are steady, or when
// they spread but the re-check (`second`) is steady and agrees with them
// within kDisturbedSpread; otherwise why it is disturbed.
std::string disturbanceOf(const std::vector<double>& first, const std::vector<double>& second);

// The shapes of the op's inputs, in the order runBaselineOnce takes them
// (the order of te::makeOperator's placeholders, e.g. X, W, bias), and of its
// output. Throw std::invalid_argument as measureBaselines does.
std::vector<std::vector<int64_t>> baselineInputShapes(const std::string& op, const std::vector<int64_t>& shape);
std::vector<int64_t> baselineOutputShape(const std::string& op, const std::vector<int64_t>& shape);

// Runs `op` once with `peer` on the given inputs (row-major, in the order of
// baselineInputShapes) and returns the output, row-major in the op's layout
// (NCHW for convolutions and pooling). For checking the peers against a
// reference. Throws std::invalid_argument for an unknown peer, op, bad shape
// or inputs of the wrong count or size, std::runtime_error when the peer is
// not applicable to the op, not built in, or fails.
std::vector<float> runBaselineOnce(const std::string& peer, const std::string& op, const std::vector<int64_t>& shape,
                                   const std::vector<std::vector<float>>& inputs, int threads = 1);

}  // namespace tessel::baseline
