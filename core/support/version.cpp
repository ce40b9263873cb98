#include "support/version.h"

namespace tessel::support {

// TESSEL_VERSION is defined for this file only (core/CMakeLists.txt), so a new
// version rebuilds one file.
const char* version() {
  return TESSEL_VERSION;
}

}  // namespace tessel::support
