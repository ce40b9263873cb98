// A tuning task: one compute definition at fixed shapes for one target. Below
// measure/ and search/, which both take it.
#pragma once

#include <string>
#include <vector>

#include "target/target.h"
#include "te/compute_dag.h"

namespace tessel::task {

struct SearchTask {
  std::string op;              // operator name, or a fused subgraph's name
  std::vector<int64_t> shape;  // as given to tune-op
  target::Target target = target::Target::host();
  std::string layout;  // "nchw"/"nhwc" for image ops, empty for the others
  te::ComputeDAG dag;
  std::string key;  // workload key: stable across runs
  double flops = 0;
};

// The layout image ops are tuned in by default: NHWC on the CPU (channels
// vectorise, as in Ansor's CPU results), NCHW on CUDA.
std::string defaultLayout(const target::Target& target);

// Builds the task of a library operator (throws std::invalid_argument). An
// empty layout means the target's default; ops without images ignore it.
SearchTask makeOperatorTask(const std::string& op, const std::vector<int64_t>& shape, const target::Target& target,
                            const std::string& layout = "");
// Key from the op name, shape and a hash of the compute definition.
std::string workloadKey(const std::string& op, const std::vector<int64_t>& shape, const te::ComputeDAG& dag);
// What tells one task's records from another's where several targets meet (a
// dataset, a cost model's tasks): the workload key alone for the target "cpu",
// as before targets had options, else "KEY@TARGET". The same workload on two
// targets is two tasks: their costs must not be ranked together.
std::string recordKey(const std::string& workloadKey, const target::Target& target);

}  // namespace tessel::task
