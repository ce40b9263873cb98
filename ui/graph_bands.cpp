#include "ui/graph_bands.h"

#include <algorithm>
#include <limits>

namespace tessel::ui {

std::vector<size_t> bandCuts(size_t n, const std::vector<std::pair<size_t, size_t>>& edges,
                             const std::vector<std::pair<size_t, size_t>>& unbreakable, size_t target) {
  if (n <= target || target < 2) return {};
  // crossing[k]: edges with one end before k and the other at k or after
  // (a cut at k starts a band at vertex k); blocked[k] > 0: k is inside a
  // range that must stay whole. Both from difference arrays.
  std::vector<long> crossing(n + 1, 0), blocked(n + 1, 0);
  for (auto [a, b] : edges) {
    const size_t lo = std::min(a, b), hi = std::max(a, b);
    if (lo == hi || hi >= n) continue;
    ++crossing[lo + 1];
    --crossing[hi + 1];
  }
  for (auto [first, last] : unbreakable) {
    if (first >= last || last >= n) continue;
    ++blocked[first + 1];
    --blocked[last + 1];
  }
  for (size_t k = 1; k <= n; ++k) {
    crossing[k] += crossing[k - 1];
    blocked[k] += blocked[k - 1];
  }
  std::vector<size_t> cuts;
  size_t start = 0;
  while (n - start > target) {
    size_t best = 0;
    long fewest = std::numeric_limits<long>::max();
    for (size_t k = start + target / 2; k <= start + target; ++k)
      if (blocked[k] == 0 && crossing[k] <= fewest) fewest = crossing[k], best = k;
    if (best == 0) {
      // A range longer than the window: the first allowed cut after it.
      size_t k = start + target + 1;
      while (k < n && blocked[k] > 0)
        ++k;
      if (k >= n) break;
      best = k;
    }
    cuts.push_back(best);
    start = best;
  }
  return cuts;
}

}  // namespace tessel::ui
