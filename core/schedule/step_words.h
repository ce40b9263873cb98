// A program's schedule steps in words, for people (the studio's program
// inspector, `tessel` listings): each step named by the stage and loops it
// touches in the state it applies to, not by index, e.g.
//   "split C.i (extent 512) into 16 x 8 x 4"
//   "parallelize C.i.0@j.0 (extent 128)".
// Two programs' descriptions compare line by line (support/line_diff.h).
#pragma once

#include <string>
#include <vector>

#include "schedule/steps.h"

namespace tessel::schedule {

// One line per step, replaying them on the DAG's initial state to name what
// each one touches; `end`, if given, gets the state they lead to. Throws
// ScheduleError (naming the step) for steps that do not apply.
std::vector<std::string> stepsInWords(const te::ComputeDAG& dag, const std::vector<Step>& steps, State* end = nullptr);

// One step on the state it applies to (the state is not changed).
std::string stepInWords(const State& state, const Step& step);

}  // namespace tessel::schedule
