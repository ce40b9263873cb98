// The oneDNN executor: the graph walked in order, each node (or a Conv /
// MatMul / Gemm with the bias, sum and element-wise nodes it absorbs as
// post-ops) compiled to oneDNN primitives once, then run and timed.
#include "reference/onednn_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <set>

#include "graph/shape_utils.h"
#include "reference/onednn_program.h"
#include "runtime/thread_team.h"

namespace tessel::reference {

namespace onednn {

namespace {

// The node that reads `value` when it is the only reader (and `value` is no
// graph output), else nullopt.
std::optional<size_t> soleReader(const graph::Graph& g, const std::string& value) {
  if (std::find(g.outputs.begin(), g.outputs.end(), value) != g.outputs.end()) return std::nullopt;
  const std::vector<size_t> readers = g.consumers(value);
  if (readers.size() != 1) return std::nullopt;
  return readers[0];
}

// The Add's operand other than `value` ("" when both are `value`).
std::string otherOperand(const Node& add, const std::string& value) {
  if (add.op != "Add" || add.inputs.size() != 2) return "";
  if (add.inputs[0] == value) return add.inputs[1] == value ? "" : add.inputs[1];
  return add.inputs[1] == value ? add.inputs[0] : "";
}

// The nodes after Conv / MatMul / Gemm node `at` that its primitive computes
// as well: for MatMul an Add of a constant row (the bias), then an Add of a
// value computed before (sum), then element-wise functions; each only where
// it is the sole reader of the value before it and keeps its shape.
Chain chainAfter(const Program& p, size_t at) {
  const graph::Graph& g = p.graph();
  Chain chain;
  std::string value = g.nodes[at].outputs.at(0);
  const Dims dims = p.dimsOf(value);
  std::optional<size_t> next = soleReader(g, value);
  auto advance = [&](size_t node) {
    value = g.nodes[node].outputs.at(0);
    next = soleReader(g, value);
  };
  auto keepsShape = [&](size_t node) { return p.dimsOf(g.nodes[node].outputs.at(0)) == dims; };
  if (g.nodes[at].op == "MatMul" && next && keepsShape(*next)) {
    const std::string row = otherOperand(g.nodes[*next], value);
    if (!row.empty() && p.isFloatConstant(row) && elementsOf(p.dimsOf(row)) == dims.back() &&
        p.dimsOf(row).back() == dims.back()) {
      chain.bias = *next;
      advance(*next);
    }
  }
  if (next && keepsShape(*next)) {
    const std::string added = otherOperand(g.nodes[*next], value);
    if (!added.empty() && p.defined(added) && !p.isConstant(added) && p.dimsOf(added) == dims) {
      chain.sum = *next;
      chain.sumInput = added;
      advance(*next);
    }
  }
  while (next && keepsShape(*next)) {
    const std::optional<std::vector<Eltwise>> fns = eltwiseOf(p, g.nodes[*next]);
    if (!fns) break;
    chain.eltwise.emplace_back(*next, *fns);
    advance(*next);
  }
  chain.output = value;
  return chain;
}

// The nodes of `chain` after its first.
std::vector<size_t> absorbed(const Chain& chain) {
  std::vector<size_t> nodes;
  if (chain.bias) nodes.push_back(*chain.bias);
  if (chain.sum) nodes.push_back(*chain.sum);
  for (const auto& [node, fns] : chain.eltwise)
    nodes.push_back(node);
  return nodes;
}

void compileNode(Program& p, const Node& n, size_t at, std::set<size_t>& done) {
  const std::string& op = n.op;
  if (op == "Conv" || op == "MatMul" || op == "Gemm") {
    const Chain chain = chainAfter(p, at);
    if (op == "Conv")
      buildConv(p, n, at, chain);
    else
      buildMatmul(p, n, at, chain);
    for (size_t node : absorbed(chain))
      done.insert(node);
  } else if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool") {
    buildPool(p, n);
  } else if (std::optional<std::vector<Eltwise>> fns = eltwiseOf(p, n)) {
    buildEltwise(p, n, *fns);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min") {
    buildBinary(p, n);
  } else if (op == "Softmax") {
    buildSoftmax(p, n);
  } else if (op == "LayerNormalization") {
    buildLayerNorm(p, n);
  } else if (op.rfind("Reduce", 0) == 0) {
    buildReduce(p, n);
  } else if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" ||
             op == "Dropout") {
    buildView(p, n);
  } else if (op == "Transpose") {
    buildTranspose(p, n);
  } else if (op == "Concat") {
    buildConcat(p, n);
  } else if (op == "Gather") {
    buildGather(p, n);
  } else {
    fail(n, "op '" + op + "' is not supported by the oneDNN executor");
  }
}

// Every node compiled in graph order; the graph's outputs made row-major.
std::map<std::string, memory> compile(Program& p) {
  const graph::Graph& g = p.graph();
  std::set<size_t> done;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (done.count(i)) continue;
    const Node& n = g.nodes[i];
    try {
      compileNode(p, n, i, done);
    } catch (const dnnl::error& e) {
      fail(n, std::string("oneDNN refused it: ") + e.what());
    }
  }
  std::map<std::string, memory> outputs;
  for (const std::string& name : g.outputs)
    outputs[name] = p.plainValue(name);
  return outputs;
}

}  // namespace

}  // namespace onednn

