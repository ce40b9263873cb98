// The check every measured kernel passes before its time counts: its outputs
// against the reference's, element by element, |out - ref| <= tolerance *
// (1 + |ref|); a non-finite reference must be matched in kind, and without a
// reference every output must be finite. Shared by the worker's CPU and GPU
// halves, so both judge alike.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace tessel::measure {

struct OutputCheck {
  bool ok = true;
  double maxAbsError = 0;  // +inf when an output was not finite
  std::string message;     // the first wrong element and how many, when !ok
};

// `reference`: one vector per output, or null to check finiteness only.
OutputCheck checkOutputs(const std::vector<std::span<const float>>& outputs,
                         const std::vector<std::vector<float>>* reference, double tolerance);

}  // namespace tessel::measure
