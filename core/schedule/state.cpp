#include "schedule/state.h"

#include <algorithm>
#include <sstream>

namespace tessel::schedule {

namespace {
const char* kAnnotationNames[] = {"none",       "unroll",     "vectorize",   "parallel",    "vthread",    "blockIdx.x",
                                  "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"};
}

const char* annotationName(Annotation a) {
  return kAnnotationNames[int(a)];
}

Annotation annotationFromName(const std::string& name) {
  for (int i = 0; i <= int(Annotation::ThreadZ); ++i)
    if (name == kAnnotationNames[i]) return Annotation(i);
  throw ScheduleError("unknown annotation '" + name + "'");
}

bool isGpuBinding(Annotation a) {
  return a >= Annotation::VThread;
}

const char* scopeName(Scope s) {
  switch (s) {
    case Scope::Local:
      return "local";
    case Scope::Shared:
      return "shared";
    default:
      return "global";
  }
}

int Stage::iterIndex(const std::string& name) const {
  for (size_t i = 0; i < iters.size(); ++i)
    if (iters[i].name == name) return int(i);
  return -1;
}

std::map<std::string, int64_t> fullExtents(const te::Op& op) {
  std::map<std::string, int64_t> m;
  for (const te::IterVar& a : op.axes)
    m[a.name] = a.extent;
  for (const te::IterVar& a : op.reduceAxes)
    m[a.name] = a.extent;
  return m;
}

LoopStructure deriveLoops(const Stage& stage, const std::map<std::string, int64_t>& rootExtents) {
  std::map<std::string, int64_t> extent = rootExtents;
  struct Guard {
    std::string name;
    int64_t extent;
  };
  std::vector<Guard> guards;
  for (const Relation& r : stage.relations) {
    if (r.kind == Relation::Split) {
      // Innermost first; a length larger than what remains of the extent is
      // clamped (the outer loops then have extent 1), so a stage narrowed by
      // compute_at does not loop over tiles it never needs.
      int64_t e = extent.at(r.inputs[0]), rest = e, total = 1;
      for (size_t i = r.lengths.size(); i-- > 0;) {
        int64_t l = std::min(r.lengths[i], rest);
        extent[r.outputs[i + 1]] = l;
        rest = (rest + l - 1) / l;
        total *= l;
      }
      extent[r.outputs[0]] = rest;
      if (rest * total != e) guards.push_back({r.inputs[0], e});
    } else {
      int64_t e = 1;
      for (const std::string& in : r.inputs)
        e *= extent.at(in);
      extent[r.outputs[0]] = e;
    }
  }
  LoopStructure ls;
  std::map<std::string, te::Expr> value;
  for (const Iterator& it : stage.iters) {
    ls.extents.push_back(extent.at(it.name));
    // A loop of extent 1 contributes nothing: its value is 0.
    value[it.name] = ls.extents.back() == 1 ? te::intImm(0) : te::var(it.name);
  }
  for (auto r = stage.relations.rbegin(); r != stage.relations.rend(); ++r) {
    if (r->kind == Relation::Split) {
      te::Expr v = value.at(r->outputs[0]);
      for (size_t i = 0; i < r->lengths.size(); ++i)
        v = v * r->lengths[i] + value.at(r->outputs[i + 1]);
      value[r->inputs[0]] = v;
    } else {
      te::Expr f = value.at(r->outputs[0]);
      int64_t below = 1;
      for (size_t k = r->inputs.size(); k-- > 0;) {
        int64_t e = extent.at(r->inputs[k]);
        te::Expr v = f / below;
        if (k > 0) v = v % e;
        value[r->inputs[k]] = v;
        below *= e;
      }
    }
  }
  for (const auto& [name, e] : rootExtents)
    ls.rootValue[name] = value.at(name);
  for (const Guard& g : guards)
    ls.predicates.push_back(value.at(g.name) < te::intImm(g.extent));
  return ls;
}

std::vector<Iterator> initialIterators(const te::Op& op) {
  std::vector<Iterator> its;
  for (const te::IterVar& a : op.axes)
    its.push_back({a.name, a.extent, IterKind::Spatial});
  for (const te::IterVar& a : op.reduceAxes)
    its.push_back({a.name, a.extent, IterKind::Reduce});
  return its;
}

State::State(const te::ComputeDAG& dag) : outputs(dag.outputs()) {
  for (const te::Op& op : dag.ops()) {
    Stage s;
    s.op = op;
    if (!op.placeholder) s.iters = initialIterators(op);
    stages.push_back(std::move(s));
  }
}

int State::stageIndex(const std::string& name) const {
  for (size_t i = 0; i < stages.size(); ++i)
    if (stages[i].op.name == name) return int(i);
  return -1;
}

const Stage& State::stage(const std::string& name) const {
  int i = stageIndex(name);
  if (i < 0) throw ScheduleError("no stage named '" + name + "'");
  return stages[size_t(i)];
}

bool State::isOutput(const std::string& name) const {
  return std::find(outputs.begin(), outputs.end(), name) != outputs.end();
}

std::vector<std::string> State::effectiveInputs(int s) const {
  std::vector<std::string> out;
  for (const std::string& in : stages[size_t(s)].op.inputs()) {
    int i = stageIndex(in);
    if (i >= 0 && stages[size_t(i)].location == ComputeLocation::Inlined) {
      for (const std::string& x : effectiveInputs(i))
        if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
    } else if (std::find(out.begin(), out.end(), in) == out.end()) {
      out.push_back(in);
    }
  }
  return out;
}

std::vector<int> State::consumers(int s) const {
  std::vector<int> out;
  const std::string& name = stages[size_t(s)].op.name;
  for (size_t i = 0; i < stages.size(); ++i) {
    const Stage& st = stages[i];
    if (st.op.placeholder || st.location == ComputeLocation::Inlined) continue;
    std::vector<std::string> in = effectiveInputs(int(i));
    if (std::find(in.begin(), in.end(), name) != in.end()) out.push_back(int(i));
  }
  return out;
}

std::vector<int> State::attachedTo(int s) const {
  std::vector<int> out;
  for (size_t i = 0; i < stages.size(); ++i)
    if (stages[i].location == ComputeLocation::At && stages[i].attachStage == stages[size_t(s)].op.name)
      out.push_back(int(i));
  return out;
}

std::string State::toString() const {
  std::ostringstream os;
  for (const Stage& s : stages) {
    os << s.op.name;
    if (s.op.placeholder) {
      os << ": placeholder\n";
      continue;
    }
    if (s.location == ComputeLocation::Inlined) os << " (inlined)";
    if (s.location == ComputeLocation::At) os << " @ " << s.attachStage << "." << s.attachIter;
    if (s.scope != Scope::Global) os << " [" << scopeName(s.scope) << "]";
    os << ":";
    for (const Iterator& it : s.iters) {
      os << " " << it.name << "(" << it.extent << (it.kind == IterKind::Reduce ? ",R" : "");
      if (it.annotation != Annotation::None) os << "," << annotationName(it.annotation);
      os << ")";
    }
    if (s.autoUnrollMaxStep) os << " unroll<=" << s.autoUnrollMaxStep;
    os << "\n";
  }
  return os.str();
}

}  // namespace tessel::schedule
