#include "support/error_code.h"

namespace tessel::support {

const char* errorName(ErrorCode c) {
  switch (c) {
    case ErrorCode::None:
      return "no error";
    case ErrorCode::Instantiation:
      return "instantiation error: the schedule cannot be applied";
    case ErrorCode::CompileHost:
      return "host compilation error";
    case ErrorCode::CompileDevice:
      return "device compilation error";
    case ErrorCode::Runtime:
      return "runtime error: the kernel crashed or failed";
    case ErrorCode::WrongAnswer:
      return "wrong answer: the result differs from the reference";
    case ErrorCode::BuildTimeout:
      return "build timeout";
    case ErrorCode::RunTimeout:
      return "run timeout: the kernel did not finish in time";
    case ErrorCode::Unknown:
      return "unknown error";
  }
  return "unknown error";
}

}  // namespace tessel::support
