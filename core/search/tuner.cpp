#include "search/tuner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

#include "search/guided_search.h"
#include "support/release_memory.h"
#include "target/target.h"

namespace tessel::search {

struct TaskTuner::State {
  std::unique_ptr<SearchPolicy> policy;
  GuidedSearch* guided = nullptr;
  std::unique_ptr<measure::Measurer> measurer;
  double best = std::numeric_limits<double>::infinity();
  bool exhausted = false;
};

TuneOptions tuneOptionsFor(const target::Target& target) {
  TuneOptions o;
  o.hardware = schedule::hardwareParams(target);
  o.measurer = measure::measurerOptionsFor(target);
  return o;
}

namespace {

// Kernels built or run other than the task's target says would be recorded
// under its target all the same.
void checkTarget(const task::SearchTask& task, const TuneOptions& o) {
  const target::Target& t = task.target;
  if (o.hardware.target != t || o.measurer.build.flags != codegen::withoutWarnings(codegen::kernelCompilerFlags(t)) ||
      o.measurer.run.threads != t.threads)
    throw std::invalid_argument("the tuning options are not those of the task's target '" + t.str() +
                                "' (start from search::tuneOptionsFor)");
}

}  // namespace

TaskTuner::TaskTuner(const task::SearchTask& task, TuneOptions options)
    : task_(task), o_(std::move(options)), s_(new State) {
  checkTarget(task_, o_);
  start_ = std::chrono::steady_clock::now();
  if (o_.cancel) o_.evolution.cancel = o_.measurer.run.cancel = o_.measurer.build.cancel = o_.cancel;
  s_->policy = o_.sharedCostModel
                   ? makeSearchPolicy(o_.search, task_, o_.hardware, o_.seed, o_.sharedCostModel, o_.evolution)
                   : makeSearchPolicy(o_.search, task_, o_.hardware, o_.seed, o_.costModel, o_.evolution);
  s_->guided = dynamic_cast<GuidedSearch*>(s_->policy.get());
  s_->measurer = o_.makeMeasurer ? o_.makeMeasurer(task_, o_.measurer)
                                 : std::make_unique<measure::ProgramMeasurer>(task_, o_.measurer);
  TuneResult& r = r_;
  double& best = s_->best;
  auto& policy = s_->policy;

  // Stored records: learned from and never measured again; the resumed
  // session's also count as trials.
  for (const std::vector<TuneRecord>* stored : {&o_.known, &o_.previous}) {
    std::vector<Program> programs;
    std::vector<measure::MeasureResult> results;
    std::vector<std::string> decisions;
    for (const TuneRecord& rec : *stored) {
      Program p;
      try {
        p = schedule::deserializeSteps(rec.steps);
      } catch (const schedule::ScheduleError&) {
        continue;  // from an older definition of the steps: skip it
      }
      if (stored == &o_.previous) {
        if (o_.keepRecords) r.records.push_back(rec);
        ++r.trials;
        if (rec.result.ok()) {
          ++r.validTrials;
          if (rec.result.medianCost() < best) best = rec.result.medianCost(), r.bestSteps = p;
        }
        if (r.validTrials) r.curve.push_back({r.trials, best});
      }
      programs.push_back(std::move(p));
      results.push_back(rec.result);
      decisions.push_back(rec.decisions);
    }
    if (!programs.empty()) policy->restore(programs, results, decisions);
  }
  o_.previous = {};  // learned from: not needed again
  o_.known = {};
  // After the stored records: a candidate measured before is not measured again.
  if (!o_.transferred.empty()) policy->addCandidates(std::move(o_.transferred), o_.transferFirst);
  o_.transferred = {};
}

TaskTuner::~TaskTuner() = default;

bool TaskTuner::done() const {
  return r_.trials >= o_.trials || s_->exhausted;
}

bool TaskTuner::exhausted() const {
  return s_->exhausted;
}

int TaskTuner::runRound() {
  return runRound(std::numeric_limits<int>::max());
}

int TaskTuner::runRound(int maxPrograms) {
  if (done() || maxPrograms < 1) return 0;
  TuneResult& r = r_;
  double& best = s_->best;
  auto t0 = std::chrono::steady_clock::now();
  const int wanted = std::min({o_.batchSize, o_.trials - r.trials, maxPrograms});
  std::vector<Program> batch = s_->policy->nextBatch(wanted);
  r.searchSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (s_->guided) r.predictions += s_->guided->lastPredictions();
  if (support::isCancelled(o_.cancel)) return 0;
  // A short batch means the policy drew 50 programs per missing one and had
  // proposed them all before: the space is used up with this batch (a task
  // of two programs says so after its first round, not never).
  if (int(batch.size()) < wanted) s_->exhausted = r.exhausted = true;
  if (batch.empty()) return 0;
  std::vector<measure::ProgramResult> res = s_->measurer->measure(batch);
  // A cancelled batch was cut short: its errors say nothing of its programs.
  if (support::isCancelled(o_.cancel)) return 0;
  std::vector<measure::MeasureResult> plain;
  std::vector<TuneRecord> fresh;
  for (size_t i = 0; i < batch.size(); ++i) {
    const measure::MeasureResult& m = res[i].result;
    plain.push_back(m);
    TuneRecord rec;
    rec.steps = schedule::serializeSteps(batch[i]);
    rec.result = m;
    SearchPolicy::ProposalInfo info = s_->policy->proposalInfo(rec.steps);
    rec.decisions = std::move(info.decisions);
    rec.predicted = info.predicted;
    rec.costModel = std::move(info.costModel);
    rec.modelTrainedOn = info.modelTrainedOn;
    rec.modelPretrained = info.modelPretrained;
    if (o_.keepRecords) r.records.push_back(rec);
    fresh.push_back(std::move(rec));
    ++r.trials;
    if (m.ok()) {
      ++r.validTrials;
      if (m.medianCost() < best) {
        best = m.medianCost();
        r.bestSteps = batch[i];
        r.bestSource = res[i].source;
      }
    }
    if (r.validTrials) r.curve.push_back({r.trials, best});
  }
  if (o_.onRecords) o_.onRecords(fresh);
  s_->policy->update(batch, plain);
  r.bestSeconds = r.validTrials ? best : 0;
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (o_.onBatch) o_.onBatch(r.trials, r.validTrials ? best : 0);
  support::releaseFreeMemory();  // what the round's search and training freed
  return int(batch.size());
}

const TuneResult& TaskTuner::finish() {
  TuneResult& r = r_;
  r.bestSeconds = r.validTrials ? s_->best : 0;
  // The best may be from the resumed session's earlier records.
  if (r.bestSource.empty() && !r.bestSteps.empty()) r.bestSource = s_->measurer->source(r.bestSteps);
  if (s_->guided) {
    r.costModelName = s_->guided->model().name();
    // A shared model is saved once, by whoever shares it.
    if (!o_.sharedCostModel) r.costModelBlob = s_->guided->model().save();
    r.costModelTrainedOn = s_->guided->model().trainedOn();
  }
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return r;
}

TuneResult tuneTask(const task::SearchTask& task, const TuneOptions& o) {
  TaskTuner tuner(task, o);
  while (!tuner.done())
    if (tuner.runRound() == 0) break;
  return tuner.finish();
}

}  // namespace tessel::search
