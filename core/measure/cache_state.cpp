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

std::optional<CacheState> parseCacheState(const std::string& text) {
  for (CacheState s : {CacheState::Warm, CacheState::Cold, CacheState::Model})
    if (text == cacheStateName(s)) return s;
  return std::nullopt;
}

}  // namespace tessel::measure
