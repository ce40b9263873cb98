#include "cost/program_features.h"

#include <exception>

#include "cost/features.h"
#include "lower/layout_rewrite.h"

namespace tessel::cost {

ProgramFeatureSet extractFeatureSet(const lower::LoweredFunc& f, FeatureKinds kinds, const target::Target& target) {
  ProgramFeatureSet s;
  if (kinds & kStoreRows) s.stores = extractFeatures(f, target);
  if (kinds & kGraph) s.graph = buildProgramGraph(f);
  if (kinds & kLoopTokens) s.loops = extractLoopTokens(f);
  s.valid = true;
  return s;
}

std::vector<ProgramFeatureSet> extractFeatureSets(const te::ComputeDAG& dag,
                                                  const std::vector<std::vector<schedule::Step>>& programs,
                                                  FeatureKinds kinds, const target::Target& target) {
  std::vector<ProgramFeatureSet> out(programs.size());
  // Lowering dominates a search round: programs are independent, so they
  // are shared out (the search never runs beside a measurement).
#pragma omp parallel for schedule(dynamic, 8) if (programs.size() >= 32)
  for (size_t i = 0; i < programs.size(); ++i) {
    try {
      lower::LoweredFunc f = lower::lowerState(schedule::replay(dag, programs[i]));
      lower::rewriteLayouts(&f);  // as measured and run: constants in the layout the loops walk
      out[i] = extractFeatureSet(f, kinds, target);
    } catch (const std::exception&) {
      out[i] = {};  // invalid: scored kInvalidScore
    }
  }
  return out;
}

}  // namespace tessel::cost
