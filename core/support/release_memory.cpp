#include "support/release_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tessel::support {

void releaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace tessel::support
