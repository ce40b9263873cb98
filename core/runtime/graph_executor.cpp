#include "runtime/graph_executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "codegen/kernel_cache.h"
#include "graph/op_registry.h"
#include "graph/shape_utils.h"
#include "lower/canonical_names.h"
#include "lower/layout_rewrite.h"
#include "runtime/run_plan.h"
#include "runtime/storage_layout.h"
#include "runtime/thread_team.h"
#include "support/hash.h"
#include "support/subprocess.h"

namespace tessel::runtime {

namespace {

using graph::GraphError;

constexpr std::align_val_t kAlign{64};

// Floats in memory aligned for the widest vector loads the kernels may use.
struct AlignedFloats {
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, kAlign); }
  };
  std::unique_ptr<float[], Free> data;
  size_t size = 0;
  explicit AlignedFloats(size_t n = 0)
      : data(static_cast<float*>(::operator new[](std::max<size_t>(n, 1) * sizeof(float), kAlign))), size(n) {
    std::memset(data.get(), 0, std::max<size_t>(n, 1) * sizeof(float));  // fault the pages in now
  }
};

using KernelFn = int (*)(float* const*);
using PackFn = int (*)(float* const* plain, float* const* packed);

bool hasParallelLoop(const lower::Stmt& s) {
  if (!s) return false;
  if (s->kind == lower::StmtNode::For && s->forKind == lower::ForKind::Parallel) return true;
  return std::any_of(s->body.begin(), s->body.end(), hasParallelLoop);
}

}  // namespace

struct GraphExecutor::Impl {
  graph::Graph g;
  ExecutorOptions options;
  std::string dir;
  std::vector<void*> handles;
  std::vector<KernelInterface> interfaces;
  std::vector<KernelFn> fns;
  std::vector<std::vector<lower::PackedLayout>> packed;      // per kernel: the constants it reads packed
  std::vector<PackFn> packFns;                               // per kernel, null when it packs nothing
  std::vector<std::vector<float*>> args;                     // per kernel, fixed once the memory is placed
  std::map<std::string, std::vector<float>> plainConstants;  // as in the graph, until converted
  RunPlan plan;
  std::vector<float*> bufferPtr;  // per planned buffer
  std::vector<AlignedFloats> constantStore;
  AlignedFloats arena;
  MemoryStats stats;
  std::vector<RunStep> stepInfo;
  ThreadTeam team{0, true};
  // Only a team that runs parallel kernels is pinned: pinning starts
  // libgomp's pool, and a process with a pool cannot use OpenMP in a child it
  // forks (the conformance runner forks per case and runs naive kernels).
  bool parallelKernels = false;
  bool profile = std::getenv("TESSEL_PROFILE") != nullptr;
  const bool printProfile = std::getenv("TESSEL_PROFILE") != nullptr;
  std::vector<double> stepSeconds;

  ~Impl() {
    for (void* h : handles)
      dlclose(h);
    if (!dir.empty()) support::removeTree(dir);
  }

