// The oneDNN executor's compiled program and the state of its compilation.
// Internal to core/reference/ (it includes oneDNN's header):
// onednn_program.cpp holds the values, constants and reorders,
// onednn_compute_ops.cpp convolution, matmul and pooling with their fused
// post-ops, onednn_other_ops.cpp the element-wise, normalisation and data
// movement ops, onednn_executor.cpp the walk over the graph and the timing.
#pragma once

#include <functional>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/graph.h"

namespace tessel::reference::onednn {

using dnnl::memory;
using graph::GraphError;
using graph::Node;
using Dims = memory::dims;

[[noreturn]] inline void fail(const Node& n, const std::string& what) {
  throw GraphError(n.describe() + ": " + what);
}

memory::desc plainDesc(const Dims& dims);  // row-major f32 (rank 0 as [1])
memory::desc anyDesc(const Dims& dims);    // f32, the primitive chooses the layout
int64_t elementsOf(const Dims& dims);

// One step of a run: a oneDNN primitive with its arguments, or (for what
// oneDNN has no primitive for: Gather) a function on the host.
struct Step {
  std::string node;  // the graph node it runs (the first of a fused chain)
  dnnl::primitive primitive;
  std::unordered_map<int, memory> args;
  std::function<void()> host;
};

// An element-wise function as oneDNN's eltwise algorithm and its alpha, beta
// (a post-op, or a primitive of its own).
struct Eltwise {
  dnnl::algorithm alg;
  float alpha = 0, beta = 0;
};

// The graph compiled to oneDNN steps: values live in memories in the
// layouts their producers chose; constants are reordered once, here.
class Program {
 public:
  Program(const graph::Graph& g, dnnl::engine& engine, dnnl::stream& stream);

  const graph::Graph& graph() const { return g_; }
  dnnl::engine& engine() { return engine_; }
  dnnl::stream& stream() { return stream_; }

  // The value's logical dimensions (rank 0 as [1]).
  Dims dimsOf(const std::string& name) const;
  bool isConstant(const std::string& name) const;
  bool isFloatConstant(const std::string& name) const;
  std::vector<float> constantFloats(const std::string& name) const;
  std::vector<int64_t> constantInts(const std::string& name) const;
  bool defined(const std::string& name) const { return values_.count(name) != 0; }

  // The memory holding a value now, in its producer's layout.
  memory value(const std::string& name);
  // The value in row-major layout: a reorder step the first time it is not.
  memory plainValue(const std::string& name);
  // The value in layout `wanted`: itself, or a reorder into a new memory
  // (done now for a constant, a step of the run otherwise).
  memory valueAs(const std::string& name, const memory::desc& wanted);
  void define(const std::string& name, const memory& m);
  // A row-major view of `name`'s data with other dimensions (Reshape, ...).
  memory viewOf(const std::string& name, const Dims& dims);

  // Whether node `at` is the last reader of `name`'s buffer (no later node
  // and no graph output reads it, nor any view of it): its memory may be
  // written in place.
  bool lastReadAt(const std::string& name, size_t at) const;

  void add(Step step) { steps_.push_back(std::move(step)); }
  // A step that reorders (or copies) `from` into `to`.
  void reorderInto(const memory& from, const memory& to);
  // The constant `name` (stored row-major as in the graph) seen with
  // descriptor `given` (grouped or transposed weights), reordered now,
  // outside the timed runs, into `wanted`.
  memory constantAs(const std::string& name, const memory::desc& given, const memory::desc& wanted);

  // Runs every step once.
  void run();
  const std::vector<Step>& steps() const { return steps_; }

 private:
  memory reorderStep(const memory& from, const memory::desc& wanted);

  const graph::Graph& g_;
  dnnl::engine& engine_;
  dnnl::stream& stream_;
  std::map<std::string, memory> values_;
  std::map<std::string, memory> plain_;           // row-major copies of blocked values
  std::map<std::string, size_t> lastReader_;      // value -> index of the last node reading it
  std::map<void*, std::set<std::string>> views_;  // buffer -> the values sharing it
  std::vector<Step> steps_;
};

// The op builders: each compiles one node (or a chain starting at it) into
// steps and defines its outputs.

// A Conv, MatMul or Gemm with the nodes fused after it: a bias add
// (MatMul), an Add of a value computed before it (a sum post-op), element-
// wise functions. `chain` holds the fused nodes' indices, last output last.
struct Chain {
  std::optional<size_t> bias;  // an Add of a constant row (MatMul)
  std::optional<size_t> sum;   // an Add of another value
  std::string sumInput;        // that value
  std::vector<std::pair<size_t, std::vector<Eltwise>>> eltwise;
  std::string output;  // the chain's last value
};
void buildConv(Program& p, const Node& n, size_t at, const Chain& chain);
void buildMatmul(Program& p, const Node& n, size_t at, const Chain& chain);
void buildPool(Program& p, const Node& n);

// The node as element-wise functions of its first input (a constant second
// operand of Add/Sub/Mul/Div folded in), or nullopt.
std::optional<std::vector<Eltwise>> eltwiseOf(const Program& p, const Node& n);
void buildEltwise(Program& p, const Node& n, const std::vector<Eltwise>& fns);
void buildBinary(Program& p, const Node& n);
void buildSoftmax(Program& p, const Node& n);
void buildLayerNorm(Program& p, const Node& n);
void buildReduce(Program& p, const Node& n);
// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout: views.
void buildView(Program& p, const Node& n);
void buildTranspose(Program& p, const Node& n);
void buildConcat(Program& p, const Node& n);
void buildGather(Program& p, const Node& n);

}  // namespace tessel::reference::onednn
