// Connects one task's tuning to the database: registers the task, opens (or
// resumes) its session, hands the tuner the stored records so nothing is
// measured twice, and stores each measured batch in one transaction.
#pragma once

#include <optional>
#include <string>

#include "search/tuner.h"
#include "store/database.h"

namespace tessel::store {

TaskRow taskRowOf(const task::SearchTask& task);
// A stored library-operator task (tune-op's) rebuilt from its op, shape and
// layout. Throws std::runtime_error when it cannot be (a model's fused
// subgraph: rebuild it from the model) or when the operator's definition
// changed since it was tuned (another workload key).
task::SearchTask operatorTaskOf(const TaskRow& row);
// A stored record as the tuner's, and back.
search::TuneRecord toTuneRecord(const RecordRow& r);
RecordRow toRecordRow(const search::TuneRecord& r, int64_t taskId, int64_t sessionId);

// The task's best valid record whose steps replay on `dag`; records that do
// not (damaged, or of another definition) are skipped and counted in *skipped.
std::optional<BestRow> bestReplayable(const Database& db, int64_t taskId, const te::ComputeDAG& dag,
                                      int64_t* skipped = nullptr);

class TuningRecorder {
 public:
  // With `resume`, continues the task's last session (interrupted, or
  // finished with fewer trials) if there is one (resumed() says whether);
  // otherwise starts a new session. `config`
  // is the session's configuration as JSON.
  TuningRecorder(Database& db, const task::SearchTask& task, const std::string& config, int64_t trials, bool resume);

  // A task of a model's session (kind "model"): records of the task in that
  // session are its previous trials, the others are known.
  TuningRecorder(Database& db, const task::SearchTask& task, int64_t modelSessionId);

  // Fills options.previous / options.known and chains options.onRecords.
  void attach(search::TuneOptions& options);
  // Marks the session finished and keeps the final cost model.
  void finish(const search::TuneResult& result);
  // Marks the session stopped (a signal, the studio's Stop).
  void stop();
  // Marks the session failed with the reason; never throws.
  void fail(const std::string& why) noexcept;

  int64_t taskId() const { return taskId_; }
  int64_t sessionId() const { return sessionId_; }
  bool resumed() const { return resumed_; }
  size_t previousTrials() const { return previous_.size(); }
  size_t knownRecords() const { return known_.size(); }
  // Stored records of the task left out because their steps do not replay on
  // it (damaged, or of another definition): never measured or learned from.
  size_t damagedRecords() const { return damaged_; }

 private:
  Database& db_;
  int64_t taskId_ = 0, sessionId_ = 0;
  bool resumed_ = false;
  std::vector<search::TuneRecord> previous_, known_;
  size_t damaged_ = 0;

  void loadStored(const te::ComputeDAG& dag);
};

}  // namespace tessel::store
