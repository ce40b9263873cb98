#include "ui/model_quality.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "ui/rank_correlation.h"

namespace tessel::ui {

namespace {

bool usable(const ScoredProgram& p) {
  return std::isfinite(p.predicted) && std::isfinite(p.seconds) && p.seconds > 0;
}

// Rho of (score, throughput) over programs[i] for i in `which`.
double rhoOf(const std::vector<ScoredProgram>& programs, const std::vector<size_t>& which) {
  std::vector<double> score, throughput;
  for (size_t i : which) {
    score.push_back(programs[i].predicted);
    throughput.push_back(1 / programs[i].seconds);
  }
  return spearmanRankCorrelation(score, throughput);
}

}  // namespace

Interval spearmanInterval(double rho, size_t n) {
  if (n < 4 || !std::isfinite(rho)) return {};
  const double z = std::atanh(std::clamp(rho, -0.999999, 0.999999));
  const double se = std::sqrt((1 + rho * rho / 2) / double(n - 3));
  return {std::tanh(z - 1.959964 * se), std::tanh(z + 1.959964 * se)};
}

std::vector<RoundRho> rhoPerRound(const std::vector<ScoredProgram>& programs, int task) {
  std::vector<RoundRho> out;
  std::map<int, std::vector<size_t>> members;  // round -> usable programs
  std::map<int, size_t> slot;                  // round -> index in out
  for (size_t i = 0; i < programs.size(); ++i) {
    const ScoredProgram& p = programs[i];
    if (task >= 0 && p.task != task) continue;
    if (slot.try_emplace(p.round, out.size()).second) {
      RoundRho r;
      r.task = p.task;
      r.round = p.round;
      r.untrained = p.untrained;
      out.push_back(r);
    }
    if (usable(p)) members[p.round].push_back(i);
  }
  for (RoundRho& r : out) {
    const std::vector<size_t>& m = members[r.round];
    r.n = m.size();
    r.rho = rhoOf(programs, m);
    r.interval = spearmanInterval(r.rho, r.n);
  }
  return out;
}

bool worseThanChance(const std::vector<ScoredProgram>& programs, int task, RoundRho* pooled) {
  std::vector<RoundRho> rounds = rhoPerRound(programs, task);
  std::erase_if(rounds, [](const RoundRho& r) { return r.untrained || r.n < kFlagMinPrograms; });
  if (int(rounds.size()) < kFlagRounds) return false;
  rounds.erase(rounds.begin(), rounds.end() - kFlagRounds);
  bool allBelow = true;
  for (const RoundRho& r : rounds)
    allBelow = allBelow && r.rho < 0;
  // Pooled: each program's rank within its round, as a fraction, so that
  // rounds of different model states count alike.
  std::vector<double> x, y;
  for (const RoundRho& r : rounds) {
    std::vector<double> score, throughput;
    for (const ScoredProgram& p : programs)
      if (p.task == task && p.round == r.round && usable(p)) {
        score.push_back(p.predicted);
        throughput.push_back(1 / p.seconds);
      }
    const std::vector<double> rx = averageRanks(score), ry = averageRanks(throughput);
    const double span = double(score.size() - 1);
    for (size_t k = 0; k < score.size(); ++k) {
      x.push_back((rx[k] - 1) / span);
      y.push_back((ry[k] - 1) / span);
    }
  }
  RoundRho all{task, rounds.back().round, false, x.size(), spearmanRankCorrelation(x, y), {}};
  all.interval = spearmanInterval(all.rho, all.n);
  if (pooled) *pooled = all;
  return allBelow && all.interval.high < 0;
}

}  // namespace tessel::ui
