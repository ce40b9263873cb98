// The oneDNN executor: runs a model graph with oneDNN's primitives, as
// ONNX Runtime's and OpenVINO's CPU paths do (weights reordered once into the
// layouts oneDNN chooses, activations left in its blocked layouts between
// primitives, conv+bias+eltwise and conv+sum fused as post-ops), to time
// `tessel run --compare onednn` against the vendor library end to end.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "reference/reference_run.h"

namespace tessel::reference {

// Whether this build has oneDNN.
bool onednnAvailable();

// Runs the graph (initializers materialised, NCHW as in the graph) with
// oneDNN's primitives on `threads` OpenMP threads: a warm-up, then `repeats`
// timed runs. GraphError naming the node for an op it cannot run; a build
// without oneDNN throws std::runtime_error saying so.
ReferenceRun runWithOnednn(const graph::Graph& g, const std::map<std::string, runtime::HostTensor>& inputs, int threads,
                           int repeats = 5);

// The steps the graph compiles to, in run order: each named by the graph node
// it starts at (a fused chain by its first node), "reorder" for a change of
// layout. Shows what was fused; GraphError as runWithOnednn.
std::vector<std::string> onednnSteps(const graph::Graph& g);

}  // namespace tessel::reference
