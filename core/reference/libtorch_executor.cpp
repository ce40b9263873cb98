// The reference executor: every node of the graph is one or a few ATen calls,
// run eagerly in graph order. One of the few translation units of Tessel that
// include LibTorch's headers (with libtorch_baseline.cpp and
// torchscript_import.cpp).
#include "reference/libtorch_executor.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "reference/aten_kernels.h"

namespace tessel::reference {

namespace {

using namespace aten;

// Sets ATen's intra-op thread count for as long as it lives.
class TorchThreads {
 public:
  explicit TorchThreads(int threads) : previous_(at::get_num_threads()) {
    if (threads > 0) at::set_num_threads(threads);
  }
  ~TorchThreads() { at::set_num_threads(previous_); }
  TorchThreads(const TorchThreads&) = delete;
  TorchThreads& operator=(const TorchThreads&) = delete;

 private:
  int previous_;
};

// Numpy-style integer division truncates in ONNX; floats divide.
at::Tensor divide(const at::Tensor& a, const at::Tensor& b) {
  if (!at::isFloatingType(a.scalar_type()) && !at::isFloatingType(b.scalar_type())) return at::div(a, b, "trunc");
  return at::div(a, b);
}

// ---------------------------------------------------------------------------

Kernel unary(at::Tensor (*f)(const at::Tensor&)) {
  return [f](const Tensors& in) -> Tensors { return {f(in[0])}; };
}

Kernel binary(at::Tensor (*f)(const at::Tensor&, const at::Tensor&)) {
  return [f](const Tensors& in) -> Tensors { return {f(in[0], in[1])}; };
}

// Activations of exported models (MobileNet v3's hard ones, ...).
std::optional<Kernel> activationKernel(const Node& n) {
  const std::string& op = n.op;
  if (op == "HardSigmoid") {
    const double alpha = n.attrFloat("alpha", 0.2), beta = n.attrFloat("beta", 0.5);
    return [alpha, beta](const Tensors& in) -> Tensors { return {at::clamp(in[0] * alpha + beta, 0.0, 1.0)}; };
  }
  if (op == "HardSwish") return unary([](const at::Tensor& x) { return at::hardswish(x); });
  if (op == "LeakyRelu") {
    const double alpha = n.attrFloat("alpha", 0.01);
    return [alpha](const Tensors& in) -> Tensors { return {at::leaky_relu(in[0], alpha)}; };
  }
  if (op == "Elu") {
    const double alpha = n.attrFloat("alpha", 1.0);
    return [alpha](const Tensors& in) -> Tensors { return {at::elu(in[0], alpha)}; };
  }
  if (op == "Softplus") return unary([](const at::Tensor& x) { return at::softplus(x); });
  if (op == "Log") return unary([](const at::Tensor& x) { return at::log(x); });
  return std::nullopt;
}

// Comparisons, logic and Where (booleans are ATen's bool tensors here).
std::optional<Kernel> logicKernel(const Node& n) {
  using Cmp = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
  static const std::map<std::string, Cmp> compare = {
      {"Equal", [](const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); }},
      {"Less", [](const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); }},
      {"Greater", [](const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); }},
      {"LessOrEqual", [](const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); }},
      {"GreaterOrEqual", [](const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); }},
      {"And", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); }},
      {"Or", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); }},
      {"Xor", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_xor(a, b); }},
  };
  if (auto c = compare.find(n.op); c != compare.end()) return binary(c->second);
  if (n.op == "Not") return unary([](const at::Tensor& x) { return at::logical_not(x); });
  if (n.op == "Where")
    return [](const Tensors& in) -> Tensors { return {at::where(in[0].to(at::kBool), in[1], in[2])}; };
  if (n.op == "Mod") {
    const bool cStyle = n.attrInt("fmod", 0) != 0;
    return [cStyle](const Tensors& in) -> Tensors {
      return {cStyle ? at::fmod(in[0], in[1]) : at::remainder(in[0], in[1])};
    };
  }
  return std::nullopt;
}
// Arithmetic and the element-wise math of the graph's ops.
std::optional<Kernel> arithmeticKernel(const Node& n) {
  const std::string& op = n.op;
  if (op == "Add") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); });
  if (op == "Sub") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); });
  if (op == "Mul") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); });
  if (op == "Div") return binary(divide);
  if (op == "Pow")
    return binary([](const at::Tensor& a, const at::Tensor& b) { return at::pow(a, b.to(a.scalar_type())); });
  if (op == "Max" || op == "Min") {
    const bool isMax = op == "Max";
    return [isMax](const Tensors& in) -> Tensors {
      at::Tensor y = in[0];
      for (size_t i = 1; i < in.size(); ++i)
        y = isMax ? at::maximum(y, in[i]) : at::minimum(y, in[i]);
      return {y};
    };
  }
  if (op == "Sqrt") return unary([](const at::Tensor& x) { return at::sqrt(x); });
  if (op == "Relu") return unary([](const at::Tensor& x) { return at::relu(x); });
  if (op == "Sigmoid") return unary([](const at::Tensor& x) { return at::sigmoid(x); });
  if (op == "Tanh") return unary([](const at::Tensor& x) { return at::tanh(x); });
  if (op == "Erf") return unary([](const at::Tensor& x) { return at::erf(x); });
  if (op == "Exp") return unary([](const at::Tensor& x) { return at::exp(x); });
  if (op == "Neg") return unary([](const at::Tensor& x) { return at::neg(x); });
  if (op == "Abs") return unary([](const at::Tensor& x) { return at::abs(x); });
  if (op == "Reciprocal") return unary([](const at::Tensor& x) { return at::reciprocal(x); });
  if (op == "Gelu") {
    const std::string approximate = n.attrString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") fail(n, "approximate '" + approximate + "' is not supported");
    return [approximate](const Tensors& in) -> Tensors { return {at::gelu(in[0], approximate)}; };
  }
  if (op == "Clip") {
    const bool attrMin = n.has("min"), attrMax = n.has("max");
    const double lo = n.attrFloat("min", 0), hi = n.attrFloat("max", 0);
    return [attrMin, attrMax, lo, hi](const Tensors& in) -> Tensors {
      c10::optional<at::Scalar> mn, mx;
      if (present(in, 1))
        mn = in[1].item();
      else if (attrMin)
        mn = lo;
      if (present(in, 2))
        mx = in[2].item();
      else if (attrMax)
        mx = hi;
      if (!mn && !mx) return {in[0]};
      return {at::clamp(in[0], mn, mx)};
    };
  }
  return std::nullopt;
}

