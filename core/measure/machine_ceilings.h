// The roofline's ceilings of this machine, as Nsight Compute draws them for
// a GPU: the peak FMA throughput its cores can reach (from what the CPU says
// of itself: float lanes of an FMA x FMA pipes x 2 FLOP x clock x the
// kernels' threads), and the bandwidth of its memory and of its last-level
// cache, measured by a small STREAM-like triad (a[i] = b[i] + s c[i]) on the
// kernels' threads. Measured once (about a second) and kept in the user's
// cache folder, keyed by the CPU, its threads and vector width.
#pragma once

#include <cstddef>
#include <string>

#include "target/target.h"

namespace tessel::measure {

struct MachineCeilings {
  std::string cpu;           // the CPU's model name
  int threads = 0;           // the kernels' threads
  int vectorLanes = 0;       // float32 lanes of the target's widest vector
  int fmaLanesPerCycle = 0;  // float FMAs a core starts each cycle (lanes x pipes, halves where split)
  double clockGHz = 0;       // the highest clock the CPU reports
  double peakGflops = 0;     // 2 x fmaLanesPerCycle x clockGHz x threads
  double dramGBps = 0;       // triad over arrays far beyond the last-level cache
  double llcGBps = 0;        // triad over arrays that fit in it
  size_t llcBytes = 0;       // the last-level cache (0: unknown; then no LLC roof)
  std::string measured;      // when the bandwidths were measured (ISO 8601, UTC)

  // GFLOP/s a kernel of `intensity` FLOP/byte can reach: under the LLC roof
  // when its `workingSetBytes` fit in the last-level cache, else under DRAM's.
  double attainableGflops(double intensity, double workingSetBytes) const;
  bool fitsInCache(double workingSetBytes) const { return llcBytes > 0 && workingSetBytes <= double(llcBytes); }
};

// Peak from the CPU's description for `target` (a CPU target); the
// bandwidths measured now. std::invalid_argument for a CUDA target.
MachineCeilings measureCeilings(const target::Target& target);

// $XDG_CACHE_HOME/tessel/ceilings.json, else ~/.cache/tessel/ceilings.json.
std::string defaultCeilingsFile();
// The ceilings kept in `cacheFile` when they are this machine's for
// `target`, else measured and written there (a file that cannot be written
// is not an error: the ceilings are measured again next time).
MachineCeilings cachedCeilings(const target::Target& target, const std::string& cacheFile = defaultCeilingsFile());

}  // namespace tessel::measure
