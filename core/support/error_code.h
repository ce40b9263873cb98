// The error codes of a measurement (as Ansor's MeasureErrorNo): defined below
// every pipeline stage, since the code generator's builder reports them too.
#pragma once

namespace tessel::support {

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

}  // namespace tessel::support
