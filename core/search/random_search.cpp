#include "search/random_search.h"

#include <algorithm>

namespace tessel::search {

RandomSearch::RandomSearch(const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed)
    : sampler_(task, hw, seed) {}

void RandomSearch::addCandidates(std::vector<Candidate> candidates, int first) {
  candidates_ = std::move(candidates);
  candidatesFirst_ = first;
}

std::vector<Program> RandomSearch::nextBatch(int n) {
  std::vector<Program> batch;
  // A warm start's first round: up to candidatesFirst_ of its candidates never
  // proposed, then none again.
  candidatesFirst_ = std::min(candidatesFirst_, n);
  std::stable_partition(candidates_.begin(), candidates_.end(), [](const Candidate& c) { return c.exact; });
  for (const Candidate& c : candidates_)
    if (int(batch.size()) < candidatesFirst_ && seen_.insert(schedule::serializeSteps(c.steps)))
      batch.push_back(c.steps);
  candidates_.clear();
  candidatesFirst_ = 0;
  for (int misses = 0; int(batch.size()) < n && misses < 50 * n;) {
    Program p;
    if (!sampler_.sample(&p)) break;
    if (!seen_.insert(schedule::serializeSteps(p))) {
      ++misses;
      continue;
    }
    batch.push_back(std::move(p));
  }
  return batch;
}

void RandomSearch::restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>&,
                           const std::vector<std::string>&) {
  for (const Program& p : programs)
    seen_.insert(schedule::serializeSteps(p));
}

void SearchPolicy::restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
                           const std::vector<std::string>& /*decisions*/) {
  update(programs, results);
}

}  // namespace tessel::search
