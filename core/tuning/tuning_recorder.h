// Connects one task's tuning to the database: registers the task, opens (or
// resumes) its session, hands the tuner the stored records so nothing is
// measured twice, and stores each measured batch in one transaction.
#pragma once

#include <optional>
#include <string>

#include "search/tuner.h"
#include "store/database.h"
#include "store/record_store.h"
#include "store/task_rows.h"

namespace tessel::tuning {

search::TuneRecord toTuneRecord(const store::RecordRow& r);
store::RecordRow toRecordRow(const search::TuneRecord& r, int64_t taskId, int64_t sessionId);

class TuningRecorder {
 public:
  // With `resume`, continues the task's last session (interrupted, or
  // finished with fewer trials) if there is one (resumed() says whether);
  // otherwise starts a new session. `config`
  // is the session's configuration as JSON.
  TuningRecorder(store::Database& db, const task::SearchTask& task, const std::string& config, int64_t trials,
                 bool resume);

  // A task of a model's session (kind "model"): records of the task in that
  // session are its previous trials, the others are known.
  TuningRecorder(store::Database& db, const task::SearchTask& task, int64_t modelSessionId);

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
  store::Database& db_;
  int64_t taskId_ = 0, sessionId_ = 0;
  bool resumed_ = false;
  std::vector<search::TuneRecord> previous_, known_;
  size_t damaged_ = 0;

  void loadStored(const te::ComputeDAG& dag);
};

}  // namespace tessel::tuning
