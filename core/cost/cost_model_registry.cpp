#include "cost/cost_model_registry.h"

#include <stdexcept>

namespace tessel::cost {

namespace {

std::vector<CostModelEntry> builtIn() {
  std::vector<CostModelEntry> models;
#ifdef TESSEL_HAVE_XGBOOST
  const bool haveXgb = true;
#else
  const bool haveXgb = false;
#endif
  models.push_back({"xgb", "gradient-boosted trees on Ansor's per-store features (Ansor's model)",
                    [](uint64_t seed) { return makeXgbModel("throughput", seed); }, haveXgb,
                    "this build of Tessel has no XGBoost (libxgboost-dev)"});
  models.push_back({"random", "uniform random scores: the baseline every learned model must beat",
                    [](uint64_t seed) { return makeRandomModel(seed); }, true, ""});
  return models;
}

std::vector<CostModelEntry>& registry() {
  static std::vector<CostModelEntry> models = builtIn();
  return models;
}

}  // namespace

const std::vector<CostModelEntry>& costModels() {
  return registry();
}

void registerCostModel(CostModelEntry entry) {
  for (CostModelEntry& e : registry())
    if (e.name == entry.name) {
      e = std::move(entry);
      return;
    }
  registry().push_back(std::move(entry));
}

const CostModelEntry* findCostModel(const std::string& name) {
  for (const CostModelEntry& e : costModels())
    if (e.name == name) return &e;
  return nullptr;
}

std::string availableCostModels() {
  std::string names;
  for (const CostModelEntry& e : costModels())
    if (e.available) names += (names.empty() ? "" : ", ") + e.name;
  return names;
}

std::string defaultCostModel() {
  for (const CostModelEntry& e : costModels())
    if (e.available) return e.name;
  return "random";
}

std::unique_ptr<CostModel> makeCostModel(const std::string& name, uint64_t seed) {
  const CostModelEntry* e = findCostModel(name);
  if (!e) throw std::invalid_argument("unknown cost model '" + name + "' (available: " + availableCostModels() + ")");
  if (!e->available) throw std::runtime_error("cost model '" + name + "' is not available: " + e->why);
  return e->make(seed);
}

}  // namespace tessel::cost
