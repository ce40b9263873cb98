// Tasks of a model: one per distinct fused subgraph (identical subgraphs,
// e.g. the repeated blocks of a ResNet stage, share one task with a weight).
#pragma once

#include <string>
#include <vector>

#include "fusion/fusion_plan.h"
#include "graph/te_lowering.h"
#include "task/search_task.h"

namespace tessel::fusion {

struct GraphTask {
  std::string key;               // workload key (name, output shape, hash of the definition)
  std::string name;              // the subgraph's ops: "conv2d_add_relu"
  std::vector<std::string> ops;  // its ONNX op types, in order
  std::vector<int64_t> shape;    // shape of its (first) output
  std::string layout;            // "nchw"/"nhwc" when it has image ops (conv, pools), else ""
  te::ComputeDAG dag;            // with canonical tensor names
  double flops = 0;              // of one occurrence
  int weight = 0;                // occurrences in the model
  std::vector<size_t> groups;    // the plan's groups it stands for
};

// How a task is named to a user: its ops and output shape,
// "conv2d_add_relu 1x56x56x64" (tasks of one kind differ by their shapes).
std::string taskLabel(const std::string& name, const std::vector<int64_t>& shape);
inline std::string taskLabel(const GraphTask& t) {
  return taskLabel(t.name, t.shape);
}

// Groups that are only views (reshape, flatten, ...) need no kernel and
// give no task.
std::vector<GraphTask> extractTasks(const graph::Graph& g, const FusionPlan& plan,
                                    const graph::LoweringOptions& options = {});

// The same DAG with placeholders named in0, in1, ... and stages t0, t1, ...
// in order: subgraphs that compute the same thing get the same text.
te::ComputeDAG canonicalizeNames(const te::ComputeDAG& dag);

// For a target string (throws std::invalid_argument for a bad one).
task::SearchTask toSearchTask(const GraphTask& t, const target::Target& target);

}  // namespace tessel::fusion
