#include "cost/cost_model_eval.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tessel::cost {

double bestCost(const std::vector<double>& costs) {
  double best = INFINITY;
  for (double c : costs)
    best = std::min(best, c);
  return best;
}

double pickedCost(const EvalTask& t, size_t k) {
  std::vector<size_t> order(t.costs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  const size_t n = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + long(n), order.end(),
                    [&](size_t a, size_t c) { return t.scores[a] > t.scores[c]; });
  double picked = INFINITY;
  for (size_t i = 0; i < n; ++i)
    picked = std::min(picked, t.costs[order[i]]);
  return picked;
}

double topKScore(const std::vector<EvalTask>& tasks, size_t k) {
  double found = 0, best = 0;
  for (const EvalTask& t : tasks) {
    const double b = bestCost(t.costs);
    if (!std::isfinite(b)) continue;
    const double picked = pickedCost(t, k);
    best += t.weight * b;
    found += std::isfinite(picked) ? t.weight * picked : t.weight * b * 1e3;  // all picks failed: far off
  }
  return found > 0 ? best / found : 0;
}

EvalMetrics evaluateRanking(const std::vector<EvalTask>& tasks) {
  EvalMetrics m;
  m.top1 = topKScore(tasks, 1);
  m.top5 = topKScore(tasks, 5);
  double good = 0, pairs = 0, residual = 0, total = 0;
  for (const EvalTask& t : tasks) {
    const double b = bestCost(t.costs);
    if (!std::isfinite(b)) continue;
    ++m.tasks;
    m.programs += t.costs.size();
    const size_t n = t.costs.size();
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j) {
        if (t.costs[i] == t.costs[j]) continue;
        ++pairs;
        if (t.scores[i] == t.scores[j])
          good += 0.5;
        else
          good += (t.scores[i] > t.scores[j]) == (t.costs[i] < t.costs[j]) ? 1 : 0;
      }
    // Least squares of y = best / cost on the scores within the task.
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i) {
      y[i] = std::isfinite(t.costs[i]) ? b / t.costs[i] : 0.0;
      sx += t.scores[i], sy += y[i], sxx += t.scores[i] * t.scores[i], sxy += t.scores[i] * y[i];
    }
    const double var = sxx - sx * sx / double(n);
    const double slope = var > 0 ? (sxy - sx * sy / double(n)) / var : 0.0;
    const double intercept = (sy - slope * sx) / double(n);
    for (size_t i = 0; i < n; ++i) {
      const double e = y[i] - (slope * t.scores[i] + intercept), d = y[i] - sy / double(n);
      residual += e * e;
      total += d * d;
    }
  }
  m.pairwiseAccuracy = pairs > 0 ? good / pairs : 0.5;
  m.r2 = total > 0 ? 1 - residual / total : 0;
  return m;
}

}  // namespace tessel::cost
