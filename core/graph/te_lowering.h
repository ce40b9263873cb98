// Graph nodes to tensor expressions: the compute definition of a set of
// nodes (a fused subgraph, or a whole small graph), built from te's operator
// library. Values produced outside the set and initializers become
// placeholders; values of the set read outside it (or graph outputs) become
// the DAG's outputs.
#pragma once

#include <map>
#include <set>
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

// What lowering needs to know of the whole graph: the values stored NHWC and
// the readers of every value. Made once per graph, so that lowering all the
// groups of a plan stays linear in the graph.
struct LoweringContext {
  std::set<std::string> nhwcValues;  // with LoweringOptions::imageLayout NHWC
  std::map<std::string, std::vector<size_t>> readers;
  std::set<std::string> graphOutputs;
};
LoweringContext makeLoweringContext(const Graph& g, const LoweringOptions& options);

// `nodes`: indices into g.nodes, in topological order. GraphError naming the
// node for an op that cannot be lowered.
LoweredSubgraph lowerSubgraph(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& options = {});
// The same with the graph's context made already (makeLoweringContext with
// the same options).
LoweredSubgraph lowerSubgraph(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& options,
                              const LoweringContext& context);

}  // namespace tessel::graph
