// What this machine's CPU says of itself (/proc/cpuinfo, sysfs): its model
// name, the highest clock it reports and the size of its last-level cache.
// The database names a measuring device by it, the fleet's agents describe
// themselves with it, and the roofline's peak is computed from it.
#pragma once

#include <cstddef>
#include <string>

namespace tessel::support {

struct CpuInfo {
  std::string model = "unknown CPU";  // "AMD EPYC 9R14 96-Core Processor"
  std::string vendor;                 // "GenuineIntel", "AuthenticAMD" ("" unknown)
  int family = 0;                     // "cpu family"
  double maxMHz = 0;                  // highest of cpuinfo_max_freq and the cores' "cpu MHz" (0: unknown)
  size_t lastLevelCacheBytes = 0;     // the highest-level cache of cpu0 (0: unknown)
  unsigned threads = 1;               // hardware threads (std::thread::hardware_concurrency, at least 1)
};

// Read once per call; files that are missing leave their fields as they are.
CpuInfo hostCpu();

}  // namespace tessel::support
