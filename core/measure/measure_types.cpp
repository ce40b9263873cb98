#include "measure/measure_types.h"

#include <algorithm>
#include <limits>

namespace tessel::measure {

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
