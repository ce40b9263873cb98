// Plain types shared by the cost models and their features.
#pragma once

#include <vector>

namespace tessel::cost {

// One row of features per buffer store of the program (Ansor's 164 and 6 on its register tile: kNumFeatures,
// cost/features.h).
using ProgramFeatures = std::vector<std::vector<float>>;

// Score of a program that failed to lower: far below every real score, but
// finite so that sums and sorts stay well-defined.
constexpr double kInvalidScore = -1e30;

}  // namespace tessel::cost
