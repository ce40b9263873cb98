// The one timing rule of every measured kernel: Tessel's programs in the CPU
// and CUDA workers, and the vendor peers timed beside them (baseline/). After
// `warmup` calls come `repeats` repeats of `number` calls in a row; the first
// repeat calibrates number, doubling it from 1 until a repeat lasts
// minRepeatSeconds (or number reaches its cap), and the others reuse it. A
// repeat's cost is its seconds / number.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "measure/cache_state.h"

namespace tessel::measure {

struct TimingRule {
  int warmup = 1;
  int repeats = 3;
  double minRepeatSeconds = 0.02;  // a calibrated repeat lasts at least this
};

// The defaults every measurer starts from (the runner's options, the worker's
// request, a fleet job's rules).
inline constexpr TimingRule kDefaultTiming;

// The calibration's cap on number: on the CPU it bounds kernels so fast the
// clock barely sees them; a GPU launch costs microseconds, so there it is
// seconds of work; with the cache state made anew before every call, the
// evictions bound it sooner.
enum class TimedOn { Cpu, Gpu };
inline constexpr int64_t kMaxCpuNumber = int64_t(1) << 30;
inline constexpr int64_t kMaxGpuNumber = int64_t(1) << 20;
inline constexpr int64_t kMaxFlushedNumber = 4096;
inline int64_t maxNumber(CacheState state, TimedOn device) {
  if (state != CacheState::Warm) return kMaxFlushedNumber;
  return device == TimedOn::Cpu ? kMaxCpuNumber : kMaxGpuNumber;
}

struct RepeatTime {
  double seconds = 0;       // of the calls alone (evictions are not timed)
  bool longEnough = false;  // the repeat with its evictions lasted minRepeatSeconds
};

// Seconds per call of each repeat (the warm-up calls are the caller's, with
// its own error handling). `repeat(number)` runs one repeat of `number` calls
// and gives its time, or nullopt when a call failed: the timing is then
// abandoned (nullopt).
template <class Repeat>
std::optional<std::vector<double>> timeRepeats(const TimingRule& rule, int64_t maxNumber, Repeat&& repeat) {
  std::vector<double> costs;
  int64_t number = 1;
  for (int rep = 0; rep < rule.repeats; ++rep)
    for (;;) {
      const std::optional<RepeatTime> t = repeat(number);
      if (!t) return std::nullopt;
      if (t->longEnough || t->seconds >= rule.minRepeatSeconds || number >= maxNumber) {
        costs.push_back(t->seconds / double(number));
        break;
      }
      number *= 2;
    }
  return costs;
}

}  // namespace tessel::measure
