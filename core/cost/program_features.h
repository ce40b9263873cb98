// What cost models read of a program, extracted once from its lowered loop
// nest: Ansor's per-store rows (cost/features.h), the program graph of the
// graph models (cost/program_graph.h) and ATFormer's loop tokens
// (cost/loop_tokens.h). A model asks only for the kinds it reads.
#pragma once

#include <vector>

#include "cost/cost_model_types.h"
#include "cost/loop_tokens.h"
#include "cost/program_graph.h"
#include "schedule/steps.h"
#include "target/target.h"
#include "te/compute_dag.h"

namespace tessel::cost {

// Bits of FeatureKinds.
enum FeatureKind : unsigned {
  kStoreRows = 1u << 0,
  kGraph = 1u << 1,
  kLoopTokens = 1u << 2,
  kAllFeatures = kStoreRows | kGraph | kLoopTokens,
};
using FeatureKinds = unsigned;

struct ProgramFeatureSet {
  bool valid = false;      // false: the program did not replay or lower (scored kInvalidScore)
  ProgramFeatures stores;  // kStoreRows
  ProgramGraph graph;      // kGraph
  LoopTokens loops;        // kLoopTokens
};

// `target`: what the kernel is built for (the store rows' register tiles).
ProgramFeatureSet extractFeatureSet(const lower::LoweredFunc& f, FeatureKinds kinds,
                                    const target::Target& target = target::Target::host());
// Replays and lowers each program; several threads for many programs.
std::vector<ProgramFeatureSet> extractFeatureSets(const te::ComputeDAG& dag,
                                                  const std::vector<std::vector<schedule::Step>>& programs,
                                                  FeatureKinds kinds,
                                                  const target::Target& target = target::Target::host());

}  // namespace tessel::cost
