// Tuning one library operator (`tessel tune-op`), the twin of ModelTuning for
// a single task: the task built from its op, shape, target and layout; the
// database and its session opened (or resumed) before any program is built,
// so a bad file fails fast; the tuner run with every batch stored; and the
// session marked finished, stopped (the cancel flag) or failed, whatever ends it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "search/tuner.h"
#include "store/database.h"
#include "task/search_task.h"

namespace tessel::tuning {

class TuningRecorder;

struct OperatorTuningConfig {
  std::string op;
  std::vector<int64_t> shape;
  target::Target target = target::Target::host();
  std::string layout;           // image ops: "nchw" or "nhwc" ("" the op's default)
  search::TuneOptions options;  // trials, search, cost model, measurer, cancel flag, callbacks
  std::string database;         // "" keeps nothing
  bool resume = false;          // continue the task's last session
  std::string measuredOn;       // where programs are measured when not here (the fleet's URL)
};

// How a run ended.
struct OperatorTuningResult {
  search::TuneResult tune;
  bool stopped = false;  // the cancel flag ended it: the round in flight was dropped
};

class OperatorTuning {
 public:
  // Throws std::invalid_argument for an op, shape or layout that makes no
  // task, and the database's errors for a file it cannot use.
  explicit OperatorTuning(OperatorTuningConfig config);
  ~OperatorTuning();

  const task::SearchTask& task() const { return task_; }
  // Null with no database.
  const store::Database* database() const { return db_.get(); }
  const TuningRecorder* recorder() const { return recorder_.get(); }

  // Runs the tuner once. A failure marks the session failed and is thrown
  // again; the cancel flag marks it stopped.
  OperatorTuningResult run();

 private:
  std::string sessionConfig() const;

  OperatorTuningConfig config_;
  task::SearchTask task_;
  std::unique_ptr<store::Database> db_;
  std::unique_ptr<TuningRecorder> recorder_;
};

}  // namespace tessel::tuning
