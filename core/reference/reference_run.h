// What a reference executor (LibTorch's ATen ops, oneDNN's primitives)
// returns for one graph: its outputs and the times of its timed runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/graph_executor.h"

namespace tessel::reference {

struct ReferenceRun {
  std::map<std::string, runtime::HostTensor> outputs;  // graph outputs by name
  double seconds = 0;                                  // median of `repeats` timed runs after a warm-up
  std::vector<double> times;                           // seconds of every timed run
};

// The median of `times` (0 for none).
double medianSeconds(std::vector<double> times);

}  // namespace tessel::reference