bool onednnAvailable() {
  return true;
}

namespace {

// The graph compiled for the given inputs (which it reads in place), on its
// own engine and stream.
class Compiled {
 public:
  Compiled(const graph::Graph& g, const std::map<std::string, runtime::HostTensor>& inputs)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_), program_(g, engine_, stream_) {
    given_.reserve(g.inputs.size());
    for (const graph::ValueInfo& v : g.inputs) {
      auto it = inputs.find(v.name);
      if (it == inputs.end()) throw graph::GraphError("graph input '" + v.name + "' is not given");
      if (v.dtype != graph::DType::Float32)
        throw graph::GraphError("input '" + v.name + "' is " + graph::dtypeName(v.dtype) +
                                ": the oneDNN executor computes with float32 values");
      const runtime::HostTensor& h = it->second;
      if (int64_t(h.data.size()) != v.numElements() || (!v.shape.empty() && h.shape != v.shape))
        throw graph::GraphError("input '" + v.name + "' has shape " + graph::shapeString(h.shape) +
                                ", the graph expects " + graph::shapeString(v.shape));
      given_.push_back(h);
      program_.define(v.name,
                      onednn::memory(onednn::plainDesc(program_.dimsOf(v.name)), engine_, given_.back().data.data()));
    }
    outputs_ = onednn::compile(program_);
  }

  onednn::Program& program() { return program_; }

  std::map<std::string, runtime::HostTensor> outputs() const {
    std::map<std::string, runtime::HostTensor> out;
    for (const auto& [name, m] : outputs_) {
      runtime::HostTensor& h = out[name];
      h.shape = program_.graph().values.at(name).shape;
      h.data.resize(size_t(m.get_desc().get_size() / sizeof(float)));
      std::memcpy(h.data.data(), m.get_data_handle(), h.data.size() * sizeof(float));
    }
    return out;
  }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  onednn::Program program_;
  std::vector<runtime::HostTensor> given_;  // the inputs, read in place
  std::map<std::string, onednn::memory> outputs_;
};

}  // namespace

ReferenceRun runWithOnednn(const graph::Graph& g, const std::map<std::string, runtime::HostTensor>& inputs, int threads,
                           int repeats) {
  // oneDNN sizes its work partition when a primitive is created: the thread
  // count is set first.
  const runtime::OmpThreadCount threadCount(threads);
  Compiled compiled(g, inputs);
  compiled.program().run();  // warm-up
  ReferenceRun result;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    compiled.program().run();
    result.times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  result.seconds = medianSeconds(result.times);
  result.outputs = compiled.outputs();
  return result;
}

std::vector<std::string> onednnSteps(const graph::Graph& g) {
  std::map<std::string, runtime::HostTensor> zeros;
  for (const graph::ValueInfo& v : g.inputs)
    zeros[v.name] = {v.shape, std::vector<float>(size_t(v.numElements()), 0.0f)};
  Compiled compiled(g, zeros);
  std::vector<std::string> names;
  for (const onednn::Step& step : compiled.program().steps())
    names.push_back(step.node);
  return names;
}

}  // namespace tessel::reference
