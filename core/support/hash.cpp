#include "support/hash.h"

#include <cstdio>

namespace tessel::support {

std::string hash128Hex(std::string_view text) {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(fnv1a(text)),
                static_cast<unsigned long long>(fnv1a(text, kStableKeyBasis)));
  return hex;
}

}  // namespace tessel::support
