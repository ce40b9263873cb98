// TorchScript import in a build without LibTorch: says so at run time.
// Compiled into tessel_reference (core/reference/CMakeLists.txt).
#include <stdexcept>

#include "frontend/torchscript_import.h"

namespace tessel::frontend {

bool torchscriptAvailable() {
  return false;
}

std::vector<std::string> torchscriptAtenOps() {
  return {};
}

graph::Graph importTorchScript(const std::string& path, const std::vector<std::vector<int64_t>>&) {
  throw std::runtime_error("this build has no LibTorch: cannot import the TorchScript model '" + path +
                           "' (install libtorch-dev and rebuild)");
}

}  // namespace tessel::frontend
