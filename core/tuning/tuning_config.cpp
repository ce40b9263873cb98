#include "tuning/tuning_config.h"

#include <nlohmann/json.hpp>

#include "cost/cost_model_registry.h"
#include "search/search_registry.h"

namespace tessel::tuning {

TuningConfig TuningConfig::resolved() const {
  TuningConfig c = *this;
  if (c.search.empty()) c.search = search::defaultSearch();
  if (c.costModel.empty()) c.costModel = cost::defaultCostModel();
  return c;
}

nlohmann::json TuningConfig::toJson(size_t tasks) const {
  const TuningConfig c = resolved();
  nlohmann::json j = {{"command", c.command},
                      {"model", c.model},
                      {"target", c.target},
                      {"fusion", c.fusion},
                      {"trials", c.trials},
                      {"search", c.search},
                      {"cost_model", c.costModel},
                      {"seed", c.seed},
                      {"batch", c.batch},
                      {"population", c.population},
                      {"cache_flush", measure::cacheStateName(c.cacheState)},
                      {"timeout_s", c.timeoutSeconds},
                      {"tasks", tasks}};
  if (!c.inputShapes.empty()) j["input_shapes"] = c.inputShapes;
  return j;
}

}  // namespace tessel::tuning
