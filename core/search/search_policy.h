// Search policies propose the next batch of programs of a task and learn
// from the measured results: random (search/random_search.h), and the
// cost-model-guided evolutionary and annealing searches
// (search/guided_search.h), each behind this one interface.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "cost/cost_model.h"
#include "measure/measure_types.h"
#include "schedule/sketch.h"
#include "support/cancellation.h"
#include "task/search_task.h"

namespace tessel::search {

using Program = std::vector<schedule::Step>;

// The programs a policy has proposed or restored, by a 64-bit hash of their
// steps' JSON: a tuning of tens of thousands of trials keeps a few bytes per
// program instead of its text (about half a kilobyte). Two programs sharing a
// hash (odds about n^2 / 2^65) only means one of them is never proposed.
class SeenPrograms {
 public:
  bool insert(const std::string& key) { return hashes_.insert(std::hash<std::string>{}(key)).second; }
  bool contains(const std::string& key) const { return hashes_.count(std::hash<std::string>{}(key)) > 0; }
  size_t size() const { return hashes_.size(); }

 private:
  std::unordered_set<size_t> hashes_;
};

class SearchPolicy {
 public:
  virtual ~SearchPolicy() = default;
  virtual std::string name() const = 0;
  // Up to n programs never proposed before (fewer when the space runs dry).
  virtual std::vector<Program> nextBatch(int n) = 0;
  virtual void update(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results) = 0;

  // What the policy knows of a program it proposed, until update() sees it.
  struct ProposalInfo {
    std::string decisions;  // serialised; empty if unknown
    double predicted = std::numeric_limits<double>::quiet_NaN();
    std::string costModel;  // the model that predicted it
    // Measured programs that model had learned from when it scored this one
    // (-1: not scored), and whether it was loaded trained (cost_model.h):
    // neither, its score came from an untrained model.
    int64_t modelTrainedOn = -1;
    bool modelPretrained = false;
  };
  virtual ProposalInfo proposalInfo(const std::string& /*key*/) const { return {}; }
  // Programs measured before (a resumed or an earlier session): they are
  // never proposed again, and a guided policy learns from them and evolves
  // from the valid ones whose decisions are known (may be empty).
  virtual void restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
                       const std::vector<std::string>& decisions);

  // A program to try early (a warm start's transferred programs), with its
  // decisions on one of the task's sketches where they are known.
  struct Candidate {
    Program steps;
    std::optional<schedule::ProgramDecisions> decisions;
    bool exact = false;  // measured on this very task before (elsewhere): taken first, in order
  };
  // The next batch measures up to `first` of the candidates never proposed:
  // the exact ones first, in order, then those the guided search's model
  // scores best (the random search: in order). The guided search also
  // starts every population from the candidates with decisions, so that
  // evolution builds on them.
  virtual void addCandidates(std::vector<Candidate> candidates, int first) = 0;
};

// Parameters of the evolutionary search (Ansor's defaults).
struct EvolutionParams {
  int population = 2048;
  int generations = 4;
  double mutationProbability = 0.85;
  double crossoverProbability = 0.05;  // of the non-mutated children
  double epsGreedy = 0.05;             // share of each batch that is random
  double measuredSeedShare = 0.2;      // of the population, from the best measured
  support::CancelFlag cancel;          // set: the search ends early (its batch is then discarded)
};

// By name (search/search_registry.h lists them), with a cost model by name.
std::unique_ptr<SearchPolicy> makeSearchPolicy(const std::string& name, const task::SearchTask& task,
                                               const schedule::HardwareParams& hw, uint64_t seed,
                                               const std::string& costModel = "random", EvolutionParams params = {});
// The same with a model made already (one model shared by a model's tasks).
std::unique_ptr<SearchPolicy> makeSearchPolicy(const std::string& name, const task::SearchTask& task,
                                               const schedule::HardwareParams& hw, uint64_t seed,
                                               std::shared_ptr<cost::CostModel> model, EvolutionParams params = {});

}  // namespace tessel::search
