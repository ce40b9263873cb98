#include "runtime/memory_plan.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace tessel::runtime {

namespace {

int64_t alignUp(int64_t v, int64_t a) {
  return (v + a - 1) / a * a;
}

bool livesOverlap(const TensorLifetime& a, const TensorLifetime& b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

}  // namespace

MemoryPlan planMemory(const std::vector<TensorLifetime>& tensors, int64_t alignment) {
  if (alignment <= 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("memory plan: alignment " + std::to_string(alignment) + " is not a power of two");
  for (const TensorLifetime& t : tensors) {
    if (t.bytes < 0) throw std::invalid_argument("memory plan: tensor '" + t.name + "' has a negative size");
    if (t.lastStep < t.firstStep)
      throw std::invalid_argument("memory plan: tensor '" + t.name + "' is last read before it is written");
  }
  MemoryPlan plan;
  plan.offsets.assign(tensors.size(), 0);
  std::vector<size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by first use, so the plan does not depend on names.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (tensors[a].bytes != tensors[b].bytes) return tensors[a].bytes > tensors[b].bytes;
    return tensors[a].firstStep < tensors[b].firstStep;
  });
  std::vector<size_t> placed;
  struct Interval {
    int64_t begin, end;
  };
  std::vector<Interval> busy;
  for (size_t i : order) {
    const int64_t size = alignUp(std::max<int64_t>(tensors[i].bytes, 1), alignment);
    plan.totalBytes += size;
    // The memory taken, at some step of this tensor's life, by placed tensors.
    busy.clear();
    for (size_t p : placed)
      if (livesOverlap(tensors[i], tensors[p]))
        busy.push_back({plan.offsets[p], plan.offsets[p] + alignUp(std::max<int64_t>(tensors[p].bytes, 1), alignment)});
    std::sort(busy.begin(), busy.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    // The lowest gap that fits.
    int64_t offset = 0;
    for (const Interval& b : busy) {
      if (b.begin - offset >= size) break;
      offset = std::max(offset, b.end);
    }
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size);
    placed.push_back(i);
  }
  return plan;
}

std::string findOverlap(const std::vector<TensorLifetime>& tensors, const MemoryPlan& plan) {
  for (size_t a = 0; a < tensors.size(); ++a)
    for (size_t b = a + 1; b < tensors.size(); ++b) {
      if (!livesOverlap(tensors[a], tensors[b])) continue;
      if (tensors[a].bytes == 0 || tensors[b].bytes == 0) continue;
      const int64_t a0 = plan.offsets[a], a1 = a0 + tensors[a].bytes;
      const int64_t b0 = plan.offsets[b], b1 = b0 + tensors[b].bytes;
      if (a0 < b1 && b0 < a1) return tensors[a].name + " and " + tensors[b].name;
    }
  for (size_t a = 0; a < tensors.size(); ++a)
    if (plan.offsets[a] < 0 || plan.offsets[a] + tensors[a].bytes > plan.arenaBytes)
      return tensors[a].name + " and the end of the arena";
  return "";
}

}  // namespace tessel::runtime
