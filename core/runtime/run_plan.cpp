#include "runtime/run_plan.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "graph/op_registry.h"
#include "graph/shape_utils.h"

namespace tessel::runtime {

using graph::GraphError;

KernelInterface kernelInterface(const graph::Graph& g, const std::vector<size_t>& group, size_t groupIndex,
                                const graph::LoweredSubgraph& ls, const lower::LoweredFunc& f,
                                const std::string& symbol) {
  KernelInterface kr;
  kr.symbol = symbol;
  kr.group = groupIndex;
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
            if (const graph::OpDef* d = graph::findOp(g.nodes[ni].op))
              for (size_t w : d->imageWeightInputs)  // an image kernel (Conv's weights) is stored RSCK
                if (w < g.nodes[ni].inputs.size() && g.nodes[ni].inputs[w] == v) s = Storage::RSCK;
      }
      (input ? kr.inputs : kr.outputs).push_back(v);
      (input ? kr.inStorage : kr.outStorage).push_back(s);
      return;
    }
    throw std::runtime_error("executor: kernel argument '" + tensor + "' of group " + std::to_string(groupIndex) +
                             " matches no graph value");
  };
  for (size_t a = 0; a < f.args.size(); ++a) {
    const bool input = a < f.numInputs;
    bind(f.args[a].name, input ? ls.dag.inputs() : ls.dag.outputs(), input ? ls.inputValues : ls.outputValues,
         input ? ls.inputLayouts : ls.outputLayouts, input);
    (input ? kr.inSize : kr.outSize).push_back(f.args[a].size);
  }
  return kr;
}

namespace {

class Planner {
 public:
  Planner(const graph::Graph& g, const std::set<std::string>& constants) : g_(g), constants_(constants) {}

  RunPlan plan(const std::vector<KernelInterface>& kernels) {
    for (const graph::ValueInfo& x : g_.inputs) {
      const size_t b = addBuffer(x.name, firstReaderStorage(kernels, x.name), 0, false);
      producedBy_[x.name] = b;
      p_.inputBuffers.emplace_back(x.name, b);
    }
    p_.kernelArgs.resize(kernels.size());
    for (size_t k = 0; k < kernels.size(); ++k)
      planKernel(k, kernels[k]);
    const int outStep = int(p_.steps.size()) + 1;
    for (const std::string& o : g_.outputs) {
      size_t b;
      if (constants_.count(o)) {
        b = constantBuffer(o, Storage::Plain);
      } else {
        auto p = producedBy_.find(o);
        if (p == producedBy_.end()) throw GraphError("executor: graph output '" + o + "' is not computed by any group");
        b = p->second;
        p_.buffers[b].lastStep = outStep;
      }
      p_.outputBuffers.emplace_back(o, b);
    }
    placeInArena();
    return std::move(p_);
  }

 private:
  std::vector<int64_t> shapeOf(const std::string& v) const {
    auto it = g_.values.find(v);
    if (it != g_.values.end()) return it->second.shape;
    auto in = g_.initializers.find(v);
    if (in != g_.initializers.end()) return in->second.info.shape;
    for (const graph::ValueInfo& x : g_.inputs)
      if (x.name == v) return x.shape;
    throw GraphError("executor: no shape for value '" + v + "' (run inferShapes first)");
  }

  static Storage firstReaderStorage(const std::vector<KernelInterface>& kernels, const std::string& v) {
    for (const KernelInterface& k : kernels)
      for (size_t a = 0; a < k.inputs.size(); ++a)
        if (k.inputs[a] == v) return k.inStorage[a];
    return Storage::Plain;
  }

  size_t addBuffer(const std::string& value, Storage storage, int step, bool constant) {
    PlannedBuffer b;
    b.value = value;
    b.storage = storage;
    b.shape = shapeOf(value);
    b.elements = 1;
    for (int64_t d : b.shape)
      b.elements *= d;
    b.constant = constant;
    b.firstStep = b.lastStep = step;
    p_.buffers.push_back(std::move(b));
    bufferOf_[{value, storage}] = p_.buffers.size() - 1;
    return p_.buffers.size() - 1;
  }

  size_t constantBuffer(const std::string& v, Storage storage) {
    auto it = bufferOf_.find({v, storage});
    return it != bufferOf_.end() ? it->second : addBuffer(v, storage, 0, true);
  }

