#include "schedule/step_words.h"

#include <sstream>

namespace tessel::schedule {
namespace {

const Stage& stageAt(const State& s, int stage) {
  if (stage < 0 || size_t(stage) >= s.stages.size())
    throw ScheduleError("no stage " + std::to_string(stage) + " in the state");
  return s.stages[size_t(stage)];
}

const Iterator& iterAt(const Stage& st, int iter) {
  if (iter < 0 || size_t(iter) >= st.iters.size())
    throw ScheduleError("no loop " + std::to_string(iter) + " in stage " + st.op.name);
  return st.iters[size_t(iter)];
}

// "C.i.0 (extent 16)"
std::string loop(const Stage& st, int iter) {
  const Iterator& it = iterAt(st, iter);
  return st.op.name + "." + it.name + " (extent " + std::to_string(it.extent) + ")";
}

std::string annotationVerb(Annotation a) {
  switch (a) {
    case Annotation::None:
      return "leave plain";
    case Annotation::Unroll:
      return "unroll";
    case Annotation::Vectorize:
      return "vectorize";
    case Annotation::Parallel:
      return "parallelize";
    case Annotation::VThread:
      return "bind to a virtual thread";
    default:
      return std::string("bind to ") + annotationName(a);
  }
}

struct Words {
  const State& s;

  std::string operator()(const SplitStep& x) const {
    const Stage& st = stageAt(s, x.stage);
    const Iterator& it = iterAt(st, x.iter);
    int64_t inner = 1;
    for (int64_t l : x.lengths)
      inner *= l;
    std::ostringstream os;
    os << "split " << loop(st, x.iter) << " into " << (inner > 0 ? (it.extent + inner - 1) / inner : 0);
    for (int64_t l : x.lengths)
      os << " x " << l;
    return os.str();
  }
  std::string operator()(const FuseStep& x) const {
    const Stage& st = stageAt(s, x.stage);
    std::ostringstream os;
    int64_t extent = 1;
    os << "fuse ";
    for (size_t k = 0; k < x.iters.size(); ++k) {
      const Iterator& it = iterAt(st, x.iters[k]);
      extent *= it.extent;
      os << (k ? ", " : "") << st.op.name << "." << it.name;
    }
    os << " into one loop (extent " << extent << ")";
    return os.str();
  }
  std::string operator()(const ReorderStep& x) const {
    const Stage& st = stageAt(s, x.stage);
    std::ostringstream os;
    os << "order " << st.op.name << "'s loops as";
    for (size_t k = 0; k < x.order.size(); ++k)
      os << (k ? ", " : " ") << iterAt(st, x.order[k]).name;
    return os.str();
  }
  std::string operator()(const ComputeAtStep& x) const {
    const Stage& target = stageAt(s, x.target);
    return "compute " + stageAt(s, x.stage).op.name + " inside " + loop(target, x.targetIter);
  }
  std::string operator()(const ComputeInlineStep& x) const {
    return "inline " + stageAt(s, x.stage).op.name + " into its consumers";
  }
  std::string operator()(const ComputeRootStep& x) const {
    return "compute " + stageAt(s, x.stage).op.name + " at the root, in loops of its own";
  }
  std::string operator()(const CacheWriteStep& x) const {
    const std::string name = stageAt(s, x.stage).op.name;
    return "compute " + name + " into a " + scopeName(x.scope) + " buffer " + name + "." + scopeName(x.scope) +
           ", then copy it out";
  }
  std::string operator()(const CacheReadStep& x) const {
    const std::string name = stageAt(s, x.stage).op.name;
    std::ostringstream os;
    os << "read " << name << " through a " << scopeName(x.scope) << " copy " << name << "." << scopeName(x.scope)
       << " for";
    for (size_t k = 0; k < x.readers.size(); ++k)
      os << (k ? ", " : " ") << stageAt(s, x.readers[k]).op.name;
    return os.str();
  }
  std::string operator()(const RfactorStep& x) const {
    const Stage& st = stageAt(s, x.stage);
    return "factor the reduction " + loop(st, x.iter) + " out into " + st.op.name + ".rf (at its axis " +
           std::to_string(x.factorAxis) + ")";
  }
  std::string operator()(const AnnotationStep& x) const {
    return annotationVerb(x.annotation) + " " + loop(stageAt(s, x.stage), x.iter);
  }
  std::string operator()(const PragmaStep& x) const {
    const Stage& st = stageAt(s, x.stage);
    return "unroll the loops of " + st.op.name + " below " + iterAt(st, x.iter).name + " up to " +
           std::to_string(x.autoUnrollMaxStep) + " steps";
  }
};

}  // namespace

std::string stepInWords(const State& state, const Step& step) {
  return std::visit(Words{state}, step);
}

std::vector<std::string> stepsInWords(const te::ComputeDAG& dag, const std::vector<Step>& steps, State* end) {
  State state(dag);
  std::vector<std::string> out;
  out.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    try {
      out.push_back(stepInWords(state, steps[i]));
      applyStep(state, steps[i]);
    } catch (const ScheduleError& e) {
      throw ScheduleError("step " + std::to_string(i + 1) + ": " + e.what());
    }
  }
  if (end) *end = std::move(state);
  return out;
}

}  // namespace tessel::schedule
