// Schedule steps (Ansor's transform steps). A schedule is the list of steps
// replayed on the initial state of a compute DAG; each step checks that it
// applies and throws ScheduleError naming the problem if not. Steps refer to
// stages and iterators by index in the state they apply to.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "schedule/state.h"

namespace tessel::schedule {

struct SplitStep {  // iterator -> outer, then inner loops of `lengths`
  int stage, iter;
  std::vector<int64_t> lengths;
};
struct FuseStep {  // consecutive iterators -> one
  int stage;
  std::vector<int> iters;
};
struct ReorderStep {  // new loop order: a permutation of iterator indices
  int stage;
  std::vector<int> order;
};
struct ComputeAtStep {
  int stage, target, targetIter;
};
struct ComputeInlineStep {
  int stage;
};
struct ComputeRootStep {
  int stage;
};
struct CacheWriteStep {  // inserts `name.local` before the stage, which then copies it
  int stage;
  Scope scope;
};
struct CacheReadStep {  // inserts `name.shared` after the stage; `readers` read it instead
  int stage;
  Scope scope;
  std::vector<int> readers;
};
struct RfactorStep {  // reduce iterator -> spatial axis `factorAxis` of a new `name.rf` stage
  int stage, iter, factorAxis;
};
struct AnnotationStep {
  int stage, iter;
  Annotation annotation;
};
struct PragmaStep {  // auto_unroll_max_step
  int stage, iter, autoUnrollMaxStep;
};

using Step = std::variant<SplitStep, FuseStep, ReorderStep, ComputeAtStep, ComputeInlineStep, ComputeRootStep,
                          CacheWriteStep, CacheReadStep, RfactorStep, AnnotationStep, PragmaStep>;

void applyStep(State& state, const Step& step);
// Initial state of the DAG with all steps applied.
State replay(const te::ComputeDAG& dag, const std::vector<Step>& steps);

// Compact JSON, e.g. [["SP",2,0,[16,4]],["AN",2,0,"parallel"]].
std::string serializeSteps(const std::vector<Step>& steps);
std::vector<Step> deserializeSteps(const std::string& text);  // throws ScheduleError
std::string stepToString(const Step& step);

// The steps of a stored program when they are one of `dag`'s: they parse and
// replay on it. Otherwise nullopt, with the reason in *why (a damaged record,
// or one from another definition of the task).
std::optional<std::vector<Step>> replayableSteps(const te::ComputeDAG& dag, const std::string& text,
                                                 std::string* why = nullptr);

}  // namespace tessel::schedule
