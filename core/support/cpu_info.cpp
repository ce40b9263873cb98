#include "support/cpu_info.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace tessel::support {

namespace {

// "32768K" / "1024 KB" / "8M" -> bytes (0 if it does not read).
size_t sizeOf(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string unit = text.substr(
      text.find_first_not_of(' ', used) == std::string::npos ? text.size() : text.find_first_not_of(' ', used));
  const double scale = unit.empty() ? 1 : unit[0] == 'K' ? 1024.0 : unit[0] == 'M' ? 1048576.0 : 1;
  return size_t(v * scale);
}

std::string valueOf(const std::string& line) {
  const size_t colon = line.find(':');
  if (colon == std::string::npos) return {};
  const size_t start = line.find_first_not_of(" \t", colon + 1);
  return start == std::string::npos ? std::string() : line.substr(start);
}

}  // namespace

CpuInfo hostCpu() {
  CpuInfo c;
  c.threads = std::max(1u, std::thread::hardware_concurrency());
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool named = false;
  while (std::getline(in, line)) {
    if (!named && line.rfind("model name", 0) == 0) {
      c.model = valueOf(line);
      named = true;
    } else if (c.vendor.empty() && line.rfind("vendor_id", 0) == 0) {
      c.vendor = valueOf(line);
    } else if (c.family == 0 && line.rfind("cpu family", 0) == 0) {
      c.family = std::atoi(valueOf(line).c_str());
    } else if (line.rfind("cpu MHz", 0) == 0) {
      try {
        c.maxMHz = std::max(c.maxMHz, std::stod(valueOf(line)));
      } catch (const std::exception&) {
      }
    }
  }
  // The frequency driver's maximum, where there is one (not in most VMs).
  if (std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); f) {
    double kHz = 0;
    if (f >> kHz && kHz > 0) c.maxMHz = std::max(c.maxMHz, kHz / 1000);
  }
  // The highest cache level cpu0 has.
  int bestLevel = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level(dir + "level"), size(dir + "size");
    int l = 0;
    std::string s;
    if (!(level >> l) || !(size >> s)) continue;
    if (l >= bestLevel) {
      bestLevel = l;
      c.lastLevelCacheBytes = sizeOf(s);
    }
  }
  return c;
}

}  // namespace tessel::support
