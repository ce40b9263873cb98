#include "search/tuner.h"

#include <chrono>
#include <limits>

namespace tessel::search {

TuneResult tuneTask(const SearchTask& task, const TuneOptions& o) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<SearchPolicy> policy = makeSearchPolicy(o.search, task, o.hardware, o.seed, o.costModel, o.evolution);
  auto* guided = dynamic_cast<ModelGuidedSearch*>(policy.get());
  measure::ProgramMeasurer measurer(task, o.measurer);
  TuneResult r;
  double best = std::numeric_limits<double>::infinity();

  // Stored records: learned from and never measured again; the resumed
  // session's also count as trials.
  for (const std::vector<TuneRecord>* stored : {&o.known, &o.previous}) {
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
      if (stored == &o.previous) {
        r.records.push_back(rec);
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

  while (r.trials < o.trials) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Program> batch = policy->nextBatch(std::min(o.batchSize, o.trials - r.trials));
    r.searchSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (guided) r.predictions += guided->lastPredictions();
    if (batch.empty()) break;  // the space is exhausted
    std::vector<measure::ProgramResult> res = measurer.measure(batch);
    std::vector<measure::MeasureResult> plain;
    std::vector<TuneRecord> fresh;
    for (size_t i = 0; i < batch.size(); ++i) {
      const measure::MeasureResult& m = res[i].result;
      plain.push_back(m);
      TuneRecord rec;
      rec.steps = schedule::serializeSteps(batch[i]);
      rec.result = m;
      SearchPolicy::ProposalInfo info = policy->proposalInfo(rec.steps);
      rec.decisions = std::move(info.decisions);
      rec.predicted = info.predicted;
      rec.costModel = std::move(info.costModel);
      fresh.push_back(rec);
      r.records.push_back(std::move(rec));
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
    if (o.onRecords) o.onRecords(fresh);
    policy->update(batch, plain);
    if (o.onBatch) o.onBatch(r.trials, r.validTrials ? best : 0);
  }
  r.bestSeconds = r.validTrials ? best : 0;
  if (guided) {
    r.costModelName = guided->model().name();
    r.costModelBlob = guided->model().save();
    r.costModelTrainedOn = guided->model().trainedOn();
  }
  // The best may be from the resumed session's earlier records.
  if (r.bestSource.empty() && !r.bestSteps.empty())
    r.bestSource = measure::programSource(task.dag, r.bestSteps, "tessel_b0_0");
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace tessel::search
