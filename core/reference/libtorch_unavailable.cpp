// The reference executor in a build without LibTorch: says so at run time.
#include <stdexcept>

#include "reference/libtorch_executor.h"

namespace tessel::reference {

bool libtorchAvailable() {
  return false;
}

bool referenceRuns(const std::string&) {
  return false;
}

ReferenceRun runWithLibTorch(const graph::Graph&, const std::map<std::string, runtime::HostTensor>&, int, int) {
  throw std::runtime_error(
      "this build has no LibTorch: the reference executor is left out (install libtorch-dev and rebuild)");
}

}  // namespace tessel::reference
