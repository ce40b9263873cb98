#include "search/space_summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "codegen/cpp_codegen.h"
#include "codegen/cuda_codegen.h"
#include "lower/loop_nest.h"
#include "measure/cpp_program_builder.h"
#include "target/target.h"

namespace tessel::search {

using schedule::Choice;
using schedule::ProgramDecisions;
using schedule::Sketch;

namespace {

// k-tuples of positive integers whose product divides m.
double tuplesDividing(int64_t m, size_t k, std::map<std::pair<int64_t, size_t>, double>& memo) {
  if (k == 0) return 1;
  auto it = memo.find({m, k});
  if (it != memo.end()) return it->second;
  double n = 0;
  for (int64_t d : schedule::divisors(m))
    n += tuplesDividing(m / d, k - 1, memo);
  return memo[{m, k}] = n;
}

// Labels of the loops whose extents the annotation chooses, by (stage,
// iterator): "tile:3[0]" for a chosen length, "64/prod(tile:3)" for the outer
// loop that takes the rest. Found by replaying the sketch's steps and naming
// the outputs of its tile splits (and what rfactor makes of them).
using LoopLabels = std::map<std::pair<std::string, std::string>, std::string>;

LoopLabels tileLabels(const Sketch& sk) {
  LoopLabels labels;
  schedule::State s = sk.initial;
  for (size_t i = 0; i < sk.steps.size(); ++i) {
    const schedule::Step& step = sk.steps[i];
    if (const auto* rf = std::get_if<schedule::RfactorStep>(&step)) {
      // The factored reduce loop becomes axis "f" of X.rf and "rk" of X; the
      // other reduce loops become r0, r1, ... of X.rf.
      const schedule::Stage& st = s.stages.at(size_t(rf->stage));
      std::string name = st.op.name;
      std::vector<std::pair<std::string, std::string>> moved;
      int r = 0;
      for (size_t k = 0; k < st.iters.size(); ++k) {
        if (st.iters[k].kind != schedule::IterKind::Reduce) continue;
        auto l = labels.find({name, st.iters[k].name});
        bool factored = int(k) == rf->iter;
        std::string label = l == labels.end() ? "" : l->second;
        if (factored) {
          moved.push_back({"f", label});
        } else {
          moved.push_back({std::string("r").append(std::to_string(r++)), label});
        }
      }
      schedule::applyStep(s, step);
      for (const auto& [iter, label] : moved) {
        if (label.empty()) continue;
        labels[{name + ".rf", iter}] = label;
        if (iter == "f") labels[{name, "rk"}] = label;
      }
      continue;
    }
    if (const auto* cw = std::get_if<schedule::CacheWriteStep>(&step)) {
      // The stage gets fresh loops: labels of its old ones no longer apply.
      std::string name = s.stages.at(size_t(cw->stage)).op.name;
      for (auto it = labels.begin(); it != labels.end();)
        it = it->first.first == name ? labels.erase(it) : std::next(it);
    }
    const auto* sp = std::get_if<schedule::SplitStep>(&step);
    int64_t extent = sp ? s.stages.at(size_t(sp->stage)).iters.at(size_t(sp->iter)).extent : 0;
    schedule::applyStep(s, step);
    if (!sp) continue;
    const schedule::Stage& st = s.stages.at(size_t(sp->stage));
    const schedule::Relation& rel = st.relations.back();
    if (std::find(sk.tileSplits.begin(), sk.tileSplits.end(), i) != sk.tileSplits.end()) {
      std::string key = "tile:" + std::to_string(i);
      labels[{st.op.name, rel.outputs[0]}] = std::to_string(extent) + "/prod(" + key + ")";
      for (size_t k = 1; k < rel.outputs.size(); ++k)
        labels[{st.op.name, rel.outputs[k]}] = key + "[" + std::to_string(k - 1) + "]";
      continue;
    }
    for (const schedule::FollowSplit& f : sk.follows) {
      if (f.step != i) continue;
      std::string key = "tile:" + std::to_string(f.source);
      labels[{st.op.name, rel.outputs[0]}] = std::to_string(extent) + "/prod(" + key + ")";
      for (size_t k = 1; k < rel.outputs.size(); ++k) {
        bool last = k + 1 == rel.outputs.size();
        labels[{st.op.name, rel.outputs[k]}] =
            last ? "prod(" + key + "[" + std::to_string(k - 1) + "..])" : key + "[" + std::to_string(k - 1) + "]";
      }
    }
  }
  return labels;
}

void printStage(const schedule::State& s, int stage, const LoopLabels& labels, int depth, std::ostringstream& os) {
  const schedule::Stage& st = s.stages[size_t(stage)];
  std::string pad(size_t(depth) * 2, ' ');
  os << pad << st.op.name;
  if (st.scope != schedule::Scope::Global) os << " [" << schedule::scopeName(st.scope) << "]";
  if (st.location == schedule::ComputeLocation::At) os << " (at " << st.attachStage << "." << st.attachIter << ")";
  os << ":\n";
  int inner = depth + 1;
  for (const schedule::Iterator& it : st.iters) {
    std::string in(size_t(inner) * 2, ' ');
    auto l = labels.find({st.op.name, it.name});
    os << in << "for " << it.name << " < " << (l == labels.end() ? std::to_string(it.extent) : l->second);
    if (it.kind == schedule::IterKind::Reduce) os << "  (reduce)";
    if (it.annotation != schedule::Annotation::None) os << "  " << schedule::annotationName(it.annotation);
    os << "\n";
    ++inner;
    for (size_t a = 0; a < s.stages.size(); ++a) {
      const schedule::Stage& at = s.stages[a];
      if (at.location == schedule::ComputeLocation::At && at.attachStage == st.op.name && at.attachIter == it.name)
        printStage(s, int(a), labels, inner, os);
    }
  }
  os << std::string(size_t(inner) * 2, ' ') << st.op.name << " = ...\n";
}

std::string loopNestText(const schedule::State& state, const LoopLabels& labels) {
  std::ostringstream os;
  std::vector<std::string> inlined;
  for (size_t i = 0; i < state.stages.size(); ++i) {
    const schedule::Stage& st = state.stages[i];
    if (st.op.placeholder) continue;
    if (st.location == schedule::ComputeLocation::Inlined) inlined.push_back(st.op.name);
    if (st.location == schedule::ComputeLocation::Root) printStage(state, int(i), labels, 0, os);
  }
  if (!inlined.empty()) {
    os << "inlined:";
    for (const std::string& n : inlined)
      os << " " << n;
    os << "\n";
  }
  return os.str();
}

std::string joinInts(const std::vector<int64_t>& v) {
  std::string out;
  for (int64_t x : v) {
    if (!out.empty()) out += ',';
    out += std::to_string(x);
  }
  return out;
}

std::string domainText(const std::string& key, const Choice& c, size_t n) {
  if (c.tile)
    return std::to_string(n) + (n == 1 ? " tile length" : " tile lengths") + " of " + std::to_string(c.extent) +
           " (innermost ≤ " + std::to_string(c.maxInnermost) + ")";
  std::string range = std::to_string(c.lo) + ".." + std::to_string(c.hi);
  std::string kind = key.substr(0, key.find(':'));
  if (kind == "at") return range + " (-2 inline, -1 root, k: inside the consumer's loop k)";
  if (kind == "parallel") return range + " outer loops fused and parallelised";
  if (kind == "vectorize") return range + " inner loops fused and vectorised";
  if (kind == "unroll") return range + " (index of the max unroll step)";
  if (kind == "threads") return range + " (index of the threads per block)";
  return range;
}

// The decisions of one sketch: annotated with several fixed seeds, since
// which decisions exist and the ranges of some depend on earlier choices.
std::vector<ParameterSummary> parametersOf(const Sketch& sk, const schedule::HardwareParams& hw, uint64_t seed) {
  constexpr int kProbes = 48;
  struct Seen {
    Choice first;
    size_t length = 0;
    int64_t lo = 0, hi = 0;
    int count = 0;
    bool varies = false;
  };
  std::map<std::string, Seen> seen;
  int probes = 0;
  for (int p = 0; p < kProbes; ++p) {
    std::mt19937_64 rng(seed * 7919 + uint64_t(p));
    ProgramDecisions d;
    try {
      schedule::annotateSketch(sk, hw, rng, &d);
    } catch (const schedule::ScheduleError&) {
      // An invalid program still took its decisions up to the check.
    }
    if (d.choices.empty()) continue;
    ++probes;
    for (const auto& [key, c] : d.choices) {
      auto [it, fresh] = seen.try_emplace(key);
      Seen& s = it->second;
      if (fresh) {
        s.first = c;
        s.length = c.value.size();
        s.lo = c.lo, s.hi = c.hi;
      } else if (c.lo != s.lo || c.hi != s.hi) {
        s.varies = true;
        s.lo = std::min(s.lo, c.lo), s.hi = std::max(s.hi, c.hi);
      }
      ++s.count;
    }
  }
  std::vector<ParameterSummary> out;
  for (auto& [key, s] : seen) {
    ParameterSummary p;
    p.key = key;
    Choice c = s.first;
    c.lo = s.lo, c.hi = s.hi;
    p.choices = c.tile ? countTileLengths(c.extent, s.length, c.maxInnermost) : double(c.hi - c.lo + 1);
    p.domain = domainText(key, c, s.length);
    p.varies = s.varies;
    p.optional = s.count < probes;
    if (p.varies) p.domain += ", range depends on other choices";
    if (p.optional) p.domain += ", only in some programs";
    out.push_back(std::move(p));
  }
  // Tiles first, in step order, then the rest by name.
  auto rank = [](const std::string& k) {
    return k.rfind("tile:", 0) == 0 ? std::make_pair(0, std::stoll(k.substr(5))) : std::make_pair(1, 0ll);
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const ParameterSummary& a, const ParameterSummary& b) { return rank(a.key) < rank(b.key); });
  return out;
}

std::string sampleText(const ProgramDecisions& d) {
  std::ostringstream os;
  os << "sketch " << d.sketch << ":";
  for (bool tiles : {true, false})  // tiles first: they shape the loops
    for (const auto& [key, c] : d.choices) {
      if (c.tile != tiles) continue;
      os << " " << key << "=";
      if (c.tile)
        os << "[" << joinInts(c.value) << "]";
      else
        os << joinInts(c.value);
    }
  return os.str();
}

// The kernel code of the task's target (its vector width).
codegen::CppOptions cppOptions(const task::SearchTask& task) {
  return codegen::CppOptions(task.target);
}

// A scheduled program in its target's language: C++ for a CPU, CUDA C (the
// kernels with their launch dimensions and the host function) for a GPU.
std::string scheduledSource(const task::SearchTask& task, const std::vector<schedule::Step>& steps,
                            const std::string& symbol) {
  if (task.target.isCpu())
    return codegen::cppPrelude() + measure::programSource(task.dag, steps, symbol, cppOptions(task));
  const lower::LoweredFunc f = lower::lowerState(schedule::replay(task.dag, steps));
  return codegen::emitCudaProgram(f, symbol).source;
}

std::vector<Sketch> sketchesOf(const task::SearchTask& task, const schedule::HardwareParams& hw) {
  std::vector<Sketch> sketches = schedule::generateSketches(task.dag, hw);
  if (sketches.empty()) throw std::runtime_error("no sketch for task " + task.key);
  return sketches;
}

}  // namespace

