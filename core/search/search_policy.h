// Search policies propose the next batch of programs of a task and learn
// from the measured results.
#pragma once

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "measure/measure_types.h"
#include "schedule/sketch.h"
#include "search/search_task.h"

namespace tessel::search {

using Program = std::vector<schedule::Step>;

class SearchPolicy {
 public:
  virtual ~SearchPolicy() = default;
  virtual std::string name() const = 0;
  // Up to n programs never proposed before (fewer when the space runs dry).
  virtual std::vector<Program> nextBatch(int n) = 0;
  virtual void update(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results) = 0;
};

// Random programs: a random sketch, randomly annotated (Ansor's baseline).
class RandomSearch : public SearchPolicy {
 public:
  RandomSearch(const SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed);
  std::string name() const override { return "random"; }
  std::vector<Program> nextBatch(int n) override;
  void update(const std::vector<Program>&, const std::vector<measure::MeasureResult>&) override {}
  const std::vector<schedule::Sketch>& sketches() const { return sketches_; }
  // Invalid annotations seen (rejected before building), with their reasons.
  int rejected() const { return rejected_; }

 protected:
  // One random program, or nothing if annotation kept failing.
  bool sample(Program* out);

  schedule::HardwareParams hw_;
  std::vector<schedule::Sketch> sketches_;
  std::mt19937_64 rng_;
  std::set<std::string> seen_;
  int rejected_ = 0;
};

std::unique_ptr<SearchPolicy> makeSearchPolicy(const std::string& name, const SearchTask& task,
                                               const schedule::HardwareParams& hw, uint64_t seed);

}  // namespace tessel::search
