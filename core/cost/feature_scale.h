// The scale every program feature is on: Ansor's shifted log,
// sign(x) * log2(|x| + 1), so that counts of 1 and 10^9 sit in one range.
#pragma once

#include <cmath>

namespace tessel::cost {

inline float slog(double x) {
  return float(x < 0 ? -std::log2(-x + 1.0) : std::log2(x + 1.0));
}

}  // namespace tessel::cost
