// AutoTVM-style simulated annealing over annotation decisions.
#include <cmath>

#include "search/guided_search.h"
#include "search/mutation.h"

namespace tessel::search {

std::vector<GuidedSearch::Individual> AnnealingSearch::explore(std::vector<Individual> pop) {
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
      if (!mutateDecisions(p.decisions, sampler_.rng()) || !rebuild(p)) continue;
      proposals.push_back(std::move(p));
      from.push_back(i);
    }
    if (proposals.empty()) break;
    score(proposals);
    for (size_t k = 0; k < proposals.size(); ++k) {
      Individual& cur = pop[from[k]];
      double delta = proposals[k].score - cur.score;
      if (!std::isfinite(cur.score) || delta > 0 || (temp > 0 && u(sampler_.rng()) < std::exp(delta / temp)))
        cur = proposals[k];
      all.push_back(proposals[k]);
    }
  }
  return all;
}

}  // namespace tessel::search
