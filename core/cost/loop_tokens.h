// ATFormer's coarse-grained tokens: one per loop of the lowered program (its
// kind, extent, depth and the work beneath it), in pre-order. The
// fine-grained tokens are the per-store rows of cost/features.h.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lower/loop_nest.h"

namespace tessel::cost {

constexpr size_t kLoopTokenFeatures = 14;
// Programs with more loops keep their first kMaxLoopTokens (outermost first).
constexpr size_t kMaxLoopTokens = 64;

struct LoopTokens {
  std::vector<float> values;  // kLoopTokenFeatures per token, row-major
  size_t size() const { return values.size() / kLoopTokenFeatures; }
  bool operator==(const LoopTokens&) const = default;
};

LoopTokens extractLoopTokens(const lower::LoweredFunc& f);
const std::vector<std::string>& loopTokenFeatureNames();

}  // namespace tessel::cost
