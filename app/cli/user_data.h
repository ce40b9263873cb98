// tessel run's data in NumPy files: the user's inputs (--inputs), the
// outputs to compare with (--expect) and Tessel's outputs (--save-outputs).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "graph/graph.h"
#include "runtime/graph_executor.h"

namespace tessel::cli {

struct UserInputs {
  std::map<std::string, runtime::HostTensor> floats;  // by graph input name
  frontend::IntegerInputs ints;                       // integer inputs (token ids), bound as constants
};

// The arrays of a .npy / .npz file for the model's inputs (as loaded, before
// integer inputs are bound): matched by name or position, with the input's
// dtype kind and exact shape; runtime::NumpyError naming the input otherwise.
UserInputs readUserInputs(const std::string& path, const std::vector<graph::ValueInfo>& inputs);

// Float arrays for each of `outputs` (by name or position), shapes checked.
std::map<std::string, runtime::HostTensor> readExpectedOutputs(const std::string& path, const graph::Graph& g);

// The largest absolute difference over every output, and the largest
// absolute expected value it is judged against.
struct OutputComparison {
  double maxAbsErr = 0, maxAbsRef = 0;
  std::string worstOutput;  // where the largest difference is
  bool withinTolerance() const;
};
OutputComparison compareOutputs(const std::map<std::string, runtime::HostTensor>& ours,
                                const std::map<std::string, runtime::HostTensor>& expected);

// Tessel's outputs, in the graph's output order, as an .npz.
void saveOutputs(const std::string& path, const graph::Graph& g,
                 const std::map<std::string, runtime::HostTensor>& outputs);

}  // namespace tessel::cli
