// Tunes one task: the search proposes batches, the pipeline builds and
// measures them, the best valid program wins.
#pragma once

#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "measure/program_measurer.h"
#include "search/search_policy.h"
#include "target/target.h"

namespace tessel::search {

struct TuneRecord {
  std::string steps;  // serialised
  measure::MeasureResult result;
  std::string decisions;  // serialised annotation decisions, if the policy knows them
  double predicted = std::numeric_limits<double>::quiet_NaN();  // cost model score at proposal
  std::string costModel;                                        // which model predicted it
  int64_t modelTrainedOn = -1;   // programs that model had learned from then (-1: not scored)
  bool modelPretrained = false;  // it was loaded trained (0 programs and not pretrained: untrained)
};

struct TuneOptions {
  int trials = 64;
  int batchSize = 16;
  std::string search = "evolutionary";
  std::string costModel = "xgb";
  // Set: the guided search asks this model (shared by the tasks of a model's
  // tuning) instead of making its own by name.
  std::shared_ptr<cost::CostModel> sharedCostModel;
  uint64_t seed = 1;
  schedule::HardwareParams hardware;
  EvolutionParams evolution;
  measure::MeasurerOptions measurer;
  // Makes each task's measurer (the fleet's, for one); empty: a
  // measure::ProgramMeasurer on this machine.
  measure::MeasurerFactory makeMeasurer;
  // Called after each measured batch (trials so far, best seconds so far).
  std::function<void(int, double)> onBatch;
  // Called with each measured batch's records, before onBatch (the store
  // writes them here, one transaction per batch).
  std::function<void(const std::vector<TuneRecord>&)> onRecords;
  // A resumed session: its records count towards `trials`, the best and the
  // curve. Records of other sessions of the task: learned from, never
  // measured again. Neither is passed to onRecords.
  std::vector<TuneRecord> previous;
  std::vector<TuneRecord> known;
  // A warm start's programs for the task (knowledge/schedule_transfer.h),
  // best first: the first round measures up to `transferFirst` of them, and
  // the guided search evolves from them.
  std::vector<SearchPolicy::Candidate> transferred;
  int transferFirst = 8;
  // false: TuneResult::records stays empty (a model's tuning stores the
  // records through onRecords and reads none back; kept, they grow with
  // every trial).
  bool keepRecords = true;
  // Set from another thread: the round in flight ends within about a tenth
  // of a second (search, compilers and the kernel being measured are cut
  // short) and its batch is discarded, neither recorded nor learned from.
  support::CancelFlag cancel;
};

// The options for tuning tasks of `target`: its hardware parameters (threads
// as cores), and its kernels' vector width, compiler flags and thread count.
// The plain defaults are those of the target "cpu"; a task of another target
// must be tuned with these (TaskTuner throws std::invalid_argument otherwise).
TuneOptions tuneOptionsFor(const target::Target& target);

struct TuneResult {
  int trials = 0, validTrials = 0;
  double bestSeconds = 0;  // median of the best program's repeats; 0 without a valid one
  Program bestSteps;
  std::string bestSource;
  std::vector<std::pair<int, double>> curve;  // (trial, best seconds so far)
  std::vector<TuneRecord> records;
  double wallSeconds = 0;
  double searchSeconds = 0;  // proposing batches: features, prediction, evolution
  size_t predictions = 0;    // programs the cost model scored
  // The guiding cost model at the end (empty for random search; no blob
  // for a shared model).
  std::string costModelName, costModelBlob;
  size_t costModelTrainedOn = 0;
  bool exhausted = false;  // every program of the space was proposed
};

// Tunes a task round by round (a round = one batch built and measured), so
// a task scheduler can share the trials of a model between its tasks.
class TaskTuner {
 public:
  // Restores options.previous / options.known before the first round.
  TaskTuner(const task::SearchTask& task, TuneOptions options);
  ~TaskTuner();
  TaskTuner(const TaskTuner&) = delete;
  TaskTuner& operator=(const TaskTuner&) = delete;

  // Proposes, builds and measures one batch; returns the programs measured
  // (0 when the trial budget is spent, the space is exhausted or the round
  // was cancelled).
  int runRound();
  // The same with at most `maxPrograms` programs (a smaller warm-up round,
  // or the last round of a model's budget).
  int runRound(int maxPrograms);
  bool done() const;
  // The search found no new program to propose: the task's space is used up.
  bool exhausted() const;
  const TuneResult& result() const { return r_; }
  // The final result (best source, saved cost model); call once at the end.
  const TuneResult& finish();
  const task::SearchTask& task() const { return task_; }

 private:
  struct State;
  const task::SearchTask& task_;
  TuneOptions o_;
  std::unique_ptr<State> s_;  // freed also when the constructor throws
  TuneResult r_;
  std::chrono::steady_clock::time_point start_;
};

TuneResult tuneTask(const task::SearchTask& task, const TuneOptions& options);

}  // namespace tessel::search
