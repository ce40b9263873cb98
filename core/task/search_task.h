// A tuning task: one compute definition at fixed shapes for one target. Below
// measure/ and search/, which both take it.
#pragma once

#include <string>
#include <vector>

#include "te/compute_dag.h"

namespace tessel::task {

struct SearchTask {
  std::string op;              // operator name, or a fused subgraph's name
  std::vector<int64_t> shape;  // as given to tune-op
  std::string target = "cpu";
  std::string layout;  // "nchw"/"nhwc" for image ops, empty for the others
  te::ComputeDAG dag;
  std::string key;  // workload key: stable across runs
  double flops = 0;
};

// The layout image ops are tuned in by default: NHWC on the CPU (channels
// vectorise, as in Ansor's CPU results), NCHW on CUDA.
std::string defaultLayout(const std::string& target);

// Builds the task of a library operator (throws std::invalid_argument). An
// empty layout means the target's default; ops without images ignore it.
SearchTask makeOperatorTask(const std::string& op, const std::vector<int64_t>& shape, const std::string& target,
                            const std::string& layout = "");
// Key from the op name, shape and a hash of the compute definition.
std::string workloadKey(const std::string& op, const std::vector<int64_t>& shape, const te::ComputeDAG& dag);

}  // namespace tessel::task
