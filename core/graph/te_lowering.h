// Graph nodes to tensor expressions: the compute definition of a set of
// nodes (a fused subgraph, or a whole small graph), built from te's operator
// library. Values produced outside the set and initializers become
// placeholders; values of the set read outside it (or graph outputs) become
// the DAG's outputs.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "te/compute_dag.h"
#include "te/operators.h"

namespace tessel::graph {

struct LoweringOptions {
  // Storage of 4-D image activations and conv weights inside the DAG. With
  // NHWC, Conv/pool/BatchNorm and element-wise ops on their results read and
  // write NHWC, conv weights are RSCK; other ops see NCHW index semantics.
  te::Layout imageLayout = te::Layout::NCHW;
};

struct LoweredSubgraph {
  te::ComputeDAG dag;
  // Graph values bound to dag.inputs() (same order), and to dag.outputs().
  std::vector<std::string> inputValues, outputValues;
  // The storage layout of each bound value (NCHW = as in the graph).
  std::vector<te::Layout> inputLayouts, outputLayouts;
};

// `nodes`: indices into g.nodes, in topological order. GraphError naming the
// node for an op that cannot be lowered.
LoweredSubgraph lowerSubgraph(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& options = {});

}  // namespace tessel::graph
