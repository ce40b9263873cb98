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

void appendRankFractions(const std::vector<ScoredProgram>& programs, const std::vector<size_t>& group,
                         std::vector<std::pair<double, double>>& out) {
  std::vector<double> score, throughput;
  for (size_t i : group) {
    score.push_back(programs[i].predicted);
    throughput.push_back(1 / programs[i].seconds);
  }
  const std::vector<double> x = averageRanks(score), y = averageRanks(throughput);
  const double span = double(group.size() - 1);
  for (size_t k = 0; k < group.size(); ++k)
    out.emplace_back(span > 0 ? (x[k] - 1) / span : 1.0, span > 0 ? (y[k] - 1) / span : 1.0);
}

RoundRho pooledRho(const std::vector<ScoredProgram>& programs, const std::vector<std::vector<size_t>>& groups) {
  std::vector<std::pair<double, double>> points;
  for (const std::vector<size_t>& g : groups)
    if (g.size() >= 2) appendRankFractions(programs, g, points);
  std::vector<double> x, y;
  for (const auto& [px, py] : points) {
    x.push_back(px);
    y.push_back(py);
  }
  RoundRho r;
  r.n = x.size();
  r.rho = spearmanRankCorrelation(x, y);
  r.interval = spearmanInterval(r.rho, r.n);
  return r;
}

bool worseThanChance(const std::vector<ScoredProgram>& programs, int task, RoundRho* pooled) {
  std::vector<RoundRho> rounds = rhoPerRound(programs, task);
  std::erase_if(rounds, [](const RoundRho& r) { return r.untrained || r.n < kFlagMinPrograms; });
  if (int(rounds.size()) < kFlagRounds) return false;
  rounds.erase(rounds.begin(), rounds.end() - kFlagRounds);
  bool allBelow = true;
  std::vector<std::vector<size_t>> groups;
  for (const RoundRho& r : rounds) {
    allBelow = allBelow && r.rho < 0;
    std::vector<size_t>& g = groups.emplace_back();
    for (size_t i = 0; i < programs.size(); ++i)
      if (programs[i].task == task && programs[i].round == r.round && usable(programs[i])) g.push_back(i);
  }
  RoundRho all = pooledRho(programs, groups);
  all.task = task;
  all.round = rounds.back().round;
  if (pooled) *pooled = all;
  return allBelow && all.interval.high < 0;
}

}  // namespace tessel::ui
