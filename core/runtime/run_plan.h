// The plan of a graph run, made once when a model is loaded: the kernels'
// calling interfaces, the layout conversions between them, the buffers every
// step reads and writes, their lifetimes, and where each lives in the arena.
// No compiler is involved, so the plan of any model can be made and checked
// (tests, `tessel run`'s memory figures) without building its kernels.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/te_lowering.h"
#include "lower/loop_nest.h"
#include "runtime/memory_plan.h"
#include "runtime/storage_layout.h"

namespace tessel::runtime {

// What a group's kernel reads and writes, in its argument order.
struct KernelInterface {
  std::string symbol;
  size_t group = 0;
  std::vector<std::string> inputs, outputs;  // graph values
  std::vector<Storage> inStorage, outStorage;
  std::vector<int64_t> inSize, outSize;  // elements
};

// Binds a lowered function's arguments to the graph values of its subgraph
// (throws std::runtime_error for an argument that matches none).
KernelInterface kernelInterface(const graph::Graph& g, const std::vector<size_t>& group, size_t groupIndex,
                                const graph::LoweredSubgraph& ls, const lower::LoweredFunc& f,
                                const std::string& symbol);

// A value in one storage: an intermediate tensor (placed in the arena) or a
// constant (converted once, kept apart).
struct PlannedBuffer {
  std::string value;
  Storage storage = Storage::Plain;
  std::vector<int64_t> shape;
  int64_t elements = 0;
  bool constant = false;
  // Alive from the step that writes it to the last that reads it. Step 0
  // copies the inputs in, steps 1..n are the run's steps, n + 1 copies the
  // outputs out.
  int firstStep = 0, lastStep = 0;
  int64_t offset = -1;  // bytes into the arena; -1 for a constant
};

struct PlannedStep {
  bool convert = false;
  size_t kernel = 0;        // a kernel step: index into the interfaces
  size_t src = 0, dst = 0;  // a conversion step: buffers
  std::string name;         // the kernel's symbol, or "convert VALUE NHWC->plain"
  int group = -1;           // the kernel's group; -1 for a conversion
  std::string value;        // a conversion's value
};

struct RunPlan {
  std::vector<PlannedBuffer> buffers;
  std::vector<PlannedStep> steps;
  std::vector<std::vector<size_t>> kernelArgs;                // per kernel: buffers in argument order
  std::vector<std::pair<std::string, size_t>> inputBuffers;   // graph input -> buffer copied into
  std::vector<std::pair<std::string, size_t>> outputBuffers;  // graph output -> buffer copied out of
  MemoryPlan memory;                                          // the arena
  std::vector<size_t> arenaBuffers;                           // buffers placed, in memory.offsets order
};

// Plans a run of `kernels` (in order) over graph `g`; `constants` are the
// values computed before any run (weights, Constant nodes). A graph input is
// copied in the layout of its first reader; a value read in another layout
// than the one written gets one conversion, just before its first such reader.
// Throws graph::GraphError for a kernel that reads a value no earlier kernel
// produces, or a graph output nothing computes.
RunPlan planRun(const graph::Graph& g, const std::vector<KernelInterface>& kernels,
                const std::set<std::string>& constants);

// The first fault of a plan, or "" when it is sound: two buffers alive at the
// same step sharing memory, a step reading a buffer outside its lifetime, a
// kernel whose arguments overlap. For tests and assertions.
std::string checkRunPlan(const RunPlan& plan);

}  // namespace tessel::runtime
