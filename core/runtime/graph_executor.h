// Runs graphs on the CPU: each group of nodes is lowered to te, compiled into
// a kernel (the naive program, or a tuned schedule when one is given) and
// called in this process on float32 buffers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/te_lowering.h"
#include "schedule/steps.h"

namespace tessel::runtime {

// A host tensor: float32, row-major, with its shape.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct ExecutorOptions {
  // Node groups, each run as one kernel (default: one group per node).
  std::vector<std::vector<size_t>> groups;
  // Per group (same index), a schedule to use instead of the naive program.
  std::map<size_t, std::vector<schedule::Step>> schedules;
  graph::LoweringOptions lowering;
  int jobs = 2;  // parallel compiler processes
};

class GraphExecutor {
 public:
  // Lowers and compiles every group (throws GraphError / std::runtime_error).
  GraphExecutor(const graph::Graph& g, ExecutorOptions options = {});
  ~GraphExecutor();
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;

  // Runs the graph: inputs by graph input name; returns the graph outputs by name.
  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace tessel::runtime
