// Whether something else had the CPUs while we timed: other processes' busy
// time and the hypervisor's steal time over a window, read from /proc/stat and
// this process's own CPU time. A spread check only sees contention that hits
// some repeats and not others; this also sees contention that slows all of
// them alike (a neighbour VM on the same host, a compile in the background).
#pragma once

#include <string>

namespace tessel::support {

// One reading of the machine's CPU accounting (all in CPU-seconds).
struct CpuSample {
  bool valid = false;       // false where /proc/stat cannot be read
  double wallSeconds = 0;   // steady clock
  double busySeconds = 0;   // every CPU's user+nice+system+irq+softirq time
  double stealSeconds = 0;  // time the hypervisor gave the VM's CPUs to others
  double selfSeconds = 0;   // this process's user+system time, all threads
};

CpuSample sampleCpu();

// What others took between two samples, as a share of the window's CPU time
// (wall seconds x online CPUs).
struct Contention {
  bool known = false;      // both samples valid and the window not empty
  double othersShare = 0;  // other processes' busy time
  double stealShare = 0;   // steal time
};

Contention contentionBetween(const CpuSample& before, const CpuSample& after);

// Above these shares a timing is disturbed. /proc/stat counts in clock ticks
// (10 ms at the usual 100 Hz) while rusage is exact, so a window of a few
// hundred milliseconds is read only to a few percent: the limits leave room
// for that and for the system's own daemons.
constexpr double kOthersShareLimit = 0.10;
constexpr double kStealShareLimit = 0.05;

// Empty when the window was quiet; otherwise what took the CPUs and how much,
// e.g. "other processes used 35 % of the CPUs".
std::string describeContention(const Contention& c);

}  // namespace tessel::support
