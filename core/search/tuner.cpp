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
  while (r.trials < o.trials) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Program> batch = policy->nextBatch(std::min(o.batchSize, o.trials - r.trials));
    r.searchSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (guided) r.predictions += guided->lastPredictions();
    if (batch.empty()) break;  // the space is exhausted
    std::vector<measure::ProgramResult> res = measurer.measure(batch);
    std::vector<measure::MeasureResult> plain;
    for (size_t i = 0; i < batch.size(); ++i) {
      const measure::MeasureResult& m = res[i].result;
      plain.push_back(m);
      r.records.push_back({schedule::serializeSteps(batch[i]), m});
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
    policy->update(batch, plain);
    if (o.onBatch) o.onBatch(r.trials, r.validTrials ? best : 0);
  }
  r.bestSeconds = r.validTrials ? best : 0;
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace tessel::search
