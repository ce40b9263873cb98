#include "search/task_scheduler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>

namespace tessel::search {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

std::string budgetMessage(int trials, int done, int freshTasks, int batch) {
  return std::to_string(trials) + " trials cannot give each of the " + std::to_string(freshTasks) +
         " tasks not yet tuned one program" + (done ? " (" + std::to_string(done) + " are done already)" : "") +
         ": give --trials of at least " + std::to_string(done + freshTasks) + " (" +
         std::to_string(done + freshTasks * batch) + " gives each a full warm-up round of " + std::to_string(batch) +
         ")";
}

GradientTaskScheduler::GradientTaskScheduler(std::vector<double> weights, std::vector<double> flops,
                                             std::vector<std::string> tags, SchedulerParams params)
    : weights_(std::move(weights)), flops_(std::move(flops)), tags_(std::move(tags)), p_(params) {
  const size_t n = weights_.size();
  if (flops_.size() != n || tags_.size() != n) throw std::invalid_argument("task scheduler: sizes differ");
  rounds_.assign(n, 0);
  sinceImprovement_.assign(n, 0);
  best_.assign(n, kInf);
  history_.assign(n, {});
  stopped_.assign(n, false);
}

void GradientTaskScheduler::report(size_t i, double bestSeconds) {
  ++rounds_[i];
  if (bestSeconds < best_[i])
    sinceImprovement_[i] = 0;
  else
    ++sinceImprovement_[i];
  best_[i] = std::min(best_[i], bestSeconds);
  history_[i].push_back(best_[i]);
  if (p_.earlyStoppingRounds > 0 && sinceImprovement_[i] >= p_.earlyStoppingRounds && std::isfinite(best_[i]))
    stopped_[i] = true;
}

void GradientTaskScheduler::stop(size_t i) {
  stopped_[i] = true;
}

double GradientTaskScheduler::objective() const {
  double f = 0;
  for (size_t i = 0; i < best_.size(); ++i)
    f += weights_[i] * best_[i];
  return f;
}

double GradientTaskScheduler::gradient(size_t i) const {
  const double g = best_[i];
  const auto& h = history_[i];
  // Backward: the recent slope of this task's best latency.
  double backward = 0;
  const size_t w = size_t(std::max(1, p_.backwardWindow));
  if (h.size() > w) backward = (h.back() - h[h.size() - 1 - w]) / double(w);
  // Forward: optimistic next gains, bounded by what similar tasks reach.
  double next1 = g - g / double(std::max(1, rounds_[i]));
  double bestThroughput = 0;
  for (size_t k = 0; k < best_.size(); ++k)
    if (tags_[k] == tags_[i] && std::isfinite(best_[k]) && best_[k] > 0)
      bestThroughput = std::max(bestThroughput, flops_[k] / best_[k]);
  double next2 = bestThroughput > 0 ? p_.beta * flops_[i] / bestThroughput : next1;
  double forward = std::min(next1, next2) - g;
  return weights_[i] * (p_.alpha * backward + (1 - p_.alpha) * forward);
}

int GradientTaskScheduler::next() {
  const size_t n = best_.size();
  // Warm-up: every task once, in order; then tasks still without a valid program.
  for (size_t i = 0; i < n; ++i)
    if (!stopped_[i] && rounds_[i] == 0) return int(i);
  for (size_t i = 0; i < n; ++i)
    if (!stopped_[i] && !std::isfinite(best_[i])) return int(i);
  int chosen = -1;
  double most = 0;
  for (size_t i = 0; i < n; ++i) {
    if (stopped_[i]) continue;
    double grad = gradient(i);
    // Ties (e.g. all flat) go to the task tuned least.
    if (chosen < 0 || grad < most || (grad == most && rounds_[i] < rounds_[size_t(chosen)])) {
      chosen = int(i);
      most = grad;
    }
  }
  return chosen;
}

ModelTuneResult tuneModel(const std::vector<ModelTask>& tasks, const ModelTuneOptions& o) {
  auto start = std::chrono::steady_clock::now();
  std::vector<double> weights, flops;
  std::vector<std::string> tags;
  for (const ModelTask& t : tasks) {
    weights.push_back(t.weight);
    flops.push_back(t.task.flops);
    tags.push_back(t.tag);
  }
  GradientTaskScheduler scheduler(weights, flops, tags, o.scheduler);
  std::vector<std::unique_ptr<TaskTuner>> tuners(tasks.size());
  ModelTuneResult result;
  result.tasks.resize(tasks.size());
  // Every task's options first: a resumed session's earlier trials count
  // towards the budget, and a task tuned before needs no warm-up round.
  std::vector<TuneOptions> prepared(tasks.size(), o.perTask);
  std::vector<char> resumed(tasks.size(), 0);  // the task has records of the resumed session
  int trials = 0;
  for (size_t i = 0; i < tasks.size(); ++i) {
    prepared[i].trials = std::numeric_limits<int>::max() / 2;  // the scheduler decides when a task stops
    // The records are stored as they come (onRecords) and never read back
    // from the result: a long tuning need not hold them all.
    prepared[i].keepRecords = false;
    if (o.prepareTask) o.prepareTask(i, prepared[i]);
    if (prepared[i].previous.empty()) continue;
    resumed[i] = 1;
    double best = kInf;
    for (const TuneRecord& r : prepared[i].previous)
      if (r.result.ok()) best = std::min(best, r.result.medianCost());
    trials += int(prepared[i].previous.size());
    scheduler.report(i, best);
    result.tasks[i].trials = int(prepared[i].previous.size());
    result.tasks[i].bestSeconds = std::isfinite(best) ? best : 0;
  }
  // Every task without records needs a warm-up round before the estimate is
  // defined; when the budget cannot give each a full batch, the warm-up
  // rounds shrink to what it can give.
  const int fresh =
      int(std::count_if(prepared.begin(), prepared.end(), [](const TuneOptions& t) { return t.previous.empty(); }));
  // (Nothing left to do is not an error: the records stand as they are.)
  if (fresh > 0 && trials < o.trials && o.trials - trials < fresh)
    throw std::invalid_argument(budgetMessage(o.trials, trials, fresh, o.perTask.batchSize));
  const int warmupBatch = fresh > 0 ? std::min(o.perTask.batchSize, (o.trials - trials) / fresh) : 0;
  result.warmupBatch = warmupBatch;
  // A copy of the options: a cancellation may interrupt the constructor
  // (the reference build), and the task must still be startable afterwards.
  auto tunerOf = [&](size_t i) -> TaskTuner& {
    if (!tuners[i]) {
      tuners[i] = std::make_unique<TaskTuner>(tasks[i].task, prepared[i]);
      prepared[i].previous = {};  // the tuner has learned from them
      prepared[i].known = {};
    }
    return *tuners[i];
  };
  const support::CancelFlag& cancel = o.perTask.cancel;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int freshLeft = fresh, measuredHere = 0;
  double measuringSeconds = 0;
  while (trials < o.trials) {
    if (o.keepGoing && !o.keepGoing()) {
      result.stopped = true;
      break;
    }
    if (o.seconds > 0 && elapsed() >= o.seconds) {
      result.timeUp = true;
      break;
    }
    int i = scheduler.next();
    if (i < 0) break;
    const bool warmup = !resumed[size_t(i)] && scheduler.rounds()[size_t(i)] == 0;
    if (o.firstRoundOnly && !warmup) break;
    int measured = 0, before = 0;
    const double roundStart = elapsed();
    try {
      TaskTuner& tuner = tunerOf(size_t(i));
      before = tuner.result().trials;
      // Never past the budget; a task's first round is its warm-up.
      int cap = o.trials - trials;
      if (warmup) cap = std::min(cap, warmupBatch);
      // Under a time budget, warm-up rounds the speed so far fits into half
      // of what is left (a quarter round for the first).
      if (warmup && o.seconds > 0) {
        const double perProgram = measuredHere ? measuringSeconds / measuredHere : 0;
        const int fits = perProgram > 0 ? int(0.5 * (o.seconds - roundStart) / (freshLeft * perProgram))
                                        : std::max(1, warmupBatch / 4);
        cap = std::min(cap, std::max(1, fits));
      }
      measured = tuner.runRound(cap);
    } catch (const std::exception&) {
      if (!support::isCancelled(cancel)) throw;
    }
    if (support::isCancelled(cancel)) {
      // The round was abandoned. A pause: keepGoing blocks, clears the flag
      // and says go on; the round is then tuned again. A stop ends here. (A
      // pause that lands right after keepGoing said go on is not a stop: the
      // keepGoing at the top of the loop sees it.)
      if (o.keepGoing && o.keepGoing()) continue;
      result.stopped = true;
      break;
    }
    TaskTuner& tuner = *tuners[size_t(i)];
    const TuneResult& r = tuner.result();
    if (warmup) --freshLeft;
    measuredHere += measured;
    measuringSeconds += elapsed() - roundStart;
    if (measured > 0) {
      trials += r.trials - before;
      scheduler.report(size_t(i), r.validTrials ? r.bestSeconds : kInf);
      double estimate = scheduler.objective();
      result.curve.push_back(
          {trials, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), estimate});
      if (o.onRound) o.onRound(size_t(i), r, estimate);
    }
    // A round that measured nothing, or the round that used up the space
    // (it came back short), is the task's last.
    if (measured == 0 || tuner.exhausted()) {
      scheduler.stop(size_t(i));
      if (tuner.exhausted() && o.onExhausted) o.onExhausted(size_t(i), r);
    }
  }
  // Tasks never scheduled this time still report what their records hold
  // (not after a cancellation, which must not build their references).
  for (size_t i = 0; i < tasks.size() && !support::isCancelled(cancel); ++i)
    if (!tuners[i] && resumed[i]) tunerOf(i);
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tuners[i]) result.tasks[i] = tuners[i]->finish();
  result.rounds = scheduler.rounds();
  result.trials = trials;
  result.estimatedSeconds = scheduler.objective();
  return result;
}

}  // namespace tessel::search
