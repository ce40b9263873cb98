// The cost-model-guided searches over annotation decisions: a population of
// programs scored by the model, explored by Ansor's evolution or by
// AutoTVM-style simulated annealing, the best predicted never measured
// proposed, plus a few random ones. The model may be shared with the other
// tasks of a model.
#pragma once

#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "search/program_sampler.h"
#include "search/search_policy.h"

namespace tessel::search {

class GuidedSearch : public SearchPolicy {
 public:
  GuidedSearch(const task::SearchTask& task, const schedule::HardwareParams& hw, std::shared_ptr<cost::CostModel> model,
               uint64_t seed, EvolutionParams params);
  std::vector<Program> nextBatch(int n) override;
  void update(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results) override;
  ProposalInfo proposalInfo(const std::string& key) const override;
  void restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
               const std::vector<std::string>& decisions) override;
  void addCandidates(std::vector<Candidate> candidates, int first) override;
  cost::CostModel& model() { return *model_; }
  // Programs the model scored in the last nextBatch.
  size_t lastPredictions() const { return lastPredictions_; }

 protected:
  struct Individual {
    schedule::ProgramDecisions decisions;
    Program steps;
    std::string key;
    double score = 0;
  };
  // The size of the population a batch starts from.
  virtual int populationSize() const = 0;
  // Every program scored while exploring from `pop` (scored already).
  virtual std::vector<Individual> explore(std::vector<Individual> pop) = 0;

  bool rebuild(Individual& ind);  // materialise decisions into steps and key
  void score(std::vector<Individual>& pop);

  ProgramSampler sampler_;
  EvolutionParams params_;

 private:
  bool randomIndividual(Individual* out);
  // A warm start's candidates the model scores best, never proposed, into the batch.
  void takeScoredCandidates(std::vector<Program>& batch);

  std::shared_ptr<cost::CostModel> model_;
  SeenPrograms seen_;
  std::vector<Candidate> candidates_;  // not yet proposed
  int candidatesFirst_ = 0;            // how many of them the next batch takes
  struct Proposed {
    schedule::ProgramDecisions decisions;
    double score = std::numeric_limits<double>::quiet_NaN();
    bool known = true;        // false: a candidate without decisions (not evolved from)
    int64_t trainedOn = -1;   // programs the model had learned from when it scored this one (-1: not scored)
    bool pretrained = false;  // and whether it was loaded trained
  };
  // The candidates with decisions: every population starts from them.
  std::vector<Individual> seededCandidates_;
  std::map<std::string, Proposed> proposed_;  // key -> what was proposed, until measured
  // (seconds, decisions as JSON) of the valid measured programs, the best
  // population x measuredSeedShare of them: their text is a tenth of their
  // parsed steps, and a population rebuilds its seeds from it.
  std::vector<std::pair<double, std::string>> measured_;
  size_t lastPredictions_ = 0;
};

// Ansor's evolutionary search: roulette selection on the model's scores,
// mutation and crossover of decisions, over a few generations.
class EvolutionarySearch : public GuidedSearch {
 public:
  using GuidedSearch::GuidedSearch;
  std::string name() const override { return "evolutionary"; }

 private:
  int populationSize() const override { return params_.population; }
  std::vector<Individual> explore(std::vector<Individual> pop) override;
};

// AutoTVM-style simulated annealing: parallel chains of mutations, each
// accepted by the Metropolis rule as the temperature falls.
class AnnealingSearch : public GuidedSearch {
 public:
  using GuidedSearch::GuidedSearch;
  std::string name() const override { return "anneal"; }

 private:
  int populationSize() const override { return std::max(64, params_.population / 16); }
  std::vector<Individual> explore(std::vector<Individual> pop) override;
};

}  // namespace tessel::search
