// The cost models Tessel knows, by name, in one table: what `--cost-model`
// accepts, what the studio's cost-model box lists and what help texts print,
// and how each model is made. Optional libraries (the LibTorch models) add
// their entries with registerCostModel().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cost/cost_model.h"

namespace tessel::cost {

struct CostModelEntry {
  std::string name;     // as typed: "xgb"
  std::string summary;  // one line for help texts and tooltips
  std::function<std::unique_ptr<CostModel>(uint64_t seed)> make;
  // False when this build lacks the model's library; `why` says which.
  bool available = true;
  std::string why;
};

// Every registered model, available or not, in the order help texts list them.
const std::vector<CostModelEntry>& costModels();
// Adds (or replaces) a model by name. At start-up, before any tuning reads
// the table (it is not locked).
void registerCostModel(CostModelEntry entry);
// nullptr for an unknown name.
const CostModelEntry* findCostModel(const std::string& name);
// The names of the models this build can make, comma-separated ("xgb, random").
std::string availableCostModels();
// The best model this build can make: "xgb" where XGBoost is present.
std::string defaultCostModel();

// By name: std::invalid_argument for an unknown name (naming the available
// ones), std::runtime_error for a model this build lacks (saying why).
std::unique_ptr<CostModel> makeCostModel(const std::string& name, uint64_t seed);

}  // namespace tessel::cost
