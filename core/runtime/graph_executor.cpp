#include "runtime/graph_executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "lower/loop_nest.h"
#include "support/subprocess.h"

namespace tessel::runtime {

namespace {

using graph::GraphError;

// How a buffer stores its value: as in the graph, NHWC activations, or RSCK
// conv weights (the layouts of LoweringOptions::imageLayout = NHWC).
enum class Storage { Plain, NHWC, RSCK };

// Storage dim d holds logical dim perm[d].
std::array<size_t, 4> permOf(Storage s) {
  if (s == Storage::NHWC) return {0, 2, 3, 1};
  if (s == Storage::RSCK) return {2, 3, 1, 0};
  return {0, 1, 2, 3};
}

// Rearranges `src` (in storage `from`) into storage `to`; `shape` is logical.
std::vector<float> convert(const std::vector<float>& src, const std::vector<int64_t>& shape, Storage from, Storage to) {
  if (from == to || shape.size() != 4) return src;
  // Stride (in elements) of each logical dim within a storage order.
  auto strides = [&](Storage s) {
    std::array<size_t, 4> perm = permOf(s);
    std::array<int64_t, 4> st{};
    int64_t acc = 1;
    for (size_t d = 4; d-- > 0;) {
      st[perm[d]] = acc;
      acc *= shape[perm[d]];
    }
    return st;
  };
  std::array<int64_t, 4> a = strides(from), b = strides(to);
  std::vector<float> dst(src.size());
  for (int64_t i = 0; i < shape[0]; ++i)
    for (int64_t j = 0; j < shape[1]; ++j)
      for (int64_t k = 0; k < shape[2]; ++k)
        for (int64_t l = 0; l < shape[3]; ++l)
          dst[size_t(i * b[0] + j * b[1] + k * b[2] + l * b[3])] =
              src[size_t(i * a[0] + j * a[1] + k * a[2] + l * a[3])];
  return dst;
}

struct Stored {
  Storage storage = Storage::Plain;
  std::vector<float> data;
};

using KernelFn = int (*)(float* const*);

struct Kernel {
  std::vector<size_t> nodes;
  std::vector<std::string> inputs, outputs;  // graph values, in argument order
  std::vector<Storage> inStorage, outStorage;
  std::vector<int64_t> inSize, outSize;
  std::string symbol;
  KernelFn fn = nullptr;
};

}  // namespace

struct GraphExecutor::Impl {
  graph::Graph g;
  ExecutorOptions options;
  std::string dir;
  std::vector<void*> handles;
  std::vector<Kernel> kernels;
  // Constants (float initializers and Constant nodes) per storage they are read in.
  std::map<std::pair<std::string, Storage>, std::vector<float>> constants;
  std::map<std::string, std::vector<float>> plainConstants;

  ~Impl() {
    for (void* h : handles)
      dlclose(h);
    if (!dir.empty()) support::removeTree(dir);
  }

  std::vector<int64_t> shapeOf(const std::string& v) const {
    auto it = g.values.find(v);
    if (it != g.values.end()) return it->second.shape;
    auto in = g.initializers.find(v);
    if (in != g.initializers.end()) return in->second.info.shape;
    for (const graph::ValueInfo& x : g.inputs)
      if (x.name == v) return x.shape;
    throw GraphError("executor: no shape for value '" + v + "' (run inferShapes first)");
  }

  bool isGraphInput(const std::string& v) const {
    for (const graph::ValueInfo& x : g.inputs)
      if (x.name == v) return true;
    return false;
  }

  // Float values of a Constant node (from its attributes or an initializer of its name).
  std::vector<float> constantValue(const graph::Node& n) const {
    auto init = g.initializers.find(n.outputs.at(0));
    if (init != g.initializers.end()) {
      graph::Initializer c = init->second;
      c.materialise();
      return c.data;
    }
    if (n.has("value_float")) return {float(n.attrFloat("value_float", 0))};
    std::vector<double> d;
    if (n.has("value_floats")) {
      d = n.attrFloats("value_floats");
    } else if (n.has("value")) {
      const graph::AttrValue& a = n.attrs.at("value");
      if (auto* x = std::get_if<double>(&a)) d = {*x};
      if (auto* l = std::get_if<std::vector<double>>(&a)) d = *l;
      if (auto* i = std::get_if<int64_t>(&a)) d = {double(*i)};
    }
    if (d.empty()) throw GraphError(n.describe() + ": has no float value the executor can use");
    return std::vector<float>(d.begin(), d.end());
  }

  // The constant value `v` read in `storage`, converted once.
  const std::vector<float>* constant(const std::string& v, Storage storage) {
    auto key = std::make_pair(v, storage);
    auto it = constants.find(key);
    if (it != constants.end()) return &it->second;
    auto p = plainConstants.find(v);
    if (p == plainConstants.end()) return nullptr;
    return &(constants[key] = convert(p->second, shapeOf(v), Storage::Plain, storage));
  }

