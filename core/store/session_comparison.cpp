#include "store/session_comparison.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tessel::store {

namespace {

double bestSeconds(const SessionTask& t) {
  return t.best ? t.best->medianCost() : kNoSeconds;
}

double lastObjective(const SessionHistory& h) {
  const std::vector<std::pair<int, double>> curve = h.objectiveCurve();
  return curve.empty() ? kNoSeconds : curve.back().second;
}

}  // namespace

SessionComparison compareSessions(const SessionHistory& a, const SessionHistory& b) {
  SessionComparison c;
  std::map<std::string, size_t> index;  // workload key -> c.tasks
  for (const SessionTask& t : a.tasks) {
    index[t.task.key] = c.tasks.size();
    c.tasks.push_back({t.task, t.weight, bestSeconds(t), kNoSeconds, t.trials, 0});
  }
  for (const SessionTask& t : b.tasks) {
    auto [it, added] = index.try_emplace(t.task.key, c.tasks.size());
    if (added) c.tasks.push_back({t.task, t.weight, kNoSeconds, kNoSeconds, 0, 0});
    TaskComparison& row = c.tasks[it->second];
    row.secondsB = bestSeconds(t);
    row.trialsB = t.trials;
  }
  // Both measured first, the largest difference to the model first; then
  // the others, in the order they were met.
  std::stable_sort(c.tasks.begin(), c.tasks.end(), [](const TaskComparison& x, const TaskComparison& y) {
    const double dx = std::abs(x.weightedDifference()), dy = std::abs(y.weightedDifference());
    if (std::isfinite(dx) != std::isfinite(dy)) return std::isfinite(dx);
    return std::isfinite(dx) && dx > dy;
  });
  c.objectiveA = lastObjective(a);
  c.objectiveB = lastObjective(b);
  return c;
}

double SessionComparison::differenceShare(const std::string& key) const {
  double total = 0, mine = kNoSeconds;
  for (const TaskComparison& t : tasks) {
    const double d = std::abs(t.weightedDifference());
    if (!std::isfinite(d)) continue;
    total += d;
    if (t.task.key == key) mine = d;
  }
  if (!std::isfinite(mine)) return kNoSeconds;
  return total > 0 ? mine / total : 0.0;
}

}  // namespace tessel::store
