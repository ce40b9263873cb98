// The annotation decisions of a program known only by its steps (a dataset's
// records carry no decisions): which sketch it completes and how, found by
// replaying the annotation with each decision tried in turn. With them, a
// stored program can be re-fitted to another task of the same structure and
// evolved from (knowledge/schedule_transfer.h).
#pragma once

#include <optional>
#include <vector>

#include "schedule/sketch.h"

namespace tessel::schedule {

// The decisions whose materialize() on one of `sketches` gives exactly
// `steps` (ProgramDecisions::sketch says which), or nullopt when no sketch
// gives them (a program of another definition, of other hardware limits, or
// one edited by hand).
std::optional<ProgramDecisions> inferDecisions(const std::vector<Sketch>& sketches, const std::vector<Step>& steps,
                                               const HardwareParams& hw);

}  // namespace tessel::schedule
