// The tolerances Tessel judges numbers by, named once: when a kernel's
// answer is right, when a whole model's is, and when a timing was disturbed.
// (Limits of what the CLI accepts are in tuning/tuning_config.h; the CPU
// contention limits in support/cpu_contention.h.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tessel::support {

// A timing whose median is more than this times its fastest repeat was
// disturbed (another process took the cores for part of it).
inline constexpr double kDisturbedSpread = 1.15;

// A model run is correct when its largest difference from LibTorch's is at
// most this times the largest output (or 1, whichever is larger).
inline constexpr double kModelRelativeTolerance = 1e-3;

// A kernel's output against the task's naive program: float32 sums of L
// terms drift by about eps * sqrt(L) relative to their size, so the
// tolerance grows with the longest reduction, with a margin of 4.
inline constexpr double kKernelBaseTolerance = 1e-5;
inline constexpr double kKernelToleranceMargin = 4;
inline double kernelTolerance(int64_t maxReductionLength) {
  return kKernelBaseTolerance * std::max(1.0, std::sqrt(double(maxReductionLength))) * kKernelToleranceMargin;
}

}  // namespace tessel::support
