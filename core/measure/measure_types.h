// What one measurement produces, and the error codes of the spec (as Ansor).
#pragma once

#include <string>
#include <vector>

namespace tessel::measure {

enum class ErrorCode : int {
  None = 0,
  Instantiation = 1,
  CompileHost = 2,
  CompileDevice = 3,
  Runtime = 4,
  WrongAnswer = 5,
  BuildTimeout = 6,
  RunTimeout = 7,
  Unknown = 8,
};
// "none", "instantiation error", ... : the message of each code.
const char* errorName(ErrorCode c);

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
