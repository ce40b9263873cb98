// The oneDNN executor in a build without oneDNN: says so at run time.
#include <stdexcept>

#include "reference/onednn_executor.h"

namespace tessel::reference {

namespace {

[[noreturn]] void unavailable() {
  throw std::runtime_error(
      "this build has no oneDNN: the oneDNN executor is left out (install libdnnl-dev and rebuild)");
}

}  // namespace

bool onednnAvailable() {
  return false;
}

ReferenceRun runWithOnednn(const graph::Graph&, const std::map<std::string, runtime::HostTensor>&, int, int) {
  unavailable();
}

std::vector<std::string> onednnSteps(const graph::Graph&) {
  unavailable();
}

}  // namespace tessel::reference
