// Where a kernel's data sits in the memory hierarchy when the worker times a
// call: the condition the tuner's latencies, and so the estimate of a model's
// run, are measured under. Named as the CLI and the session configuration
// spell it (`--cache-flush model|on|off`).
#pragma once

#include <optional>
#include <string>

namespace tessel::measure {

enum class CacheState {
  // "off": wherever the previous call left it (warm-cache loops).
  Warm,
  // "on": every buffer evicted to memory before each call (Ansor's flush).
  Cold,
  // "model": as inside a model run. The weights come from memory (a whole run
  // passed since they were last read), the activations and outputs from the
  // shared last-level cache (the previous kernel just wrote them there), and
  // nothing is left in the cores' private caches.
  Model,
};

// Every state, in the order help texts list them.
inline constexpr CacheState kCacheStates[] = {CacheState::Model, CacheState::Cold, CacheState::Warm};

// "off", "on" or "model".
const char* cacheStateName(CacheState state);
// One line for help texts and tooltips.
const char* cacheStateSummary(CacheState state);
// The inverse; nullopt for any other text.
std::optional<CacheState> parseCacheState(const std::string& text);

}  // namespace tessel::measure