Kernel compile(const Node& n) {
  for (auto part : {activationKernel, logicKernel, arithmeticKernel, nnKernel, dataKernel})
    if (std::optional<Kernel> k = part(n)) return *k;
  fail(n, "op '" + n.op + "' is not supported by the LibTorch reference executor");
}

// The graph, ready to run: a tensor per initializer and a kernel per node.
class Program {
 public:
  explicit Program(const graph::Graph& g) : g_(g) {
    for (const auto& [name, init] : g.initializers) {
      if (init.isInt()) {
        constants_[name] = intTensor(init.info.shape, init.ints, scalarType(init.info.dtype));
      } else if (init.info.dtype == graph::DType::Float32) {
        graph::Initializer copy = init;  // the graph is const: materialise a copy
        copy.materialise();
        if (int64_t(copy.data.size()) != init.info.numElements())
          throw GraphError("initializer '" + name + "' has " + std::to_string(copy.data.size()) + " values for " +
                           std::to_string(init.info.numElements()) + " elements");
        constants_[name] = floatTensor(init.info.shape, copy.data);
      } else {
        throw GraphError("initializer '" + name + "': data type " + graph::dtypeName(init.info.dtype) +
                         " is not supported by the LibTorch reference executor");
      }
    }
    for (const Node& n : g.nodes)
      kernels_.push_back(compile(n));
  }