  bool isGraphInput(const std::string& v) const {
    return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const graph::ValueInfo& x) { return x.name == v; });
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

  void collectConstants() {
    for (const auto& [name, init] : g.initializers) {
      if (init.isInt() || init.info.dtype != graph::DType::Float32 || isGraphInput(name)) continue;
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
      if (const graph::OpDef* d = graph::findOp(n.op); d && d->constant && !n.outputs.empty()) {
        auto vi = g.values.find(n.outputs[0]);
        if (vi != g.values.end() && vi->second.dtype != graph::DType::Float32) continue;  // read at lowering time
        plainConstants[n.outputs[0]] = constantValue(n);
      }
  }

  // Lowers every group and compiles the kernels (one library call per group).
  void compileKernels() {
    std::vector<std::vector<size_t>> groups = options.groups;
    if (groups.empty())
      for (size_t i = 0; i < g.nodes.size(); ++i)
        groups.push_back({i});
    dir = support::makeTempDir("tessel-exec");
    // A kernel's symbol is named by its code (its buffers named by position),
    // so groups that lower to the same code (a model's repeated blocks) share
    // one compiled function, and the kernel cache finds it whatever the
    // group's place in this graph or the names its exporter gave.
    std::vector<codegen::BuildCandidate> cands;
    std::map<std::string, size_t> candidateOfCode;
    std::vector<size_t> candidateOf;  // per interface
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      const std::vector<size_t>& group = groups[gi];
      graph::LoweredSubgraph ls = graph::lowerSubgraph(g, group, options.lowering);
      if (ls.outputValues.empty()) continue;
      std::string groupName = "group " + std::to_string(gi) + " (";
      for (size_t k = 0; k < group.size(); ++k)
        groupName += (k ? ", " : "") + g.nodes[group[k]].describe();
      groupName += ")";
      const std::string name = "tessel_graph_k" + std::to_string(gi);  // the step's name in profiles
      lower::LoweredFunc f;
      try {
        auto sched = options.schedules.find(gi);
        schedule::State state =
            sched == options.schedules.end() ? schedule::State(ls.dag) : schedule::replay(ls.dag, sched->second);
        f = lower::lowerState(state);
      } catch (const std::exception& e) {
        throw std::runtime_error("executor: cannot lower " + groupName + ": " + e.what());
      }
      interfaces.push_back(kernelInterface(g, group, gi, ls, f, name));  // plain sizes: the graph's
      parallelKernels |= hasParallelLoop(f.body);
      lower::rewriteLayouts(&f);
      packed.push_back(f.packed);
      f = lower::withCanonicalNames(f);
      const codegen::CppOptions cpp(options.target);
      const std::string code = codegen::emitCppKernelAndPack(f, "tessel_kernel", cpp);
      auto [it, added] = candidateOfCode.emplace(code, cands.size());
      if (added) {
        const std::string symbol = "tessel_kernel_" + support::hash128Hex(code);
        cands.push_back({codegen::emitCppKernelAndPack(f, symbol, cpp), symbol});
      }
      candidateOf.push_back(it->second);
    }

    codegen::BuildOptions bo;
    bo.workDir = dir;
    bo.jobs = std::max(1, options.jobs);
    bo.maxPerUnit = 16;
    bo.timeoutSeconds = 300;
    bo.flags = codegen::withoutWarnings(codegen::kernelCompilerFlags(options.target));
    bo.cacheDir = codegen::KernelCache::defaultDir();  // a model run before loads its kernels
    std::vector<codegen::BuildOutput> built = codegen::buildCandidates(cands, bo);
    std::map<std::string, void*> libs;
    for (size_t k = 0; k < interfaces.size(); ++k) {
      const codegen::BuildOutput& b = built.at(candidateOf[k]);
      const std::string& symbol = cands[candidateOf[k]].symbol;
      if (b.library.empty())
        throw std::runtime_error("executor: kernel " + interfaces[k].symbol +
                                 " failed to compile: " + b.message.substr(0, 4000));
      void*& h = libs[b.library];
      if (!h) {
        h = dlopen(b.library.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) throw std::runtime_error(std::string("executor: dlopen failed: ") + dlerror());
        handles.push_back(h);
      }
      fns.push_back(reinterpret_cast<KernelFn>(dlsym(h, symbol.c_str())));
      if (!fns.back()) throw std::runtime_error("executor: symbol " + symbol + " not found");
      packFns.push_back(nullptr);
      if (!packed[k].empty()) {
        const std::string pack = codegen::packSymbol(symbol);
        packFns.back() = reinterpret_cast<PackFn>(dlsym(h, pack.c_str()));
        if (!packFns.back()) throw std::runtime_error("executor: symbol " + pack + " not found");
      }
    }
  }

  // Constants converted once into the storage each kernel reads them in;
  // intermediate tensors placed in one arena; every kernel's arguments fixed.
  void allocate() {
    bufferPtr.assign(plan.buffers.size(), nullptr);
    arena = AlignedFloats(size_t(plan.memory.arenaBytes) / sizeof(float));
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const PlannedBuffer& buf = plan.buffers[b];
      if (!buf.constant) {
        bufferPtr[b] = arena.data.get() + buf.offset / int64_t(sizeof(float));
        continue;
      }
      const std::vector<float>& plain = plainConstants.at(buf.value);
      if (int64_t(plain.size()) != buf.elements)
        throw std::runtime_error("executor: constant '" + buf.value + "' has " + std::to_string(plain.size()) +
                                 " values for its shape " + graph::shapeString(buf.shape));
      constantStore.emplace_back(plain.size());
      convertStorage(plain.data(), constantStore.back().data.get(), buf.shape, Storage::Plain, buf.storage);
      bufferPtr[b] = constantStore.back().data.get();
      stats.constantBytes += int64_t(plain.size() * sizeof(float));
    }
    for (size_t k = 0; k < plan.kernelArgs.size(); ++k) {
      args.emplace_back();
      for (size_t b : plan.kernelArgs[k])
        args.back().push_back(bufferPtr[b]);
      packConstants(k);
    }
    freeUnreadConstants();
    stats.arenaBytes = plan.memory.arenaBytes;
    stats.unsharedBytes = plan.memory.totalBytes;
    stats.tensors = plan.arenaBuffers.size();
    for (const PlannedStep& s : plan.steps)
      stepInfo.push_back({s.name, s.group, s.value});
    plainConstants.clear();
  }

  // A constant every reader of which got a packed copy is not kept plain too.
  void freeUnreadConstants() {
    std::set<const float*> read;
    for (const std::vector<float*>& a : args)
      read.insert(a.begin(), a.end());
    for (const PlannedStep& s : plan.steps)
      if (s.convert) read.insert(bufferPtr[s.src]);
    for (const auto& [name, b] : plan.outputBuffers)
      read.insert(bufferPtr[b]);
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      if (!plan.buffers[b].constant || read.count(bufferPtr[b])) continue;
      for (AlignedFloats& c : constantStore)
        if (c.data.get() == bufferPtr[b]) {
          stats.constantBytes -= int64_t(c.size * sizeof(float));
          c = AlignedFloats();
        }
      bufferPtr[b] = nullptr;
    }
  }

  // Kernel k's constants in the layouts it reads them in, packed once here.
  void packConstants(size_t k) {
    if (packed[k].empty()) return;
    std::vector<float*> to(args[k].size(), nullptr);
    for (const lower::PackedLayout& p : packed[k]) {
      const PlannedBuffer& buf = plan.buffers[plan.kernelArgs[k][p.arg]];
      if (!buf.constant)
        throw std::runtime_error("executor: " + interfaces[k].symbol + " packs '" + buf.value +
                                 "', which is not a constant");
      constantStore.emplace_back(size_t(p.size()));
      to[p.arg] = constantStore.back().data.get();
      stats.constantBytes += p.size() * int64_t(sizeof(float));
      ++stats.packedConstants;
    }
    if (packFns[k](args[k].data(), to.data()) != 0)
      throw std::runtime_error("executor: packing the constants of " + interfaces[k].symbol + " failed");
    for (const lower::PackedLayout& p : packed[k])
      args[k][p.arg] = to[p.arg];
  }

  void build() {
    collectConstants();
    compileKernels();
    std::set<std::string> constants;
    for (const auto& [name, v] : plainConstants)
      constants.insert(name);
    plan = planRun(g, interfaces, constants);
    allocate();
    team = ThreadTeam(options.threads > 0 ? options.threads : options.target.threads,
                      options.pinThreads && parallelKernels);
  }

  void setInputs(const std::map<std::string, HostTensor>& inputs) {
    for (const auto& [name, t] : inputs)
      if (!isGraphInput(name)) throw std::runtime_error("executor: '" + name + "' is not a graph input");
    for (const auto& [name, b] : plan.inputBuffers) {
      auto it = inputs.find(name);
      if (it == inputs.end()) throw std::runtime_error("executor: missing graph input '" + name + "'");
      const HostTensor& t = it->second;
      const PlannedBuffer& buf = plan.buffers[b];
      if (!t.shape.empty() && t.shape != buf.shape)
        throw std::runtime_error("executor: input '" + name + "' has the wrong shape " + graph::shapeString(t.shape) +
                                 " (the graph's is " + graph::shapeString(buf.shape) + ")");
      if (int64_t(t.data.size()) != buf.elements)
        throw std::runtime_error("executor: input '" + name + "' has " + std::to_string(t.data.size()) +
                                 " elements, expected " + std::to_string(buf.elements));
      convertStorage(t.data.data(), bufferPtr[b], buf.shape, Storage::Plain, buf.storage);
    }
  }

  void execute() {
    const ThreadTeam::Entered entered = team.enter();
    using Clock = std::chrono::steady_clock;
    if (profile) stepSeconds.assign(plan.steps.size(), 0.0);
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const PlannedStep& st = plan.steps[s];
      const Clock::time_point t0 = profile ? Clock::now() : Clock::time_point{};
      if (st.convert) {
        const PlannedBuffer &src = plan.buffers[st.src], &dst = plan.buffers[st.dst];
        convertStorage(bufferPtr[st.src], bufferPtr[st.dst], src.shape, src.storage, dst.storage);
      } else {
        const int rc = fns[st.kernel](args[st.kernel].data());
        if (rc != 0)
          throw std::runtime_error("executor: kernel " + st.name + " returned " + std::to_string(rc) +
                                   " (out of memory?)");
      }
      if (profile) stepSeconds[s] = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    if (printProfile)
      for (size_t s = 0; s < plan.steps.size(); ++s)
        std::fprintf(stderr, "  %-40s %9.4f ms\n", stepInfo[s].name.c_str(), stepSeconds[s] * 1e3);
  }

  std::map<std::string, HostTensor> outputs() const {
    std::map<std::string, HostTensor> result;
    for (const auto& [name, b] : plan.outputBuffers) {
      const PlannedBuffer& buf = plan.buffers[b];
      HostTensor t;
      t.shape = buf.shape;
      t.data.resize(size_t(buf.elements));
      convertStorage(bufferPtr[b], t.data.data(), buf.shape, buf.storage, Storage::Plain);
      result[name] = std::move(t);
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
  impl_->setInputs(inputs);
  impl_->execute();
  return impl_->outputs();
}

const std::vector<RunStep>& GraphExecutor::steps() const {
  return impl_->stepInfo;
}

void GraphExecutor::setProfiling(bool on) {
  impl_->profile = on || impl_->printProfile;
  if (!impl_->profile) impl_->stepSeconds.clear();
}

const std::vector<double>& GraphExecutor::stepSeconds() const {
  return impl_->stepSeconds;
}

MemoryStats GraphExecutor::memory() const {
  return impl_->stats;
}

int GraphExecutor::threads() const {
  return impl_->team.threads();
}

}  // namespace tessel::runtime
