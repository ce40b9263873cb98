#include <algorithm>
#include <stdexcept>

#include "lower/loop_nest.h"
#include "search/search_policy.h"

namespace tessel::search {

RandomSearch::RandomSearch(const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed)
    : task_(task), hw_(hw), sketches_(schedule::generateSketches(task.dag, hw)), rng_(seed) {
  if (sketches_.empty()) throw std::runtime_error("no sketch for task " + task.key);
}

void RandomSearch::checkGpuLimits(const Program& p) const {
  int64_t shared = lower::sharedMemoryBytes(lower::lowerState(schedule::replay(task_.dag, p)));
  if (shared > hw_.maxSharedMemoryBytes)
    throw schedule::ScheduleError("uses " + std::to_string(shared) + " bytes of shared memory (limit " +
                                  std::to_string(hw_.maxSharedMemoryBytes) + ")");
}

bool RandomSearch::sample(Program* out, schedule::ProgramDecisions* decisions) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    size_t which = std::uniform_int_distribution<size_t>(0, sketches_.size() - 1)(rng_);
    try {
      *out = schedule::annotateSketch(sketches_[which], hw_, rng_, decisions);
      if (hw_.target == "cuda") checkGpuLimits(*out);
      if (decisions) decisions->sketch = which;
      return true;
    } catch (const schedule::ScheduleError&) {
      ++rejected_;
    }
  }
  return false;
}

void RandomSearch::addCandidates(std::vector<Candidate> candidates, int first) {
  candidates_ = std::move(candidates);
  candidatesFirst_ = first;
}

void RandomSearch::takeCandidates(std::vector<Program>& batch) {
  std::stable_partition(candidates_.begin(), candidates_.end(), [](const Candidate& c) { return c.exact; });
  for (const Candidate& c : candidates_)
    if (int(batch.size()) < candidatesFirst_ && seen_.insert(schedule::serializeSteps(c.steps)))
      batch.push_back(c.steps);
  candidates_.clear();
  candidatesFirst_ = 0;
}

std::vector<Program> RandomSearch::nextBatch(int n) {
  std::vector<Program> batch;
  candidatesFirst_ = std::min(candidatesFirst_, n);
  takeCandidates(batch);
  for (int misses = 0; int(batch.size()) < n && misses < 50 * n;) {
    Program p;
    if (!sample(&p)) break;
    if (!seen_.insert(schedule::serializeSteps(p))) {
      ++misses;
      continue;
    }
    batch.push_back(std::move(p));
  }
  return batch;
}

void SearchPolicy::restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
                           const std::vector<std::string>& /*decisions*/) {
  update(programs, results);
}

void RandomSearch::restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>&,
                           const std::vector<std::string>&) {
  for (const Program& p : programs)
    seen_.insert(schedule::serializeSteps(p));
}

}  // namespace tessel::search
