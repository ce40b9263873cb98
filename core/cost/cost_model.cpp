#include "cost/cost_model.h"

#include <stdexcept>

#include "target/target.h"

namespace tessel::cost {

void CostModel::update(const task::SearchTask& task, const std::vector<Program>& programs,
                       const std::vector<double>& costs) {
  if (programs.size() != costs.size()) {
    throw std::invalid_argument(name() + " cost model: " + std::to_string(programs.size()) + " programs but " +
                                std::to_string(costs.size()) + " costs");
  }
  updateFeatures({{task.key, extractFeatureSets(task.dag, programs, features(), task.target), costs}});
}

std::vector<double> CostModel::predict(const task::SearchTask& task, const std::vector<Program>& programs) {
  return predictFeatures(task.key, extractFeatureSets(task.dag, programs, features(), task.target));
}

void CostModel::load(const std::string& /*bytes*/) {
  throw std::runtime_error("the " + name() + " cost model cannot be loaded from a file");
}

void checkRecordSizes(const std::string& model, const std::vector<TaskRecords>& records) {
  for (const TaskRecords& r : records)
    if (r.programs.size() != r.costs.size())
      throw std::invalid_argument(model + " cost model: " + std::to_string(r.programs.size()) + " programs but " +
                                  std::to_string(r.costs.size()) + " costs");
}

std::vector<ProgramFeatureSet> fromStoreRows(const std::vector<ProgramFeatures>& programs) {
  std::vector<ProgramFeatureSet> out(programs.size());
  for (size_t i = 0; i < programs.size(); ++i) {
    out[i].stores = programs[i];
    out[i].valid = !programs[i].empty();
  }
  return out;
}

}  // namespace tessel::cost
