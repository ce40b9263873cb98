// Ansor's evolutionary search and AutoTVM-style simulated annealing, both
// guided by a cost model over annotation decisions.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <set>

#include "search/mutation.h"
#include "search/search_policy.h"

namespace tessel::search {

ModelGuidedSearch::ModelGuidedSearch(const task::SearchTask& task, const schedule::HardwareParams& hw,
                                     std::shared_ptr<cost::CostModel> model, uint64_t seed, bool anneal,
                                     EvolutionParams params)
    : RandomSearch(task, hw, seed), model_(std::move(model)), anneal_(anneal), params_(params) {}

bool ModelGuidedSearch::randomIndividual(Individual* out) {
  if (!sample(&out->steps, &out->decisions)) return false;
  out->key = schedule::serializeSteps(out->steps);
  return true;
}

bool ModelGuidedSearch::rebuild(Individual& ind) {
  try {
    ind.steps = schedule::materialize(sketches_[ind.decisions.sketch], ind.decisions, hw_);
    if (hw_.target == "cuda") checkGpuLimits(ind.steps);
  } catch (const schedule::ScheduleError&) {
    return false;
  }
  ind.key = schedule::serializeSteps(ind.steps);
  return true;
}

void ModelGuidedSearch::score(std::vector<Individual>& pop) {
  std::vector<Program> programs;
  programs.reserve(pop.size());
  for (const Individual& ind : pop)
    programs.push_back(ind.steps);
  std::vector<double> s = model_->predict(task_, programs);
  for (size_t i = 0; i < pop.size(); ++i)
    pop[i].score = s[i] <= cost::kInvalidScore ? -std::numeric_limits<double>::infinity() : s[i];
  lastPredictions_ += pop.size();
}

std::vector<ModelGuidedSearch::Individual> ModelGuidedSearch::evolve(std::vector<Individual> pop) {
  std::vector<Individual> all = pop;  // every scored program, to pick the batch from
  for (int g = 0; g < params_.generations && !support::isCancelled(params_.cancel); ++g) {
    // Roulette selection on scores shifted to be positive.
    double lo = std::numeric_limits<double>::infinity();
    for (const Individual& i : pop)
      if (std::isfinite(i.score)) lo = std::min(lo, i.score);
    std::vector<double> w;
    for (const Individual& i : pop)
      w.push_back(std::isfinite(i.score) ? i.score - lo + 1e-6 : 0.0);
    if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0; })) break;
    std::discrete_distribution<size_t> parent(w.begin(), w.end());
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Individual> next;
    std::set<std::string> keys;
    for (int tries = 0; int(next.size()) < params_.population && tries < params_.population * 4; ++tries) {
      if (tries % 64 == 0 && support::isCancelled(params_.cancel)) break;
      Individual child = pop[parent(rng_)];
      double r = u(rng_);
      if (r < params_.mutationProbability) {
        if (!mutateDecisions(child.decisions, rng_)) continue;
      } else if (r < params_.mutationProbability + params_.crossoverProbability) {
        const Individual& other = pop[parent(rng_)];
        if (other.decisions.sketch != child.decisions.sketch) continue;
        child.decisions = crossover(child.decisions, other.decisions, rng_);
      }
      if (!rebuild(child) || !keys.insert(child.key).second) continue;
      next.push_back(std::move(child));
    }
    if (next.empty()) break;
    score(next);
    all.insert(all.end(), next.begin(), next.end());
    pop = std::move(next);
  }
  return all;
}

