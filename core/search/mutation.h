// Mutation and crossover of programs, as edits of their annotation decisions
// (schedule::ProgramDecisions); materialize() turns the result back into steps.
#pragma once

#include <random>

#include "schedule/sketch.h"

namespace tessel::search {

// Ansor's mutation kinds with its weights: tile size 0.90, compute location
// 0.05, unroll 0.04, parallel 0.01 (vectorize width rides with parallel).
// Returns false if the program has nothing of the chosen kind to mutate.
bool mutateDecisions(schedule::ProgramDecisions& d, std::mt19937_64& rng);
// Uniform crossover of two programs of the same sketch.
schedule::ProgramDecisions crossover(const schedule::ProgramDecisions& a, const schedule::ProgramDecisions& b,
                                     std::mt19937_64& rng);

}  // namespace tessel::search
