// Tuning a model, the one way the CLI (`tessel tune`) and the studio do it:
// the model prepared once, a session created or resumed in the database
// with the config of tuning/tuning_config.h, every measured batch stored as
// it comes, the cost models kept at the end, and the session marked
// finished, stopped or failed, whatever ends it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "frontend/model_loader.h"
#include "search/task_scheduler.h"
#include "store/database.h"
#include "support/cancellation.h"
#include "tuning/tuning_config.h"
#include "tuning/warm_start.h"

namespace tessel::tuning {

class TuningRecorder;

// Trials measured so far.
struct TuningProgress {
  int runTrials = 0;      // by this run
  int sessionTrials = 0;  // held by the session (a resumed session's earlier ones included)
};

// Callbacks of a run, all called on the thread that runs it.
struct TuningEvents {
  // After each round: the task, its result so far, the estimated end-to-end
  // seconds (+inf while a task has no valid program), and the trials.
  std::function<void(size_t task, const search::TuneResult&, double estimate, const TuningProgress&)> onRound;
  // Each measured batch of a task, once stored.
  std::function<void(size_t task, const std::vector<search::TuneRecord>&)> onRecords;
  // A task's new best program (better than every earlier one of the session).
  std::function<void(size_t task, const search::TuneRecord&)> onBest;
  // A task's search space is used up: it takes no more rounds.
  std::function<void(size_t task, const search::TuneResult&)> onExhausted;
  // Before each round: false stops the tuning ("stopped"). A pause blocks
  // inside it; with `cancel` set, it must clear the flag to go on.
  std::function<bool()> keepGoing;
  // Set from another thread (or a signal handler): the round in flight is
  // abandoned, then keepGoing decides.
  support::CancelFlag cancel;
  // Once, before the first round: what the tuning starts from.
  std::function<void(const WarmStartSummary&)> onWarmStart;
};

// How openSession picks the session to record into.
inline constexpr int64_t kNewSession = 0;
inline constexpr int64_t kLastSession = -1;  // the model's last one if any, else a new one

class ModelTuning {
 public:
  // Prepares the model (import, folding, fusion, tasks) unless `prepared`
  // is the same model already prepared with the config's fusion and target,
  // and reads the knowledge base unless config.cold (a guided search with
  // no cost model named, or the knowledge base's, starts from its
  // pre-trained model). Throws what frontend::prepareModel throws;
  // std::invalid_argument for a search or cost model this build does not
  // know, or --trials 0 without a warm start; what WarmStart throws for a
  // knowledge base that does not fit or is damaged.
  explicit ModelTuning(TuningConfig config, std::shared_ptr<const frontend::PreparedModel> prepared = nullptr);
  ~ModelTuning();
  ModelTuning(const ModelTuning&) = delete;
  ModelTuning& operator=(const ModelTuning&) = delete;

  const TuningConfig& config() const { return config_; }  // resolved
  const frontend::PreparedModel& model() const { return *model_; }
  const std::vector<search::ModelTask>& tasks() const { return tasks_; }
  // What the last run started from (complete once its first round began).
  const WarmStartSummary& warmStart() const { return warm_->summary(); }

  // Records into the database at `path` (created if missing): a new session
  // (kNewSession), the model's last one (kLastSession), or the session with
  // that id, which must be a session of this model. Everything is checked
  // before the first write: an unknown session, or a budget that cannot
  // give every task a program, throws std::invalid_argument.
  void openSession(const std::string& path, int64_t resume = kNewSession);
  bool hasSession() const { return db_ != nullptr; }
  int64_t sessionId() const { return sessionId_; }
  bool resumed() const { return resumed_; }
  const std::string& databasePath() const;
  // Trials the session held when opened (0 for a new one).
  int64_t earlierTrials() const { return earlierTrials_; }

  // Tunes until the session has config().trials, saves each task's cost
  // model and marks the session finished, or stopped (keepGoing / cancel);
  // on an exception, failed, and the exception goes on.
  // std::invalid_argument when the budget cannot give every new task one program.
  search::ModelTuneResult run(const TuningEvents& events = {});
  // Stored records the last run left out because their steps do not replay
  // on their task (damaged, or of another definition of it).
  size_t damagedRecords() const;

 private:
  search::ModelTuneOptions tuneOptions(const TuningEvents& events, std::vector<double>& best, TuningProgress& progress);
  void saveCostModels();

  TuningConfig config_;
  std::shared_ptr<const frontend::PreparedModel> model_;
  std::vector<search::ModelTask> tasks_;
  std::unique_ptr<store::Database> db_;
  int64_t sessionId_ = 0, earlierTrials_ = 0;
  bool resumed_ = false;
  std::vector<std::unique_ptr<TuningRecorder>> recorders_;
  std::shared_ptr<cost::CostModel> sharedModel_;  // one model for every task (guided searches)
  std::unique_ptr<WarmStart> warm_;
  bool pretrained_ = false;  // sharedModel_ starts as the knowledge base's
};

}  // namespace tessel::tuning
