// Tessel's version, one string for every executable, the export manifest and
// the package: the project version of the top-level CMakeLists.txt.
#pragma once

namespace tessel::support {

const char* version();

}  // namespace tessel::support
