// What one measurement produces, and the error codes of the spec (as Ansor).
#pragma once

#include <string>
#include <vector>

#include "support/error_code.h"

namespace tessel::measure {

// Defined in support/ (the code generator's builder reports them too).
using support::ErrorCode;
using support::errorName;

struct MeasureResult {
  ErrorCode error = ErrorCode::None;
  std::string message;        // details: compiler output, signal, max error...
  std::vector<double> costs;  // seconds of every timed repeat
  double buildSeconds = 0;
  double runSeconds = 0;   // wall time the measurement took
  double maxAbsError = 0;  // against the reference
  bool ok() const { return error == ErrorCode::None; }
  double medianCost() const;  // +inf without costs
  double minCost() const;
};

}  // namespace tessel::measure
