// The reference executor: runs a model graph with LibTorch's ATen ops (its
// threads set to the machine's cores), to check and time `tessel run`
// against. LibTorch's headers stay in this folder's sources.
#pragma once

#include <map>
#include <string>

#include "graph/graph.h"
#include "reference/reference_run.h"
#include "runtime/graph_executor.h"

namespace tessel::reference {

// Whether this build has LibTorch.
bool libtorchAvailable();

// Whether the reference executor runs `op` (an ONNX op type).
bool referenceRuns(const std::string& op);

// Runs the graph (initializers materialised, NCHW as in the graph) with ATen
// ops; GraphError naming the node for an op it cannot run.
ReferenceRun runWithLibTorch(const graph::Graph& g, const std::map<std::string, runtime::HostTensor>& inputs,
                             int threads, int repeats = 5);

}  // namespace tessel::reference
