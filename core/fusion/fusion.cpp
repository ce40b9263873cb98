#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "fusion/fusion_plan.h"
#include "fusion/op_pattern.h"

namespace tessel::fusion {

namespace {

using graph::Graph;
using graph::Node;

int rank(OpPattern p) {
  return static_cast<int>(p);
}

// Producer node of every value, consumers of every value.
struct Edges {
  std::map<std::string, size_t> producer;
  std::map<std::string, std::vector<size_t>> consumers;
  std::set<std::string> graphOutputs;
  explicit Edges(const Graph& g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& o : g.nodes[i].outputs)
        producer[o] = i;
      for (const std::string& in : g.nodes[i].inputs)
        if (!in.empty()) consumers[in].push_back(i);
    }
    graphOutputs.insert(g.outputs.begin(), g.outputs.end());
  }
  int producerOf(const std::string& v) const {
    auto it = producer.find(v);
    return it == producer.end() ? -1 : int(it->second);
  }
  size_t consumerCount(const std::string& v) const {
    auto it = consumers.find(v);
    return it == consumers.end() ? 0 : it->second.size();
  }
};

double bytesOf(const Graph& g, const std::string& v) {
  if (!g.values.count(v)) return 0;
  const graph::ValueInfo& info = g.value(v);
  double size = info.dtype == graph::DType::Float32 ? 4 : 8;
  return size * double(info.numElements());
}

// Orders groups so that each group comes right after the groups it reads
// (a post-order walk from the outputs, last inputs first): a producer then
// sits next to its consumer, which is what the DP's window can fuse.
std::vector<size_t> orderGroups(const Graph& g, const Edges& e, const std::vector<std::vector<size_t>>& groups,
                                const std::vector<int>& groupOf) {
  std::vector<size_t> order;
  std::vector<char> state(groups.size(), 0);
  // Depth-first with a stack of its own: a chain of 100,000 groups must not
  // recurse 100,000 deep. A frame holds a group and the groups it reads.
  struct Frame {
    size_t group;
    std::vector<size_t> reads;
    size_t next = 0;
  };
  auto visit = [&](size_t root) {
    std::vector<Frame> stack;
    auto enter = [&](size_t gi) {
      if (state[gi]) return;
      state[gi] = 1;
      Frame f{gi, {}};
      for (auto n = groups[gi].rbegin(); n != groups[gi].rend(); ++n) {
        const Node& node = g.nodes[*n];
        for (auto in = node.inputs.rbegin(); in != node.inputs.rend(); ++in) {
          int p = e.producerOf(*in);
          if (p >= 0 && groupOf[size_t(p)] != int(gi)) f.reads.push_back(size_t(groupOf[size_t(p)]));
        }
      }
      stack.push_back(std::move(f));
    };
    enter(root);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.reads.size()) {
        enter(f.reads[f.next++]);  // may reallocate the stack: f is not used after
        continue;
      }
      order.push_back(f.group);
      stack.pop_back();
    }
  };
  for (const std::string& o : g.outputs) {
    int p = e.producerOf(o);
    if (p >= 0) visit(size_t(groupOf[size_t(p)]));
  }
  for (size_t gi = 0; gi < groups.size(); ++gi)
    visit(gi);
  return order;
}

FusionPlan planFromGroups(const Graph& g, const Edges& e, std::vector<std::vector<size_t>> groups,
                          const std::string& strategy, const CostEstimate& c) {
  std::vector<int> groupOf(g.nodes.size(), -1);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    std::sort(groups[gi].begin(), groups[gi].end());
    for (size_t n : groups[gi])
      groupOf[n] = int(gi);
  }
  FusionPlan plan;
  plan.strategy = strategy;
  for (size_t gi : orderGroups(g, e, groups, groupOf))
    plan.groups.push_back(groups[gi]);
  plan.estimatedSeconds = estimatePlanSeconds(g, plan, c);
  return plan;
}

}  // namespace

double nodeFlops(const Graph& g, const Node& n) {
  if (n.outputs.empty() || !g.values.count(n.outputs[0])) return 0;
  const graph::OpDef* d = graph::findOp(n.op);
  return d && d->flops ? d->flops(g, n) : double(g.value(n.outputs[0]).numElements());
}

