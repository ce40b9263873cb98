// Evicting a kernel's buffers from every cache level before it is timed, so
// the tuner measures what a kernel meets inside a model (weights and
// activations coming from memory) rather than a loop over warm data: Ansor's
// CPU cache flush. On x86 the buffers' lines are flushed with CLFLUSHOPT (or
// CLFLUSH), which evicts them from the caches of every core, and the cost is
// proportional to the buffers, not to the size of the last-level cache.
#pragma once

#include <cstddef>
#include <vector>

#include "measure/cache_state.h"

namespace tessel::measure {

// Writes back and evicts the cache lines of [data, data + bytes) from every
// cache of the machine; returns once they are gone.
void evictFromCaches(const void* data, size_t bytes);

// Pushes whatever the cores' private caches (L1, L2) hold out to the shared
// last-level cache: every thread of the OpenMP team reads a buffer of its own
// larger than its L2. Data a kernel finds there afterwards comes from L3, as
// the activations a kernel reads inside a model do.
void evictPrivateCaches();

// A buffer a timed call reads or writes, and whether it holds weights.
struct CallBuffer {
  const void* data = nullptr;
  size_t bytes = 0;
  bool weights = false;
};

// Puts a call's buffers in `state` before it is timed: Cold evicts every one
// to memory; Model evicts the weights and then evictPrivateCaches(); Warm
// leaves them. The worker and the peers of --compare both call it.
void enterCacheState(CacheState state, const std::vector<CallBuffer>& buffers);

// The instruction used: "clflushopt", "clflush", or "overwrite" (other
// machines: a buffer larger than the last-level cache is written instead).
const char* cacheFlushMethod();

}  // namespace tessel::measure