  std::map<std::string, at::Tensor> run(const std::map<std::string, at::Tensor>& inputs) const {
    std::map<std::string, at::Tensor> env = constants_;
    for (const auto& [k, v] : inputs)
      env[k] = v;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      Tensors in;
      for (const std::string& name : n.inputs) {
        if (name.empty()) {
          in.emplace_back();
          continue;
        }
        auto it = env.find(name);
        if (it == env.end()) fail(n, "input '" + name + "' is not defined before the node");
        in.push_back(it->second);
      }
      Tensors out;
      try {
        out = kernels_[i](in);
      } catch (const c10::Error& e) {
        fail(n, e.what_without_backtrace());
      }
      for (size_t o = 0; o < n.outputs.size() && o < out.size(); ++o)
        if (!n.outputs[o].empty()) env[n.outputs[o]] = out[o];
    }
    std::map<std::string, at::Tensor> outputs;
    for (const std::string& name : g_.outputs) {
      auto it = env.find(name);
      if (it == env.end()) throw GraphError("graph output '" + name + "' is not produced by any node");
      outputs[name] = it->second;
    }
    return outputs;
  }

 private:
  const graph::Graph& g_;
  std::map<std::string, at::Tensor> constants_;
  std::vector<Kernel> kernels_;
};

runtime::HostTensor toHost(const at::Tensor& t) {
  const at::Tensor f = t.to(at::kFloat).contiguous();
  runtime::HostTensor h;
  h.shape.assign(f.sizes().begin(), f.sizes().end());
  h.data.resize(size_t(f.numel()));
  if (!h.data.empty()) std::memcpy(h.data.data(), f.data_ptr<float>(), h.data.size() * sizeof(float));
  return h;
}

}  // namespace

bool libtorchAvailable() {
  return true;
}

bool referenceRuns(const std::string& op) {
  // Compiling a node without attributes either succeeds, fails on what the
  // node lacks, or says the op is not supported: only the last is a no.
  Node probe;
  probe.name = "probe";
  probe.op = op;
  try {
    compile(probe);
  } catch (const GraphError& e) {
    return std::string(e.what()).find("is not supported by the LibTorch reference executor") == std::string::npos;
  } catch (const std::exception&) {
  }
  return true;
}

ReferenceRun runWithLibTorch(const graph::Graph& g, const std::map<std::string, runtime::HostTensor>& inputs,
                             int threads, int repeats) {
  TorchThreads torchThreads(threads);
  c10::InferenceMode guard;
  std::map<std::string, at::Tensor> in;
  for (const graph::ValueInfo& v : g.inputs) {
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw GraphError("graph input '" + v.name + "' is not given");
    const runtime::HostTensor& h = it->second;
    int64_t count = 1;
    for (int64_t d : h.shape)
      count *= d;
    if (count != int64_t(h.data.size()))
      throw GraphError("input '" + v.name + "' has " + std::to_string(h.data.size()) + " values for shape " +
                       graph::shapeString(h.shape));
    if (!v.shape.empty() && h.shape != v.shape)
      throw GraphError("input '" + v.name + "' has shape " + graph::shapeString(h.shape) + ", the graph expects " +
                       graph::shapeString(v.shape));
    at::Tensor t = floatTensor(h.shape, h.data);
    if (v.dtype != graph::DType::Float32) t = t.to(scalarType(v.dtype));
    in[v.name] = t;
  }
  const Program program(g);
  ReferenceRun result;
  std::map<std::string, at::Tensor> outputs = program.run(in);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    outputs = program.run(in);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  result.times = times;
  result.seconds = medianSeconds(times);
  for (const auto& [name, t] : outputs)
    result.outputs[name] = toHost(t);
  return result;
}

}  // namespace tessel::reference