  void build() {
    const size_t numNodes = g.nodes.size();
    std::vector<std::vector<size_t>> groups = options.groups;
    if (groups.empty())
      for (size_t i = 0; i < numNodes; ++i)
        groups.push_back({i});
    // Constants the kernels may read.
    for (const auto& [name, init] : g.initializers) {
      if (init.isInt() || init.info.dtype != graph::DType::Float32) continue;
      bool used = false;
      for (const graph::Node& n : g.nodes)
        used |= std::find(n.inputs.begin(), n.inputs.end(), name) != n.inputs.end();
      used |= std::find(g.outputs.begin(), g.outputs.end(), name) != g.outputs.end();
      if (!used) continue;
      graph::Initializer c = init;
      c.materialise();
      plainConstants[name] = std::move(c.data);
    }
    for (const graph::Node& n : g.nodes)
      if (n.op == "Constant" && !n.outputs.empty()) {
        auto vi = g.values.find(n.outputs[0]);
        if (vi != g.values.end() && vi->second.dtype != graph::DType::Float32) continue;  // read at lowering time
        plainConstants[n.outputs[0]] = constantValue(n);
      }

    dir = support::makeTempDir("tessel-exec");
    std::vector<codegen::BuildCandidate> cands;
    std::set<std::string> available;  // values ready when a group runs
    for (const graph::ValueInfo& x : g.inputs)
      available.insert(x.name);
    for (const auto& [name, c] : plainConstants)
      available.insert(name);
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const std::vector<size_t>& group = groups[gi];
      graph::LoweredSubgraph ls = graph::lowerSubgraph(g, group, options.lowering);
      if (ls.outputValues.empty()) continue;
      std::string groupName = "group " + std::to_string(gi) + " (";
      for (size_t k = 0; k < group.size(); ++k)
        groupName += (k ? ", " : "") + g.nodes[group[k]].describe();
      groupName += ")";
      Kernel kr;
      kr.nodes = group;
      kr.symbol = "tessel_graph_k" + std::to_string(gi);
      lower::LoweredFunc f;
      try {
        auto sched = options.schedules.find(gi);
        schedule::State state =
            sched == options.schedules.end() ? schedule::State(ls.dag) : schedule::replay(ls.dag, sched->second);
        f = lower::lowerState(state);
      } catch (const std::exception& e) {
        throw std::runtime_error("executor: cannot lower " + groupName + ": " + e.what());
      }
      // Arguments by name: dag inputs, then dag outputs.
      auto bind = [&](const std::string& tensor, const std::vector<std::string>& names,
                      const std::vector<std::string>& values, const std::vector<te::Layout>& layouts, bool input) {
        for (size_t k = 0; k < names.size(); ++k) {
          if (lower::cIdent(names[k]) != tensor) continue;
          const std::string& v = values[k];
          Storage s = Storage::Plain;
          if (layouts[k] == te::Layout::NHWC) {
            s = Storage::NHWC;
            if (input)
              for (size_t ni : group)
                if (g.nodes[ni].op == "Conv" && g.nodes[ni].inputs.size() > 1 && g.nodes[ni].inputs[1] == v)
                  s = Storage::RSCK;
          }
          (input ? kr.inputs : kr.outputs).push_back(v);
          (input ? kr.inStorage : kr.outStorage).push_back(s);
          return;
        }
        throw std::runtime_error("executor: kernel argument '" + tensor + "' of " + groupName +
                                 " matches no graph value");
      };
      for (size_t a = 0; a < f.args.size(); ++a) {
        bool input = a < f.numInputs;
        bind(f.args[a].name, input ? ls.dag.inputs() : ls.dag.outputs(), input ? ls.inputValues : ls.outputValues,
             input ? ls.inputLayouts : ls.outputLayouts, input);
        (input ? kr.inSize : kr.outSize).push_back(f.args[a].size);
      }
      for (const std::string& v : kr.inputs)
        if (!available.count(v))
          throw GraphError("executor: " + groupName + " reads '" + v +
                           "', which no earlier group produces (groups must be in topological order)");
      for (const std::string& v : kr.outputs)
        available.insert(v);
      cands.push_back({codegen::emitCppKernel(f, kr.symbol), kr.symbol});
      kernels.push_back(std::move(kr));
    }
    for (const std::string& o : g.outputs)
      if (!available.count(o)) throw GraphError("executor: graph output '" + o + "' is not computed by any group");

