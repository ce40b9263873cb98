// A tuning task: one compute definition at fixed shapes for one target.
#pragma once

#include <string>
#include <vector>

#include "te/compute_dag.h"

namespace tessel::search {

struct SearchTask {
  std::string op;              // operator name, or a fused subgraph's name
  std::vector<int64_t> shape;  // as given to tune-op
  std::string target = "cpu";
  te::ComputeDAG dag;
  std::string key;  // workload key: stable across runs
  double flops = 0;
};

// Builds the task of a library operator (throws std::invalid_argument).
SearchTask makeOperatorTask(const std::string& op, const std::vector<int64_t>& shape, const std::string& target);
// Key from the op name, shape and a hash of the compute definition.
std::string workloadKey(const std::string& op, const std::vector<int64_t>& shape, const te::ComputeDAG& dag);

}  // namespace tessel::search