double countTileLengths(int64_t extent, size_t n, int64_t maxInnermost) {
  if (n == 0) return 1;
  if (extent < 1) return 0;
  std::map<std::pair<int64_t, size_t>, double> memo;
  double total = 0;
  for (int64_t d : schedule::divisors(extent))
    if (d <= maxInnermost) total += tuplesDividing(extent / d, n - 1, memo);
  return total;
}

SpaceSummary summarizeSpace(const task::SearchTask& task, const schedule::HardwareParams& hw, int samples,
                            uint64_t seed) {
  std::vector<Sketch> sketches = sketchesOf(task, hw);
  SpaceSummary out;
  for (size_t i = 0; i < sketches.size(); ++i) {
    SketchSummary s;
    s.index = i;
    s.rules = sketches[i].rules;
    s.loopNest = loopNestText(sketches[i].state, tileLabels(sketches[i]));
    s.parameters = parametersOf(sketches[i], hw, seed);
    s.size = 1;
    for (const ParameterSummary& p : s.parameters)
      s.size *= p.choices;
    out.size += s.size;
    out.sketches.push_back(std::move(s));
  }
  // Sampled as the random search samples: a random sketch, annotated,
  // retried when the program is invalid for the target.
  std::mt19937_64 rng(seed);
  std::set<std::string> taken;
  for (int attempt = 0; int(out.samples.size()) < samples && attempt < 64 * std::max(1, samples); ++attempt) {
    ProgramDecisions d;
    d.sketch = std::uniform_int_distribution<size_t>(0, sketches.size() - 1)(rng);
    try {
      schedule::annotateSketch(sketches[d.sketch], hw, rng, &d);
    } catch (const schedule::ScheduleError&) {
      continue;
    }
    std::string json = schedule::serializeDecisions(d);
    if (!taken.insert(json).second) continue;
    out.samples.push_back(sampleText(d));
    out.sampleDecisions.push_back(std::move(json));
  }
  return out;
}

