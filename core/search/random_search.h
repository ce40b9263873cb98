// Random programs: a random sketch, randomly annotated (Ansor's baseline).
#pragma once

#include "search/program_sampler.h"
#include "search/search_policy.h"

namespace tessel::search {

class RandomSearch : public SearchPolicy {
 public:
  RandomSearch(const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed);
  std::string name() const override { return "random"; }
  std::vector<Program> nextBatch(int n) override;
  void update(const std::vector<Program>&, const std::vector<measure::MeasureResult>&) override {}
  void restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
               const std::vector<std::string>& decisions) override;
  // In the order given, the exact ones first.
  void addCandidates(std::vector<Candidate> candidates, int first) override;

 private:
  ProgramSampler sampler_;
  SeenPrograms seen_;
  std::vector<Candidate> candidates_;  // not yet proposed
  int candidatesFirst_ = 0;            // how many of them the next batch takes
};

}  // namespace tessel::search
