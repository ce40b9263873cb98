// Program features for the cost models: Ansor's 164 statistical features per
// buffer store of the lowered loop nest (computation, 5 x buffer access,
// arithmetic-intensity curve, allocation, other), and 6 of Tessel's own on
// the register tile the code generator makes of the store on the target.
#pragma once

#include <string>
#include <vector>

#include "cost/cost_model_types.h"
#include "lower/loop_nest.h"
#include "schedule/steps.h"
#include "target/target.h"
#include "te/compute_dag.h"

namespace tessel::cost {

constexpr size_t kNumFeatures = 170;

// One row of kNumFeatures per Store statement of the function, as its kernel
// is built for `target` (the register tiles depend on its vectors; a CUDA
// kernel has none).
ProgramFeatures extractFeatures(const lower::LoweredFunc& f, const target::Target& target = target::Target::host());
// Replays, lowers and extracts; an empty result if the program is invalid.
ProgramFeatures extractProgramFeatures(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps,
                                       const target::Target& target = target::Target::host());
// Names of the features, in row order (for docs, tests and the studio).
const std::vector<std::string>& featureNames();

}  // namespace tessel::cost
