#include "search/guided_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessel::search {

GuidedSearch::GuidedSearch(const task::SearchTask& task, const schedule::HardwareParams& hw,
                           std::shared_ptr<cost::CostModel> model, uint64_t seed, EvolutionParams params)
    : sampler_(task, hw, seed), params_(params), model_(std::move(model)) {}

bool GuidedSearch::randomIndividual(Individual* out) {
  if (!sampler_.sample(&out->steps, &out->decisions)) return false;
  out->key = schedule::serializeSteps(out->steps);
  return true;
}

bool GuidedSearch::rebuild(Individual& ind) {
  if (!sampler_.materialize(ind.decisions, &ind.steps)) return false;
  ind.key = schedule::serializeSteps(ind.steps);
  return true;
}

void GuidedSearch::score(std::vector<Individual>& pop) {
  std::vector<Program> programs;
  programs.reserve(pop.size());
  for (const Individual& ind : pop)
    programs.push_back(ind.steps);
  std::vector<double> s = model_->predict(sampler_.task(), programs);
  for (size_t i = 0; i < pop.size(); ++i)
    pop[i].score = s[i] <= cost::kInvalidScore ? -std::numeric_limits<double>::infinity() : s[i];
  lastPredictions_ += pop.size();
}

void GuidedSearch::addCandidates(std::vector<Candidate> candidates, int first) {
  for (const Candidate& c : candidates)
    if (c.decisions && c.decisions->sketch < sampler_.sketchCount()) {
      Individual ind;
      ind.decisions = *c.decisions;
      ind.steps = c.steps;
      ind.key = schedule::serializeSteps(c.steps);
      seededCandidates_.push_back(std::move(ind));
    }
  candidates_ = std::move(candidates);
  candidatesFirst_ = first;
}

void GuidedSearch::takeScoredCandidates(std::vector<Program>& batch) {
  std::vector<Individual> pool;
  std::vector<char> known, exact;
  for (const Candidate& c : candidates_) {
    Individual ind;
    ind.steps = c.steps;
    ind.key = schedule::serializeSteps(c.steps);
    if (seen_.contains(ind.key)) continue;
    if (c.decisions) ind.decisions = *c.decisions;
    known.push_back(c.decisions.has_value());
    exact.push_back(c.exact);
    pool.push_back(std::move(ind));
  }
  candidates_.clear();
  const int first = candidatesFirst_;
  candidatesFirst_ = 0;
  if (pool.empty()) return;
  score(pool);
  // Exact matches first (their stored order), then the best score; equal
  // scores (an untrained model) keep the order given.
  std::vector<size_t> order(pool.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (exact[a] != exact[b]) return exact[a] > exact[b];
    return !exact[a] && pool[a].score > pool[b].score;
  });
  for (size_t i : order) {
    if (int(batch.size()) >= first) break;
    if (!seen_.insert(pool[i].key)) continue;
    const double predicted = std::isfinite(pool[i].score) ? pool[i].score : std::numeric_limits<double>::quiet_NaN();
    proposed_[pool[i].key] = {pool[i].decisions, predicted, known[i] != 0, int64_t(model_->trainedOn()),
                              model_->pretrained()};
    batch.push_back(pool[i].steps);
  }
}

