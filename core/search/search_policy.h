// Search policies propose the next batch of programs of a task and learn
// from the measured results.
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

// Random programs: a random sketch, randomly annotated (Ansor's baseline).
class RandomSearch : public SearchPolicy {
 public:
  RandomSearch(const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed);
  std::string name() const override { return "random"; }
  std::vector<Program> nextBatch(int n) override;
  void update(const std::vector<Program>&, const std::vector<measure::MeasureResult>&) override {}
  void restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
               const std::vector<std::string>& decisions) override;
  void addCandidates(std::vector<Candidate> candidates, int first) override;
  const std::vector<schedule::Sketch>& sketches() const { return sketches_; }
  // Invalid annotations seen (rejected before building), with their reasons.
  int rejected() const { return rejected_; }

 protected:
  // One random program (and its decisions), or nothing if annotation kept failing.
  bool sample(Program* out, schedule::ProgramDecisions* decisions = nullptr);

  // Rejects GPU programs over the shared-memory limit (throws ScheduleError).
  void checkGpuLimits(const Program& p) const;

  // The candidates not yet proposed, and how many the next batch takes.
  std::vector<Candidate> candidates_;
  int candidatesFirst_ = 0;
  // Takes up to candidatesFirst_ of candidates_, in order, into `batch`
  // (those never proposed), then none again.
  void takeCandidates(std::vector<Program>& batch);

  const task::SearchTask& task_;
  schedule::HardwareParams hw_;
  std::vector<schedule::Sketch> sketches_;
  std::mt19937_64 rng_;
  SeenPrograms seen_;
  int rejected_ = 0;
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

// Cost-model-guided search over annotation decisions: "evolutionary"
// (Ansor) or "anneal" (AutoTVM-style simulated annealing).
class ModelGuidedSearch : public RandomSearch {
 public:
  ModelGuidedSearch(const task::SearchTask& task, const schedule::HardwareParams& hw,
                    std::shared_ptr<cost::CostModel> model, uint64_t seed, bool anneal, EvolutionParams params = {});
  std::string name() const override { return anneal_ ? "anneal" : "evolutionary"; }
  std::vector<Program> nextBatch(int n) override;
  void update(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results) override;
  ProposalInfo proposalInfo(const std::string& key) const override;
  void restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
               const std::vector<std::string>& decisions) override;
  void addCandidates(std::vector<Candidate> candidates, int first) override;
  cost::CostModel& model() { return *model_; }
  // Seconds spent in the last nextBatch (features, prediction, evolution).
  double lastSearchSeconds() const { return lastSearchSeconds_; }
  size_t lastPredictions() const { return lastPredictions_; }

 private:
  struct Individual {
    schedule::ProgramDecisions decisions;
    Program steps;
    std::string key;
    double score = 0;
  };
  bool randomIndividual(Individual* out);
  bool rebuild(Individual& ind);  // materialise decisions into steps and key
  void score(std::vector<Individual>& pop);
  // The candidates the model scores best, never proposed, into the batch.
  void takeScoredCandidates(std::vector<Program>& batch);
  std::vector<Individual> evolve(std::vector<Individual> pop);
  std::vector<Individual> anneal(std::vector<Individual> pop);

  std::shared_ptr<cost::CostModel> model_;  // may be shared with the other tasks of a model
  bool anneal_;
  EvolutionParams params_;
  struct Proposed {
    schedule::ProgramDecisions decisions;
    double score = std::numeric_limits<double>::quiet_NaN();
    bool known = true;  // false: a candidate without decisions (not evolved from)
  };
  // The candidates with decisions: every population starts from them.
  std::vector<Individual> seededCandidates_;
  std::map<std::string, Proposed> proposed_;  // key -> what was proposed, until measured
  // (seconds, decisions as JSON) of the valid measured programs, the best
  // population x measuredSeedShare of them: their text is a tenth of their
  // parsed steps, and a population rebuilds its seeds from it.
  std::vector<std::pair<double, std::string>> measured_;
  double lastSearchSeconds_ = 0;
  size_t lastPredictions_ = 0;
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
