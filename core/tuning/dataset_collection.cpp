#include "tuning/dataset_collection.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "cost/cost_model_registry.h"
#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "store/record_store.h"
#include "store/session_store.h"
#include "tuning/tuning_recorder.h"

namespace tessel::tuning {

namespace {

void check(const DatasetConfig& c) {
  if (c.models.empty()) throw std::invalid_argument("no models to collect programs of");
  if (c.programsPerTask < 1)
    throw std::invalid_argument("programs per task must be at least 1, not " + std::to_string(c.programsPerTask));
  if (!(c.randomShare >= 0 && c.randomShare <= 1))
    throw std::invalid_argument("the random share must be between 0 and 1, not " + std::to_string(c.randomShare));
  if (c.tuning.batch < 1) throw std::invalid_argument("the batch must be at least 1");
}

// The guiding model: xgb where this build has it (fast to retrain on a few
// hundred programs), else random programs only.
std::string guide() {
  return cost::findCostModel("xgb") && cost::findCostModel("xgb")->available ? "xgb" : "random";
}

}  // namespace

DatasetSummary collectDataset(const DatasetConfig& config, const std::string& dbPath, const DatasetEvents& events) {
  check(config);
  TuningConfig t = config.tuning;
  t.command = "dataset collect";
  t.search = "evolutionary";
  t.costModel = guide();
  t = t.resolved();
  // Every model is read before the database is touched.
  std::vector<std::shared_ptr<frontend::PreparedModel>> models;
  for (const std::string& name : config.models)
    models.push_back(
        std::make_shared<frontend::PreparedModel>(frontend::prepareModel(name, t.inputShapes, t.fusion, t.target)));
  auto db = store::Database::open(dbPath, store::OpenMode::ReadWrite);

  DatasetSummary summary;
  for (size_t m = 0; m < models.size() && !summary.stopped; ++m) {
    const std::string& name = config.models[m];
    std::vector<task::SearchTask> tasks;
    const int64_t modelId = db->ensureModel(name, name);
    bool missing = false;
    for (const fusion::GraphTask& g : models[m]->tasks) {
      tasks.push_back(fusion::toSearchTask(g, t.target));
      const int64_t taskId = db->ensureTask(store::taskRowOf(tasks.back()));
      db->setModelTask(modelId, taskId, double(g.weight));
      missing = missing || int(db->records().ofTask(taskId).size()) < config.programsPerTask;
    }
    summary.tasks += tasks.size();
    if (!missing) continue;  // complete: no session to open
    nlohmann::json cfg = t.toJson(tasks.size());
    cfg["model"] = name;
    cfg["programs_per_task"] = config.programsPerTask;
    cfg["random_share"] = config.randomShare;
    const int64_t session =
        db->sessions().start("model", 0, modelId, cfg.dump(), int64_t(config.programsPerTask) * int64_t(tasks.size()));
    // One guiding model for the model's tasks, as a tuning has.
    auto guideModel = std::shared_ptr<cost::CostModel>(cost::makeCostModel(t.costModel, t.seed));
    try {
      for (size_t i = 0; i < tasks.size() && !summary.stopped; ++i) {
        search::TuneOptions o = t.taskOptions();
        o.seed = t.seed + i;
        o.sharedCostModel = guideModel;
        o.evolution.epsGreedy = config.randomShare;
        o.cancel = events.cancel;
        tuning::TuningRecorder recorder(*db, tasks[i], session);
        recorder.attach(o);
        const int have = int(recorder.previousTrials() + recorder.knownRecords());
        DatasetProgress progress{name, i, tasks.size(), have, summary.measured};
        if (have >= config.programsPerTask) {
          if (events.onTask) events.onTask(progress);
          continue;
        }
        // The session's own records count towards trials; the others' do not.
        o.trials = int(recorder.previousTrials()) + (config.programsPerTask - have);
        auto stored = o.onRecords;
        o.onRecords = [&](const std::vector<search::TuneRecord>& batch) {
          stored(batch);
          summary.measured += int(batch.size());
          progress.taskPrograms += int(batch.size());
          for (const search::TuneRecord& r : batch)
            summary.valid += r.result.ok();
        };
        search::TaskTuner tuner(tasks[i], o);
        while (!tuner.done()) {
          const int n = tuner.runRound();
          if (support::isCancelled(events.cancel)) summary.stopped = true;
          progress.measured = summary.measured;
          if (events.onTask) events.onTask(progress);
          if (n == 0 || summary.stopped) break;
        }
      }
    } catch (const std::exception& e) {
      db->sessions().fail(session, e.what());
      throw;
    }
    db->sessions().close(session, summary.stopped ? "stopped" : "finished");
  }
  for (const std::string& name : config.models)
    for (const auto& [task, weight] : db->modelTasks(name))
      summary.records += int64_t(db->records().ofTask(task.id).size());
  return summary;
}

}  // namespace tessel::tuning