namespace {

double groupSeconds(const Graph& g, const Edges& e, const std::vector<size_t>& group, const CostEstimate& c) {
  std::set<size_t> inGroup(group.begin(), group.end());
  std::set<std::string> produced, read;
  double flops = 0;
  bool onlyViews = true;
  for (size_t n : group) {
    const Node& node = g.nodes[n];
    onlyViews &= isView(node);
    flops += nodeFlops(g, node);
    produced.insert(node.outputs.begin(), node.outputs.end());
    for (const std::string& in : node.inputs)
      if (!in.empty()) read.insert(in);
  }
  if (onlyViews) return 0;  // no kernel: the same bytes under another shape
  double bytes = 0;
  for (const std::string& v : read)
    if (!produced.count(v)) bytes += bytesOf(g, v);
  for (const std::string& v : produced) {
    bool escapes = e.graphOutputs.count(v) > 0;
    if (auto it = e.consumers.find(v); it != e.consumers.end())
      for (size_t i : it->second)
        escapes |= !inGroup.count(i);
    if (escapes) bytes += bytesOf(g, v);
  }
  return c.launchSeconds + std::max(bytes / c.bandwidthBytesPerSecond, flops / c.peakFlopsPerSecond);
}

}  // namespace

double estimateGroupSeconds(const Graph& g, const std::vector<size_t>& group, const CostEstimate& c) {
  return groupSeconds(g, Edges(g), group, c);
}

double estimatePlanSeconds(const Graph& g, const FusionPlan& plan, const CostEstimate& c) {
  Edges e(g);
  double total = 0;
  for (const auto& group : plan.groups)
    total += groupSeconds(g, e, group, c);
  return total;
}

FusionPlan noFusion(const Graph& g) {
  Edges e(g);
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    groups.push_back({i});
  return planFromGroups(g, e, groups, "none", {});
}

FusionPlan ruleFusion(const Graph& g, const CostEstimate& c) {
  Edges e(g);
  std::vector<int> groupOf(g.nodes.size(), -1);
  std::vector<std::vector<size_t>> groups;
  std::vector<OpPattern> groupPattern;

  // Whether a path from group `gi` reaches `value` through nodes outside it
  // (joining would then make the groups depend on each other both ways).
  auto reachesAround = [&](int gi, const std::string& value) {
    std::vector<int> stack;
    std::set<int> seen;
    int p = e.producerOf(value);
    if (p >= 0) stack.push_back(p);
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (groupOf[size_t(n)] == gi) return true;
      for (const std::string& in : g.nodes[size_t(n)].inputs) {
        int q = in.empty() ? -1 : e.producerOf(in);
        if (q >= 0) stack.push_back(q);
      }
    }
    return false;
  };

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    OpPattern pat = patternOf(g, n);
    int joined = -1;
    if (pat != OpPattern::Opaque && pat != OpPattern::OutEWiseFusable) {
      for (const std::string& in : n.inputs) {
        int p = in.empty() ? -1 : e.producerOf(in);
        if (p < 0 || e.consumerCount(in) != 1 || e.graphOutputs.count(in)) continue;
        int gi = groupOf[size_t(p)];
        OpPattern gp = groupPattern[size_t(gi)];
        bool ok = false;
        if (pat == OpPattern::ElementWise || pat == OpPattern::Broadcast)
          ok = rank(gp) <= rank(OpPattern::OutEWiseFusable);
        else  // injective and reduction ops take element-wise/injective prologues
          ok = rank(gp) <= rank(OpPattern::Injective);
        if (!ok) continue;
        bool cycle = false;
        for (const std::string& other : n.inputs)
          if (!other.empty() && other != in) {
            int q = e.producerOf(other);
            if (q >= 0 && groupOf[size_t(q)] != gi && reachesAround(gi, other)) cycle = true;
          }
        if (cycle) continue;
        joined = gi;
        break;
      }
    }
    if (joined >= 0 && groups[size_t(joined)].size() >= kMaxFusedNodes) joined = -1;
    if (joined < 0) {
      groups.push_back({i});
      groupPattern.push_back(pat);
      groupOf[i] = int(groups.size() - 1);
    } else {
      groups[size_t(joined)].push_back(i);
      if (rank(pat) > rank(groupPattern[size_t(joined)])) groupPattern[size_t(joined)] = pat;
      groupOf[i] = joined;
    }
  }
  return planFromGroups(g, e, groups, "rule", c);
}