std::vector<Program> GuidedSearch::nextBatch(int n) {
  lastPredictions_ = 0;
  std::vector<Program> batch;
  // A warm start's first round: its candidates, as the model ranks them.
  candidatesFirst_ = std::min(candidatesFirst_, n);
  if (candidatesFirst_ > 0) takeScoredCandidates(batch);
  const int want = n - int(batch.size());
  if (want <= 0) return batch;
  // Initial population: the best measured programs, a warm start's
  // candidates, then random ones.
  std::vector<Individual> pop;
  std::sort(measured_.begin(), measured_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t seeds = std::min(measured_.size(), size_t(params_.population * params_.measuredSeedShare));
  for (size_t i = 0; i < seeds; ++i) {
    Individual ind;
    ind.decisions = schedule::deserializeDecisions(measured_[i].second);
    if (rebuild(ind)) pop.push_back(std::move(ind));  // the program it was (materialize is exact)
  }
  pop.insert(pop.end(), seededCandidates_.begin(), seededCandidates_.end());
  const int size = populationSize();
  for (int misses = 0; int(pop.size()) < size && misses < size;) {
    if (pop.size() % 64 == 0 && support::isCancelled(params_.cancel)) return {};
    Individual ind;
    if (!randomIndividual(&ind)) break;
    if (seen_.contains(ind.key)) {
      ++misses;
      continue;
    }
    pop.push_back(std::move(ind));
  }
  if (pop.empty()) return batch;
  score(pop);
  std::vector<Individual> all = explore(std::move(pop));

  // The best predicted programs never measured, plus a few random ones.
  std::sort(all.begin(), all.end(), [](const Individual& a, const Individual& b) { return a.score > b.score; });
  int randomCount = int(std::lround(want * params_.epsGreedy));
  for (const Individual& ind : all) {
    if (int(batch.size()) >= n - randomCount) break;
    if (!std::isfinite(ind.score) || !seen_.insert(ind.key)) continue;
    proposed_[ind.key] = {ind.decisions, ind.score, true, int64_t(model_->trainedOn()), model_->pretrained()};
    batch.push_back(ind.steps);
  }
  for (int misses = 0; int(batch.size()) < n && misses < 50 * n;) {
    Individual ind;
    if (!randomIndividual(&ind)) break;
    if (!seen_.insert(ind.key)) {
      ++misses;
      continue;
    }
    proposed_[ind.key] = {ind.decisions};
    batch.push_back(ind.steps);
  }
  return batch;
}

void GuidedSearch::update(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results) {
  std::vector<double> costs;
  for (size_t i = 0; i < programs.size(); ++i) {
    std::string key = schedule::serializeSteps(programs[i]);
    seen_.insert(key);
    double c = results[i].ok() ? results[i].medianCost() : std::numeric_limits<double>::infinity();
    costs.push_back(c);
    auto it = proposed_.find(key);
    if (it != proposed_.end()) {
      if (std::isfinite(c) && it->second.known)
        measured_.push_back({c, schedule::serializeDecisions(it->second.decisions)});
      proposed_.erase(it);
    }
  }
  // Only the best population x measuredSeedShare of them seed a population
  // (nextBatch): the rest need not be kept, or a long tuning holds them all.
  const size_t keep = size_t(params_.population * params_.measuredSeedShare);
  if (measured_.size() > keep + 64) {
    std::nth_element(measured_.begin(), measured_.begin() + std::ptrdiff_t(keep), measured_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    measured_.resize(keep);
  }
  model_->update(sampler_.task(), programs, costs);
}

SearchPolicy::ProposalInfo GuidedSearch::proposalInfo(const std::string& key) const {
  auto it = proposed_.find(key);
  if (it == proposed_.end()) return {};
  const Proposed& p = it->second;
  return {p.known ? schedule::serializeDecisions(p.decisions) : "", p.score, model_->name(),
          std::isfinite(p.score) ? p.trainedOn : -1, p.pretrained};
}

void GuidedSearch::restore(const std::vector<Program>& programs, const std::vector<measure::MeasureResult>& results,
                           const std::vector<std::string>& decisions) {
  for (size_t i = 0; i < programs.size() && i < decisions.size(); ++i) {
    if (decisions[i].empty()) continue;
    try {
      schedule::ProgramDecisions d = schedule::deserializeDecisions(decisions[i]);
      if (d.sketch < sampler_.sketchCount()) proposed_[schedule::serializeSteps(programs[i])] = {std::move(d)};
    } catch (const schedule::ScheduleError&) {
      // Learned from, but not evolved from.
    }
  }
  update(programs, results);
}

}  // namespace tessel::search
