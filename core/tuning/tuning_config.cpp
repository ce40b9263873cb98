#include "tuning/tuning_config.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <thread>

#include "cost/cost_model_registry.h"
#include "search/search_registry.h"
#include "target/target.h"

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
                      {"target", c.target.str()},
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
  if (c.measure != "local") j["measure"] = c.measure;
  if (!c.costModelFile.empty()) j["cost_model_file"] = c.costModelFile;
  if (c.minutes > 0) j["minutes"] = c.minutes;
  j["warm"] = !c.cold;
  if (!c.cold) {
    j["knowledge"] = c.knowledge;
    j["transfer"] = c.transfer;
  }
  return j;
}

search::TuneOptions TuningConfig::taskOptions() const {
  const TuningConfig c = resolved();
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  search::TuneOptions t = search::tuneOptionsFor(c.target);
  t.batchSize = c.batch;
  t.search = c.search;
  t.costModel = c.costModel;
  t.seed = c.seed;
  t.evolution.population = c.population;
  t.measurer.run.workerPath = c.workerPath;
  t.measurer.run.timeoutSeconds = c.timeoutSeconds;
  t.measurer.run.seed = unsigned(c.seed);
  t.measurer.run.cacheState = c.cacheState;
  t.measurer.build.jobs = c.jobs > 0 ? c.jobs : cores;
  t.makeMeasurer = c.makeMeasurer;
  return t;
}

}  // namespace tessel::tuning