SpaceSummary summarizeSpace(const task::SearchTask& task, int samples, uint64_t seed) {
  return summarizeSpace(task, schedule::hardwareParams(task.target), samples, seed);
}

std::string kernelSymbol(const task::SearchTask& task) {
  return "tessel_" + lower::cIdent(task.key.empty() ? task.op : task.key);
}

std::string programSource(const task::SearchTask& task, const std::string& decisionsJson,
                          const schedule::HardwareParams& hw) {
  ProgramDecisions d = schedule::deserializeDecisions(decisionsJson);
  std::vector<Sketch> sketches = sketchesOf(task, hw);
  if (d.sketch >= sketches.size())
    throw std::runtime_error("the decisions are for sketch " + std::to_string(d.sketch) + " but task " + task.key +
                             " has " + std::to_string(sketches.size()) +
                             (sketches.size() == 1 ? " sketch" : " sketches"));
  std::vector<schedule::Step> steps = schedule::materialize(sketches[d.sketch], d, hw);
  std::ostringstream os;
  os << "// " << task.key << ", sketch " << d.sketch << "\n" << scheduledSource(task, steps, kernelSymbol(task));
  return os.str();
}

std::string programSource(const task::SearchTask& task, const std::string& decisionsJson) {
  return programSource(task, decisionsJson, schedule::hardwareParams(task.target));
}

std::string storedProgramSource(const task::SearchTask& task, const std::string& stepsJson) {
  std::vector<schedule::Step> steps = schedule::deserializeSteps(stepsJson);
  std::ostringstream os;
  os << "// " << task.key << ", stored program\n" << scheduledSource(task, steps, kernelSymbol(task));
  return os.str();
}

std::string naiveProgramSource(const task::SearchTask& task) {
  std::ostringstream os;
  os << "// " << task.key << ", naive program (not scheduled)\n"
     << codegen::cppPrelude() << measure::programSource(task.dag, {}, kernelSymbol(task));
  return os.str();
}

std::string loopNestText(const schedule::State& state) {
  return loopNestText(state, {});
}

}  // namespace tessel::search
