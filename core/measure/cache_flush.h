// Evicting a kernel's buffers from every cache level before it is timed, so
// the tuner measures what a kernel meets inside a model (weights and
// activations coming from memory) rather than a loop over warm data: Ansor's
// CPU cache flush. On x86 the buffers' lines are flushed with CLFLUSHOPT (or
// CLFLUSH), which evicts them from the caches of every core, and the cost is
// proportional to the buffers, not to the size of the last-level cache.
#pragma once

#include <cstddef>

namespace tessel::measure {

// Writes back and evicts the cache lines of [data, data + bytes) from every
// cache of the machine; returns once they are gone.
void evictFromCaches(const void* data, size_t bytes);

// The instruction used: "clflushopt", "clflush", or "overwrite" (other
// machines: a buffer larger than the last-level cache is written instead).
const char* cacheFlushMethod();

}  // namespace tessel::measure
