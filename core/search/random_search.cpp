#include <stdexcept>

#include "search/search_policy.h"

namespace tessel::search {

RandomSearch::RandomSearch(const SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed)
    : hw_(hw), sketches_(schedule::generateSketches(task.dag, hw)), rng_(seed) {
  if (sketches_.empty()) throw std::runtime_error("no sketch for task " + task.key);
}

bool RandomSearch::sample(Program* out) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    const schedule::Sketch& sk = sketches_[std::uniform_int_distribution<size_t>(0, sketches_.size() - 1)(rng_)];
    try {
      *out = schedule::annotateSketch(sk, hw_, rng_);
      return true;
    } catch (const schedule::ScheduleError&) {
      ++rejected_;
    }
  }
  return false;
}

std::vector<Program> RandomSearch::nextBatch(int n) {
  std::vector<Program> batch;
  for (int misses = 0; int(batch.size()) < n && misses < 50 * n;) {
    Program p;
    if (!sample(&p)) break;
    if (!seen_.insert(schedule::serializeSteps(p)).second) {
      ++misses;
      continue;
    }
    batch.push_back(std::move(p));
  }
  return batch;
}

std::unique_ptr<SearchPolicy> makeSearchPolicy(const std::string& name, const SearchTask& task,
                                               const schedule::HardwareParams& hw, uint64_t seed) {
  if (name == "random") return std::make_unique<RandomSearch>(task, hw, seed);
  throw std::invalid_argument("unknown search '" + name + "' (available: random)");
}

}  // namespace tessel::search
