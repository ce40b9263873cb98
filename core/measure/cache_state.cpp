#include "measure/cache_state.h"

namespace tessel::measure {

const char* cacheStateName(CacheState state) {
  switch (state) {
    case CacheState::Warm:
      return "off";
    case CacheState::Cold:
      return "on";
    case CacheState::Model:
      return "model";
  }
  return "off";
}

const char* cacheStateSummary(CacheState state) {
  switch (state) {
    case CacheState::Warm:
      return "warm-cache loops, data wherever the previous call left it";
    case CacheState::Cold:
      return "every buffer in memory before each call (Ansor's flush)";
    case CacheState::Model:
      return "as inside the model: weights in memory, activations in the shared cache";
  }
  return "";
}

std::optional<CacheState> parseCacheState(const std::string& text) {
  for (CacheState s : kCacheStates)
    if (text == cacheStateName(s)) return s;
  return std::nullopt;
}

}  // namespace tessel::measure
