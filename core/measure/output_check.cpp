#include "measure/output_check.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tessel::measure {

namespace {

std::string formatFloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

OutputCheck checkOutputs(const std::vector<std::span<const float>>& outputs,
                         const std::vector<std::vector<float>>* reference, double tolerance) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  OutputCheck check;
  size_t mismatches = 0, total = 0;
  std::string first;
  for (size_t o = 0; o < outputs.size(); ++o) {
    const std::span<const float> out = outputs[o];
    const float* ref = reference ? (*reference)[o].data() : nullptr;
    total += out.size();
    for (size_t i = 0; i < out.size(); ++i) {
      const double v = out[i];
      bool bad;
      if (!ref) {
        bad = !std::isfinite(v);
        if (bad) check.maxAbsError = kInf;
      } else if (!std::isfinite(ref[i])) {
        // A non-finite reference (e.g. log of a negative input) must be matched in kind.
        bad = !(std::isnan(ref[i]) ? std::isnan(v) : v == double(ref[i]));
        if (bad) check.maxAbsError = kInf;
      } else if (!std::isfinite(v)) {
        bad = true;
        check.maxAbsError = kInf;
      } else {
        const double r = ref[i];
        const double err = std::fabs(v - r);
        check.maxAbsError = std::max(check.maxAbsError, err);
        bad = err > tolerance * (1.0 + std::fabs(r));
      }
      if (bad && mismatches++ == 0) {
        first = "output " + std::to_string(o) + " element " + std::to_string(i) + ": got " + formatFloat(v) +
                (ref ? ", expected " + formatFloat(ref[i]) : std::string(" (not finite)"));
      }
    }
  }
  if (mismatches == 0) return check;
  check.ok = false;
  check.message = first + "; " + std::to_string(mismatches) + " of " + std::to_string(total) +
                  " elements differ, max abs error " + formatFloat(check.maxAbsError) + " (tolerance " +
                  formatFloat(tolerance) + " * (1 + |ref|))";
  return check;
}

}  // namespace tessel::measure
