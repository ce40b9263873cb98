#include "measure/measure_types.h"

#include <algorithm>
#include <limits>

namespace tessel::measure {

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

double MeasureResult::medianCost() const {
  if (costs.empty()) return std::numeric_limits<double>::infinity();
  std::vector<double> c = costs;
  std::nth_element(c.begin(), c.begin() + long(c.size() / 2), c.end());
  return c[c.size() / 2];
}

double MeasureResult::minCost() const {
  if (costs.empty()) return std::numeric_limits<double>::infinity();
  return *std::min_element(costs.begin(), costs.end());
}

}  // namespace tessel::measure