  void planKernel(size_t k, const KernelInterface& kr) {
    std::vector<size_t>& args = p_.kernelArgs[k];
    for (size_t a = 0; a < kr.inputs.size(); ++a) {
      const std::string& v = kr.inputs[a];
      const Storage want = kr.inStorage[a];
      size_t b;
      if (constants_.count(v)) {
        b = constantBuffer(v, want);
      } else if (auto have = bufferOf_.find({v, want}); have != bufferOf_.end()) {
        b = have->second;
      } else {
        auto src = producedBy_.find(v);
        if (src == producedBy_.end())
          throw GraphError("executor: " + kr.symbol + " reads '" + v +
                           "', which no earlier group produces (groups must be in topological order)");
        // A layout change, once, just before its first reader.
        const int step = int(p_.steps.size()) + 1;
        b = addBuffer(v, want, step, false);
        p_.buffers[src->second].lastStep = step;
        PlannedStep conv;
        conv.convert = true;
        conv.src = src->second;
        conv.dst = b;
        conv.name = "convert " + v + " " + storageName(p_.buffers[src->second].storage) + "->" + storageName(want);
        conv.value = v;
        p_.steps.push_back(std::move(conv));
      }
      if (p_.buffers[b].elements != kr.inSize[a])
        throw std::runtime_error("executor: value '" + v + "' has " + std::to_string(p_.buffers[b].elements) +
                                 " elements, " + kr.symbol + " expects " + std::to_string(kr.inSize[a]));
      args.push_back(b);
    }
    const int step = int(p_.steps.size()) + 1;
    for (size_t b : args)
      if (!p_.buffers[b].constant) p_.buffers[b].lastStep = std::max(p_.buffers[b].lastStep, step);
    for (size_t a = 0; a < kr.outputs.size(); ++a) {
      const std::string& v = kr.outputs[a];
      if (producedBy_.count(v) || constants_.count(v))
        throw GraphError("executor: value '" + v + "' is written by " + kr.symbol + " and before it");
      const size_t b = addBuffer(v, kr.outStorage[a], step, false);
      if (p_.buffers[b].elements != kr.outSize[a])
        throw std::runtime_error("executor: value '" + v + "' has " + std::to_string(p_.buffers[b].elements) +
                                 " elements, " + kr.symbol + " writes " + std::to_string(kr.outSize[a]));
      producedBy_[v] = b;
      args.push_back(b);
    }
    PlannedStep s;
    s.kernel = k;
    s.name = kr.symbol;
    s.group = int(kr.group);
    p_.steps.push_back(std::move(s));
  }

  void placeInArena() {
    std::vector<TensorLifetime> lifetimes;
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      const PlannedBuffer& buf = p_.buffers[b];
      if (buf.constant) continue;
      lifetimes.push_back({buf.value + "@" + storageName(buf.storage), buf.elements * int64_t(sizeof(float)),
                           buf.firstStep, buf.lastStep});
      p_.arenaBuffers.push_back(b);
    }
    p_.memory = planMemory(lifetimes);
    for (size_t i = 0; i < p_.arenaBuffers.size(); ++i)
      p_.buffers[p_.arenaBuffers[i]].offset = p_.memory.offsets[i];
  }

  const graph::Graph& g_;
  const std::set<std::string>& constants_;
  RunPlan p_;
  std::map<std::pair<std::string, Storage>, size_t> bufferOf_;
  std::map<std::string, size_t> producedBy_;  // value -> the buffer its producer writes
};

}  // namespace

RunPlan planRun(const graph::Graph& g, const std::vector<KernelInterface>& kernels,
                const std::set<std::string>& constants) {
  return Planner(g, constants).plan(kernels);
}

std::string checkRunPlan(const RunPlan& plan) {
  std::vector<TensorLifetime> lifetimes;
  for (size_t b : plan.arenaBuffers) {
    const PlannedBuffer& buf = plan.buffers[b];
    lifetimes.push_back({buf.value + "@" + storageName(buf.storage), buf.elements * int64_t(sizeof(float)),
                         buf.firstStep, buf.lastStep});
  }
  MemoryPlan placed = plan.memory;
  for (size_t i = 0; i < plan.arenaBuffers.size(); ++i)
    placed.offsets[i] = plan.buffers[plan.arenaBuffers[i]].offset;
  std::string overlap = findOverlap(lifetimes, placed);
  if (!overlap.empty()) return "live buffers share memory: " + overlap;
  auto alive = [&](size_t b, int step) {
    const PlannedBuffer& buf = plan.buffers[b];
    return buf.constant || (buf.firstStep <= step && step <= buf.lastStep);
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const PlannedStep& st = plan.steps[s];
    const int step = int(s) + 1;
    std::vector<size_t> touched = st.convert ? std::vector<size_t>{st.src, st.dst} : plan.kernelArgs.at(st.kernel);
    for (size_t b : touched)
      if (!alive(b, step)) return st.name + " uses " + plan.buffers[b].value + " outside its lifetime";
    for (size_t i = 0; i < touched.size(); ++i)
      for (size_t j = i + 1; j < touched.size(); ++j) {
        const PlannedBuffer &a = plan.buffers[touched[i]], &b = plan.buffers[touched[j]];
        if (a.constant || b.constant || touched[i] == touched[j]) continue;
        const int64_t a1 = a.offset + a.elements * 4, b1 = b.offset + b.elements * 4;
        if (a.offset < b1 && b.offset < a1) return st.name + ": arguments " + a.value + " and " + b.value + " overlap";
      }
  }
  for (const auto& [name, b] : plan.inputBuffers)
    if (plan.buffers[b].firstStep != 0) return "input " + name + " is not written before the first step";
  const int outStep = int(plan.steps.size()) + 1;
  for (const auto& [name, b] : plan.outputBuffers)
    if (!alive(b, outStep)) return "output " + name + " does not live to the end of the run";
  return "";
}

}  // namespace tessel::runtime