    codegen::BuildOptions bo;
    bo.workDir = dir;
    bo.jobs = std::max(1, options.jobs);
    bo.maxPerUnit = 16;
    bo.timeoutSeconds = 300;
    std::vector<codegen::BuildOutput> built = codegen::buildCandidates(cands, bo);
    std::map<std::string, void*> libs;
    for (size_t k = 0; k < kernels.size(); ++k) {
      const codegen::BuildOutput& b = built.at(k);
      if (b.library.empty())
        throw std::runtime_error("executor: kernel " + kernels[k].symbol +
                                 " failed to compile: " + b.message.substr(0, 4000));
      void*& h = libs[b.library];
      if (!h) {
        h = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) throw std::runtime_error(std::string("executor: dlopen failed: ") + dlerror());
        handles.push_back(h);
      }
      kernels[k].fn = reinterpret_cast<KernelFn>(dlsym(h, kernels[k].symbol.c_str()));
      if (!kernels[k].fn) throw std::runtime_error("executor: symbol " + kernels[k].symbol + " not found");
    }
    // Convert constants to the storage each kernel reads them in, once.
    for (const Kernel& kr : kernels)
      for (size_t a = 0; a < kr.inputs.size(); ++a)
        if (plainConstants.count(kr.inputs[a]) && !isGraphInput(kr.inputs[a])) constant(kr.inputs[a], kr.inStorage[a]);
  }

  // Buffers of every value, kept from one run to the next: a model's
  // activations are allocated (and their pages faulted in) once, not per run.
  std::map<std::string, Stored> store;
  // TESSEL_PROFILE=1 prints each kernel's time of every run on stderr.
  const bool profile = std::getenv("TESSEL_PROFILE") != nullptr;

  std::map<std::string, HostTensor> run(const std::map<std::string, HostTensor>& inputs) {
    for (const graph::ValueInfo& x : g.inputs) {
      auto it = inputs.find(x.name);
      if (it == inputs.end()) throw std::runtime_error("executor: missing graph input '" + x.name + "'");
      const HostTensor& t = it->second;
      if (!t.shape.empty() && t.shape != x.shape)
        throw std::runtime_error("executor: input '" + x.name + "' has the wrong shape");
      if (int64_t(t.data.size()) != x.numElements())
        throw std::runtime_error("executor: input '" + x.name + "' has " + std::to_string(t.data.size()) +
                                 " elements, expected " + std::to_string(x.numElements()));
      Stored& in = store[x.name];
      in.storage = Storage::Plain;
      in.data.assign(t.data.begin(), t.data.end());
    }
    for (const auto& [name, t] : inputs)
      if (std::none_of(g.inputs.begin(), g.inputs.end(), [&](const graph::ValueInfo& x) { return x.name == name; }))
        throw std::runtime_error("executor: '" + name + "' is not a graph input");
    for (const Kernel& kr : kernels) {
      std::vector<float*> ptrs;
      std::vector<std::vector<float>> scratch;  // conversions for this call
      scratch.reserve(kr.inputs.size());
      for (size_t a = 0; a < kr.inputs.size(); ++a) {
        const std::string& v = kr.inputs[a];
        const std::vector<float>* src = nullptr;
        auto st = store.find(v);
        if (st != store.end()) {
          if (st->second.storage == kr.inStorage[a]) {
            src = &st->second.data;
          } else {
            std::vector<float> plain = convert(st->second.data, shapeOf(v), st->second.storage, Storage::Plain);
            scratch.push_back(convert(plain, shapeOf(v), Storage::Plain, kr.inStorage[a]));
            src = &scratch.back();
          }
        } else {
          src = constant(v, kr.inStorage[a]);
        }
        if (!src) throw std::runtime_error("executor: value '" + v + "' is not available");
        if (int64_t(src->size()) != kr.inSize[a])
          throw std::runtime_error("executor: value '" + v + "' has " + std::to_string(src->size()) +
                                   " elements, the kernel expects " + std::to_string(kr.inSize[a]));
        ptrs.push_back(const_cast<float*>(src->data()));
      }
      for (size_t a = 0; a < kr.outputs.size(); ++a) {
        Stored& s = store[kr.outputs[a]];
        s.storage = kr.outStorage[a];
        if (s.data.size() != size_t(kr.outSize[a])) s.data.assign(size_t(kr.outSize[a]), 0.0f);
      }
      for (size_t a = 0; a < kr.outputs.size(); ++a)
        ptrs.push_back(store[kr.outputs[a]].data.data());
      auto t0 = std::chrono::steady_clock::now();
      int rc = kr.fn(ptrs.data());
      if (profile)
        std::fprintf(stderr, "  %-40s %9.4f ms\n", kr.symbol.c_str(),
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e3);
      if (rc != 0)
        throw std::runtime_error("executor: kernel " + kr.symbol + " returned " + std::to_string(rc) +
                                 " (out of memory?)");
    }
    std::map<std::string, HostTensor> result;
    for (const std::string& o : g.outputs) {
      HostTensor t;
      t.shape = shapeOf(o);
      auto st = store.find(o);
      if (st != store.end()) {
        t.data = convert(st->second.data, t.shape, st->second.storage, Storage::Plain);
      } else if (auto p = plainConstants.find(o); p != plainConstants.end()) {
        t.data = p->second;
      } else {
        throw std::runtime_error("executor: graph output '" + o + "' was not computed");
      }
      result[o] = std::move(t);
    }
    return result;
  }
};

GraphExecutor::GraphExecutor(const graph::Graph& g, ExecutorOptions options) : impl_(new Impl) {
  impl_->g = g;
  impl_->options = std::move(options);
  try {
    impl_->build();
  } catch (...) {
    delete impl_;
    throw;
  }
}

GraphExecutor::~GraphExecutor() {
  delete impl_;
}

std::map<std::string, HostTensor> GraphExecutor::run(const std::map<std::string, HostTensor>& inputs) {
  return impl_->run(inputs);
}

}  // namespace tessel::runtime