std::vector<ModelGuidedSearch::Individual> ModelGuidedSearch::anneal(std::vector<Individual> pop) {
  // Parallel chains: each point proposes one mutation per step and accepts it
  // with the Metropolis rule as the temperature falls from 1 to 0.
  std::vector<Individual> all = pop;
  int steps = params_.generations * 8;
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < steps && !support::isCancelled(params_.cancel); ++t) {
    double temp = 1.0 - double(t) / steps;
    std::vector<Individual> proposals;
    std::vector<size_t> from;
    for (size_t i = 0; i < pop.size(); ++i) {
      Individual p = pop[i];
      if (!mutateDecisions(p.decisions, rng_) || !rebuild(p)) continue;
      proposals.push_back(std::move(p));
      from.push_back(i);
    }
    if (proposals.empty()) break;
    score(proposals);
    for (size_t k = 0; k < proposals.size(); ++k) {
      Individual& cur = pop[from[k]];
      double delta = proposals[k].score - cur.score;
      if (!std::isfinite(cur.score) || delta > 0 || (temp > 0 && u(rng_) < std::exp(delta / temp))) cur = proposals[k];
      all.push_back(proposals[k]);
    }
  }
  return all;
}

void ModelGuidedSearch::addCandidates(std::vector<Candidate> candidates, int first) {
  for (const Candidate& c : candidates)
    if (c.decisions && c.decisions->sketch < sketches_.size()) {
      Individual ind;
      ind.decisions = *c.decisions;
      ind.steps = c.steps;
      ind.key = schedule::serializeSteps(c.steps);
      seededCandidates_.push_back(std::move(ind));
    }
  RandomSearch::addCandidates(std::move(candidates), first);
}

void ModelGuidedSearch::takeScoredCandidates(std::vector<Program>& batch) {
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
    proposed_[pool[i].key] = {pool[i].decisions, predicted, known[i] != 0};
    batch.push_back(pool[i].steps);
  }
}

std::vector<Program> ModelGuidedSearch::nextBatch(int n) {
  auto start = std::chrono::steady_clock::now();
  lastPredictions_ = 0;
  std::vector<Program> batch;
  // A warm start's first round: its candidates, as the model ranks them.
  candidatesFirst_ = std::min(candidatesFirst_, n);
  if (candidatesFirst_ > 0) takeScoredCandidates(batch);
  const int want = n - int(batch.size());
  if (want <= 0) {
    lastSearchSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return batch;
  }
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
  int size = anneal_ ? std::max(64, params_.population / 16) : params_.population;
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
  std::vector<Individual> all = anneal_ ? anneal(std::move(pop)) : evolve(std::move(pop));

  // The best predicted programs never measured, plus a few random ones.
  std::sort(all.begin(), all.end(), [](const Individual& a, const Individual& b) { return a.score > b.score; });
  int randomCount = int(std::lround(want * params_.epsGreedy));
  for (const Individual& ind : all) {
    if (int(batch.size()) >= n - randomCount) break;
    if (!std::isfinite(ind.score) || !seen_.insert(ind.key)) continue;
    proposed_[ind.key] = {ind.decisions, ind.score};
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
  lastSearchSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return batch;
}

void ModelGuidedSearch::update(const std::vector<Program>& programs,
                               const std::vector<measure::MeasureResult>& results) {
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
  model_->update(task_, programs, costs);
}

SearchPolicy::ProposalInfo ModelGuidedSearch::proposalInfo(const std::string& key) const {
  auto it = proposed_.find(key);
  if (it == proposed_.end()) return {};
  return {it->second.known ? schedule::serializeDecisions(it->second.decisions) : "", it->second.score, model_->name()};
}

void ModelGuidedSearch::restore(const std::vector<Program>& programs,
                                const std::vector<measure::MeasureResult>& results,
                                const std::vector<std::string>& decisions) {
  for (size_t i = 0; i < programs.size() && i < decisions.size(); ++i) {
    if (decisions[i].empty()) continue;
    try {
      schedule::ProgramDecisions d = schedule::deserializeDecisions(decisions[i]);
      if (d.sketch < sketches_.size()) proposed_[schedule::serializeSteps(programs[i])] = {std::move(d)};
    } catch (const schedule::ScheduleError&) {
      // Learned from, but not evolved from.
    }
  }
  update(programs, results);
}

}  // namespace tessel::search
