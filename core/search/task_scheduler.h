// Ansor's task scheduler ("gradient"): shares a model's trials between its
// tasks so that the estimated end-to-end latency, sum of weight x best
// latency, falls fastest. Round-robin warm-up, then the task with the most
// negative estimated gradient (alpha = 0.2, beta = 2, backward window 3,
// similar tasks compared by throughput), early stopping of stalled tasks.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "search/tuner.h"

namespace tessel::search {

struct SchedulerParams {
  double alpha = 0.2;
  double beta = 2.0;
  int backwardWindow = 3;
  int earlyStoppingRounds = 8;  // a task that has not improved for this many rounds stops (0: never)
};

// The decisions alone, on reported results: testable without measuring.
class GradientTaskScheduler {
 public:
  // Per task: weight in the model, FLOPs, and a similarity tag (same tag =
  // same kind of subgraph, whose best throughput bounds the others').
  GradientTaskScheduler(std::vector<double> weights, std::vector<double> flops, std::vector<std::string> tags,
                        SchedulerParams params = {});
  // The task to tune next, or -1 when every task has stopped.
  int next();
  // After a round of `task`: its best latency so far (+inf without a valid program).
  void report(size_t task, double bestSeconds);
  // Takes a task out (its space is exhausted).
  void stop(size_t task);
  // Sum of weight x best latency (+inf while a task has no valid program).
  double objective() const;
  const std::vector<int>& rounds() const { return rounds_; }
  const std::vector<double>& best() const { return best_; }

 private:
  double gradient(size_t i) const;
  std::vector<double> weights_, flops_;
  std::vector<std::string> tags_;
  SchedulerParams p_;
  std::vector<int> rounds_, sinceImprovement_;
  std::vector<double> best_;
  std::vector<std::vector<double>> history_;  // best after each round
  std::vector<bool> stopped_;
};

struct ModelTask {
  task::SearchTask task;
  double weight = 1;
  std::string tag;  // similarity tag (e.g. the subgraph's op names)
};

struct ModelTuneOptions {
  int trials = 1000;  // for the whole model
  // A wall-clock budget (0: none): no round starts after it is spent, so the
  // tuning ends within one round of it. Under it, the tasks' warm-up rounds
  // are sized to the measuring speed so that every task gets one in about
  // half of the budget.
  double seconds = 0;
  // Every task's first round only (a warm start's transferred programs),
  // then the tuning ends.
  bool firstRoundOnly = false;
  TuneOptions perTask;  // batchSize, search, cost model, measurer...; trials are set per task
  SchedulerParams scheduler;
  // Per task, before its first round: lets the caller attach a store (fills
  // previous/known, onRecords) and callbacks.
  std::function<void(size_t task, TuneOptions&)> prepareTask;
  // Before each round: false stops the tuning there (a pause blocks inside
  // it). With perTask.cancel, a pause or stop can also abandon the round in
  // flight: keepGoing is then asked, and must clear the flag to go on.
  std::function<bool()> keepGoing;
  // After each round: task, its result so far, the estimated end-to-end seconds.
  std::function<void(size_t task, const TuneResult&, double estimate)> onRound;
  // When a task's search space is used up (the task takes no more rounds).
  std::function<void(size_t task, const TuneResult&)> onExhausted;
};

struct ModelTuneResult {
  std::vector<TuneResult> tasks;  // same order as the input
  std::vector<int> rounds;
  int trials = 0;
  bool stopped = false;         // keepGoing ended it before the budget
  bool timeUp = false;          // the wall-clock budget ended it
  double estimatedSeconds = 0;  // sum of weight x best latency
  int warmupBatch = 0;          // programs in each task's first round
  // (trials so far, seconds since start, estimate) after each round.
  struct Point {
    int trials;
    double seconds, estimate;
  };
  std::vector<Point> curve;
};

// Measures at most options.trials programs in all (a resumed session's
// included). Every task without records first gets a warm-up round of
// perTask.batchSize programs, or of trials / tasks when the budget is too small
// for full rounds; std::invalid_argument (budgetMessage) when it cannot give
// every such task one program.
ModelTuneResult tuneModel(const std::vector<ModelTask>& tasks, const ModelTuneOptions& options);

// Why `trials` cannot tune `freshTasks` tasks without records when `done`
// trials are recorded already, naming the numbers that would.
std::string budgetMessage(int trials, int done, int freshTasks, int batch);

}  // namespace tessel::search
