#include "tuning/operator_tuning.h"

#include <nlohmann/json.hpp>

#include "measure/cache_state.h"
#include "support/cancellation.h"
#include "tuning/tuning_recorder.h"

namespace tessel::tuning {

OperatorTuning::OperatorTuning(OperatorTuningConfig config)
    : config_(std::move(config)),
      task_(task::makeOperatorTask(config_.op, config_.shape, config_.target, config_.layout)) {
  if (config_.database.empty()) return;
  db_ = store::Database::open(config_.database, store::OpenMode::ReadWrite);
  recorder_ = std::make_unique<TuningRecorder>(*db_, task_, sessionConfig(), config_.options.trials, config_.resume);
  recorder_->attach(config_.options);
}

OperatorTuning::~OperatorTuning() = default;

// The session's configuration as the database keeps it.
std::string OperatorTuning::sessionConfig() const {
  const search::TuneOptions& o = config_.options;
  nlohmann::json c = {{"command", "tune-op"},
                      {"op", config_.op},
                      {"shape", config_.shape},
                      {"target", config_.target.str()},
                      {"layout", task_.layout},
                      {"trials", o.trials},
                      {"search", o.search},
                      {"cost_model", o.search == "random" ? "none" : o.costModel},
                      {"seed", o.seed},
                      {"batch", o.batchSize},
                      {"population", o.evolution.population},
                      {"cache_flush", measure::cacheStateName(o.measurer.run.cacheState)}};
  if (!config_.measuredOn.empty()) c["measure"] = config_.measuredOn;
  return c.dump();
}

OperatorTuningResult OperatorTuning::run() {
  OperatorTuningResult out;
  try {
    out.tune = search::tuneTask(task_, config_.options);
  } catch (const std::exception& e) {
    // A cancel during the first round's reference build ends it with an exception.
    if (!support::isCancelled(config_.options.cancel)) {
      if (recorder_) recorder_->fail(e.what());
      throw;
    }
  }
  out.stopped = support::isCancelled(config_.options.cancel);
  if (out.stopped) {
    if (recorder_) recorder_->stop();
    return out;
  }
  // A pre-trained model fine-tuned here is kept as a tuning's own model is.
  if (config_.options.sharedCostModel) out.tune.costModelBlob = config_.options.sharedCostModel->save();
  if (recorder_) recorder_->finish(out.tune);
  return out;
}

}  // namespace tessel::tuning
