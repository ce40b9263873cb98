// Runs graphs on the CPU: each group of nodes is lowered to te, compiled into
// a kernel (the naive program, or a tuned schedule when one is given) and
// called in this process on float32 buffers.
//
// Everything a run needs is decided when the executor is built: constants
// (weights) are converted once into the layout each kernel reads them in;
// activations stay in the layout their producer writes, with a conversion
// step only where a consumer needs another layout; every intermediate tensor
// has a fixed place in one 64-byte aligned arena, shared with tensors whose
// lifetimes do not overlap (memory_plan.h); every kernel's argument array is
// fixed. A run copies the inputs in, calls the steps and copies the outputs
// out: it allocates nothing else, and every kernel runs on the same pinned
// OpenMP team (thread_team.h), as in the measuring worker.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/te_lowering.h"
#include "schedule/steps.h"
#include "target/target.h"

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
  // The CPU target the kernels are built for (flags, vectors) and, where
  // `threads` is 0, the threads they run on.
  target::Target target = target::Target::host();
  int threads = 0;         // OpenMP threads of every kernel (0: the target's; one per core this process may use)
  bool pinThreads = true;  // each thread on its own core, as in the measuring worker
};

// One step of a run.
struct RunStep {
  std::string name;   // the kernel's symbol, or "convert VALUE NHWC->plain"
  int group = -1;     // the node group the kernel runs; -1 for a layout conversion
  std::string value;  // a conversion's value
};

struct MemoryStats {
  int64_t arenaBytes = 0;      // intermediate tensors, with sharing
  int64_t unsharedBytes = 0;   // the same tensors without sharing
  int64_t constantBytes = 0;   // weights and other constants, in the layouts the kernels read
  size_t tensors = 0;          // intermediate tensors placed in the arena
  size_t packedConstants = 0;  // constant arguments a kernel reads packed (lower/layout_rewrite.h)
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

  // The steps of a run, in order (kernels and layout conversions).
  const std::vector<RunStep>& steps() const;
  // With profiling on (or TESSEL_PROFILE set), the seconds each step took in
  // the last run, same order as steps(); empty otherwise. TESSEL_PROFILE also
  // prints them on stderr.
  void setProfiling(bool on);
  const std::vector<double>& stepSeconds() const;
  MemoryStats memory() const;
  // The team every kernel runs on.
  int threads() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace tessel::runtime
