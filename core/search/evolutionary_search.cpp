// Ansor's evolutionary search over annotation decisions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "search/guided_search.h"
#include "search/mutation.h"

namespace tessel::search {

std::vector<GuidedSearch::Individual> EvolutionarySearch::explore(std::vector<Individual> pop) {
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
      Individual child = pop[parent(sampler_.rng())];
      double r = u(sampler_.rng());
      if (r < params_.mutationProbability) {
        if (!mutateDecisions(child.decisions, sampler_.rng())) continue;
      } else if (r < params_.mutationProbability + params_.crossoverProbability) {
        const Individual& other = pop[parent(sampler_.rng())];
        if (other.decisions.sketch != child.decisions.sketch) continue;
        child.decisions = crossover(child.decisions, other.decisions, sampler_.rng());
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

}  // namespace tessel::search