namespace {

bool legalDpGroup(const Graph& g, const Edges& e, const std::vector<size_t>& nodes) {
  if (nodes.size() <= 1) return true;
  std::set<size_t> in(nodes.begin(), nodes.end());
  int anchor = -1, reductions = 0;
  for (size_t n : nodes) {
    OpPattern p = patternOf(g, g.nodes[n]);
    if (p == OpPattern::Opaque) return false;
    if (p == OpPattern::OutEWiseFusable) {
      if (anchor >= 0) return false;
      anchor = int(n);
    }
    if (p == OpPattern::Reduction) ++reductions;
  }
  // Internal edges: connected, and up/downstream of the anchor.
  std::map<size_t, std::vector<size_t>> succ, pred;
  for (size_t n : nodes)
    for (const std::string& v : g.nodes[n].inputs) {
      int p = v.empty() ? -1 : e.producerOf(v);
      if (p >= 0 && in.count(size_t(p))) succ[size_t(p)].push_back(n), pred[n].push_back(size_t(p));
    }
  auto reach = [&](size_t from, std::map<size_t, std::vector<size_t>>& adj) {
    std::set<size_t> seen{from};
    std::vector<size_t> stack{from};
    while (!stack.empty()) {
      size_t x = stack.back();
      stack.pop_back();
      for (size_t y : adj[x])
        if (seen.insert(y).second) stack.push_back(y);
    }
    return seen;
  };
  std::map<size_t, std::vector<size_t>> both;
  for (auto& [k, v] : succ)
    for (size_t y : v)
      both[k].push_back(y), both[y].push_back(k);
  if (reach(nodes.front(), both).size() != nodes.size()) return false;
  if (anchor < 0) return reductions <= 2;
  std::set<size_t> down = reach(size_t(anchor), succ), up = reach(size_t(anchor), pred);
  const std::string& anchorOp = g.nodes[size_t(anchor)].op;
  for (size_t n : nodes) {
    if (int(n) == anchor) continue;
    OpPattern p = patternOf(g, g.nodes[n]);
    if (down.count(n)) {
      if (p != OpPattern::ElementWise && p != OpPattern::Broadcast) return false;  // epilogue
    } else if (up.count(n)) {
      // AutoGTCO: softmax (and element-wise work) computed into a batch matmul's input.
      if (anchorOp != "MatMul" && anchorOp != "Gemm") return false;
      if (p == OpPattern::OutEWiseFusable) return false;
    } else {
      return false;  // a sibling: two kernels' worth of work
    }
  }
  return true;
}

}  // namespace

bool isLegalDpGroup(const Graph& g, const std::vector<size_t>& nodes) {
  return legalDpGroup(g, Edges(g), nodes);
}

FusionPlan dpFusion(const Graph& g, int window, const CostEstimate& c) {
  Edges e(g);
  // The order the DP segments: rule groups kept contiguous (so the rules'
  // plan is one of the DP's candidates), producers next to consumers.
  FusionPlan rules = ruleFusion(g, c);
  std::vector<size_t> order;
  const size_t n = g.nodes.size();
  // Segments end at i and start within the window, or where the rule group
  // ending at i starts (a longer element-wise chain): the rules' plan stays a
  // candidate while the work stays linear in the nodes.
  std::vector<size_t> ruleStart(n + 1, n + 1);
  for (const auto& group : rules.groups) {
    ruleStart[order.size() + group.size()] = order.size();
    order.insert(order.end(), group.begin(), group.end());
  }
  const size_t w = size_t(std::max(window, 1));
  std::vector<double> best(n + 1, std::numeric_limits<double>::infinity());
  std::vector<size_t> from(n + 1, 0);
  best[0] = 0;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = std::min(i - std::min(i, w), ruleStart[i]); j < i; j = std::max(j + 1, i - std::min(i, w))) {
      if (!std::isfinite(best[j])) continue;
      std::vector<size_t> seg(order.begin() + long(j), order.begin() + long(i));
      if (!legalDpGroup(g, e, seg)) continue;
      double cost = best[j] + groupSeconds(g, e, seg, c);
      if (cost < best[i]) best[i] = cost, from[i] = j;
    }
  std::vector<std::vector<size_t>> groups;
  for (size_t i = n; i > 0; i = from[i])
    groups.push_back(std::vector<size_t>(order.begin() + long(from[i]), order.begin() + long(i)));
  FusionPlan dp = planFromGroups(g, e, groups, "dp", c);
  if (rules.estimatedSeconds < dp.estimatedSeconds) {  // cannot happen: the rules' plan is a DP candidate
    rules.strategy = "dp";
    return rules;
  }
  return dp;
}

FusionPlan makeFusionPlan(const Graph& g, const std::string& strategy, const CostEstimate& c) {
  if (strategy == "none") return noFusion(g);
  if (strategy == "rule") return ruleFusion(g, c);
  if (strategy == "dp") return dpFusion(g, 8, c);
  throw std::invalid_argument("unknown fusion '" + strategy + "' (available: rule, dp, none)");
}

}  // namespace tessel::fusion
