// The median shared by the reference executors' timings.
#include "reference/reference_run.h"

#include <algorithm>

namespace tessel::reference {

double medianSeconds(std::vector<double> times) {
  if (times.empty()) return 0;
  std::sort(times.begin(), times.end());
  const size_t m = times.size() / 2;
  return times.size() % 2 ? times[m] : 0.5 * (times[m - 1] + times[m]);
}

}  // namespace tessel::reference
