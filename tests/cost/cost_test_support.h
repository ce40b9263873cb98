// What the cost-model suites share: sampled programs of a task, the models
// on bare store rows, and TenSet's pairwise ranking accuracy.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "schedule/sketch.h"

namespace tessel::cost_test {

// Up to `count` random programs (random sketches, randomly annotated).
inline std::vector<std::vector<schedule::Step>> samplePrograms(const te::ComputeDAG& dag,
                                                               const schedule::HardwareParams& hw, size_t count,
                                                               uint64_t seed) {
  std::vector<schedule::Sketch> sketches = schedule::generateSketches(dag, hw);
  std::vector<std::vector<schedule::Step>> out;
  std::mt19937_64 rng(seed);
  for (size_t i = 0; out.size() < count && i < count * 20; ++i) {
    try {
      out.push_back(schedule::annotateSketch(sketches[i % sketches.size()], hw, rng));
    } catch (const schedule::ScheduleError&) {
    }
  }
  return out;
}

// Measured programs read from a JSON-lines file ({"cost": s, "steps": [...]}
// per line; failed ones, with a null cost, left out).
struct RecordedPrograms {
  std::vector<std::vector<schedule::Step>> programs;
  std::vector<double> costs;
};
inline RecordedPrograms loadRecordedPrograms(const std::string& path) {
  RecordedPrograms r;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["cost"].is_null()) continue;
    r.programs.push_back(schedule::deserializeSteps(j["steps"].dump()));
    r.costs.push_back(j["cost"].get<double>());
  }
  return r;
}

// The models on store rows alone, as one task's records.
inline void updateRows(cost::CostModel& m, const std::vector<cost::ProgramFeatures>& programs,
                       const std::vector<double>& costs) {
  m.updateFeatures({{"task", cost::fromStoreRows(programs), costs}});
}
inline std::vector<double> predictRows(cost::CostModel& m, const std::vector<cost::ProgramFeatures>& programs) {
  return m.predictFeatures("task", cost::fromStoreRows(programs));
}

// Share of pairs with different costs that the scores order rightly (a tie
// counts half).
inline double pairwiseAccuracy(const std::vector<double>& scores, const std::vector<double>& costs) {
  double good = 0;
  size_t pairs = 0;
  for (size_t i = 0; i < costs.size(); ++i)
    for (size_t j = i + 1; j < costs.size(); ++j) {
      if (costs[i] == costs[j]) continue;
      ++pairs;
      if (scores[i] == scores[j])
        good += 0.5;
      else if ((scores[i] > scores[j]) == (costs[i] < costs[j]))
        good += 1;
    }
  return pairs ? good / double(pairs) : 0.5;
}

}  // namespace tessel::cost_test
