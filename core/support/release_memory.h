// Hands the heap's free pages back to the system between tuning rounds.
// A round allocates and frees hundreds of megabytes (the cost model's
// training matrices and histograms, the search's populations); glibc keeps
// what was freed mapped, so without this the tuner's resident memory climbs
// to its largest round and stays there, growing as the heap fragments.
#pragma once

namespace tessel::support {

// malloc_trim(0) where the C library is glibc; nothing elsewhere. Takes a
// few milliseconds on a heap of a few hundred megabytes.
void releaseFreeMemory();

}  // namespace tessel::support
