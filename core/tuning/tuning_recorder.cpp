#include "tuning/tuning_recorder.h"

#include <stdexcept>

#include "schedule/steps.h"
#include "store/cost_model_store.h"
#include "store/session_store.h"

namespace tessel::tuning {

using store::RecordRow;

search::TuneRecord toTuneRecord(const RecordRow& r) {
  search::TuneRecord t;
  t.steps = r.steps;
  t.decisions = r.decisions;
  t.predicted = r.predicted;
  t.costModel = r.costModel;
  t.modelTrainedOn = r.modelTrainedOn;
  t.modelPretrained = r.modelPretrained;
  t.result.error = measure::ErrorCode(r.errorCode);
  t.result.message = r.errorMessage;
  t.result.costs = r.costs;
  t.result.buildSeconds = r.buildSeconds;
  t.result.runSeconds = r.runSeconds;
  t.result.maxAbsError = r.maxAbsError;
  return t;
}

RecordRow toRecordRow(const search::TuneRecord& t, int64_t taskId, int64_t sessionId) {
  RecordRow r;
  r.taskId = taskId;
  r.sessionId = sessionId;
  r.steps = t.steps;
  r.decisions = t.decisions;
  r.costs = t.result.ok() ? t.result.costs : std::vector<double>{};
  r.errorCode = int(t.result.error);
  r.errorMessage = t.result.message;
  r.predicted = t.predicted;
  r.costModel = t.costModel;
  r.modelTrainedOn = t.modelTrainedOn;
  r.modelPretrained = t.modelPretrained;
  r.buildSeconds = t.result.buildSeconds;
  r.runSeconds = t.result.runSeconds;
  r.maxAbsError = t.result.maxAbsError;
  return r;
}

TuningRecorder::TuningRecorder(store::Database& db, const task::SearchTask& task, const std::string& config,
                               int64_t trials, bool resume)
    : db_(db) {
  taskId_ = db_.ensureTask(store::taskRowOf(task));
  if (resume) {
    // The last session, interrupted or finished: it goes on to `trials`.
    if (auto s = db_.sessions().last(taskId_, 0)) {
      sessionId_ = s->id;
      resumed_ = true;
      db_.sessions().reopen(sessionId_, trials);
    }
  }
  if (!resumed_) sessionId_ = db_.sessions().start("task", taskId_, 0, config, trials);
  loadStored(task.dag);
}

TuningRecorder::TuningRecorder(store::Database& db, const task::SearchTask& task, int64_t modelSessionId) : db_(db) {
  taskId_ = db_.ensureTask(store::taskRowOf(task));
  sessionId_ = modelSessionId;
  loadStored(task.dag);
  resumed_ = !previous_.empty();
}

void TuningRecorder::loadStored(const te::ComputeDAG& dag) {
  for (const RecordRow& r : db_.records().ofTask(taskId_)) {
    if (!schedule::replayableSteps(dag, r.steps)) {
      ++damaged_;
      continue;
    }
    (r.sessionId == sessionId_ ? previous_ : known_).push_back(toTuneRecord(r));
  }
}

void TuningRecorder::attach(search::TuneOptions& o) {
  o.previous = previous_;
  o.known = known_;
  auto chained = o.onRecords;
  o.onRecords = [this, chained](const std::vector<search::TuneRecord>& batch) {
    std::vector<RecordRow> rows;
    rows.reserve(batch.size());
    for (const search::TuneRecord& t : batch)
      rows.push_back(toRecordRow(t, taskId_, sessionId_));
    db_.records().add(rows);
    if (chained) chained(batch);
  };
}

void TuningRecorder::finish(const search::TuneResult& result) {
  if (!result.costModelBlob.empty())
    db_.costModels().save(taskId_, sessionId_, result.costModelName, int64_t(result.costModelTrainedOn),
                          result.costModelBlob);
  db_.sessions().close(sessionId_, "finished");
}

void TuningRecorder::stop() {
  db_.sessions().close(sessionId_, "stopped");
}

void TuningRecorder::fail(const std::string& why) noexcept {
  db_.sessions().fail(sessionId_, why);
}

}  // namespace tessel::tuning
