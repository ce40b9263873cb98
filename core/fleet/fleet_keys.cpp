#include "fleet/fleet_keys.h"

#include <unistd.h>

#include <cstdio>
#include <random>

namespace tessel::fleet {

std::string uniqueProcessName() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  char suffix[9];
  std::snprintf(suffix, sizeof suffix, "%08x", unsigned(rd()));
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + suffix;
}

}  // namespace tessel::fleet
