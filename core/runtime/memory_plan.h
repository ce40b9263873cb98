// Where the intermediate tensors of a graph run live: one arena, an offset per
// tensor, computed once when a model is loaded. Tensors whose lifetimes do not
// overlap share memory, so a model's working set stays close to its largest
// pair of neighbouring activations (and in cache) instead of growing with its
// depth.
//
// The placement is TFLite's "greedy by size": the largest tensor first, each
// at the lowest offset that overlaps no already placed tensor alive at the
// same time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

// One tensor to place: alive from the step that writes it to the last step
// that reads it, both inclusive (a kernel's inputs and outputs are alive at
// its step, so they never share memory).
struct TensorLifetime {
  std::string name;
  int64_t bytes = 0;
  int firstStep = 0, lastStep = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // bytes into the arena, same order as the lifetimes
  int64_t arenaBytes = 0;        // the arena's size
  int64_t totalBytes = 0;        // what the tensors would take without sharing
};

// Offsets aligned to `alignment` bytes (a power of two). Throws
// std::invalid_argument for a negative size or a lifetime that ends before it
// starts.
MemoryPlan planMemory(const std::vector<TensorLifetime>& tensors, int64_t alignment = 64);

// The first pair of tensors alive at the same step whose memory overlaps, as
// "a and b", or "" when the plan is sound (for tests and assertions).
std::string findOverlap(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan);

}  // namespace tessel::runtime
