#include "support/cpu_contention.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace tessel::support {

namespace {

double secondsOf(const timeval& t) {
  return double(t.tv_sec) + 1e-6 * double(t.tv_usec);
}

}  // namespace

CpuSample sampleCpu() {
  CpuSample s;
  s.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!stat || !std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return s;
  // cpu  user nice system idle iowait irq softirq steal guest guest_nice
  std::istringstream in(line.substr(4));
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  if (!in) return s;  // a kernel without the steal field (before 2.6.11)
  const double tick = 1.0 / double(sysconf(_SC_CLK_TCK));
  s.busySeconds = double(user + nice + system + irq + softirq) * tick;
  s.stealSeconds = double(steal) * tick;
  rusage self{};
  if (getrusage(RUSAGE_SELF, &self) != 0) return s;
  s.selfSeconds = secondsOf(self.ru_utime) + secondsOf(self.ru_stime);
  s.valid = true;
  return s;
}

Contention contentionBetween(const CpuSample& before, const CpuSample& after) {
  Contention c;
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const double window = (after.wallSeconds - before.wallSeconds) * double(cpus > 0 ? cpus : 1);
  if (!before.valid || !after.valid || window <= 0) return c;
  c.known = true;
  // The kernel charges ticks and rusage differently (ticks vs. exact
  // runtime): a small negative difference is rounding, not negative load.
  const double others = (after.busySeconds - before.busySeconds) - (after.selfSeconds - before.selfSeconds);
  // Ticks come in 1/CLK_TCK steps: over a window of a few milliseconds one tick
  // more can read as more than the whole machine, which no process can use.
  c.othersShare = std::clamp(others / window, 0.0, 1.0);
  c.stealShare = std::clamp((after.stealSeconds - before.stealSeconds) / window, 0.0, 1.0);
  return c;
}

std::string describeContention(const Contention& c) {
  if (!c.known) return {};
  std::string why;
  char buf[128];
  if (c.othersShare > kOthersShareLimit) {
    std::snprintf(buf, sizeof buf, "other processes used %.0f %% of the CPUs", 100 * c.othersShare);
    why = buf;
  }
  if (c.stealShare > kStealShareLimit) {
    std::snprintf(buf, sizeof buf, "the hypervisor stole %.0f %% of the CPUs' time", 100 * c.stealShare);
    why += (why.empty() ? "" : ", ") + std::string(buf);
  }
  return why;
}

}  // namespace tessel::support
