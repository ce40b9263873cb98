#include "ui/graph_bands.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace tessel::ui {

namespace {

// Places as late as possible. Vertices in node order are topological but
// for edges into a collapsed partition from its midst: those are left out.
std::vector<size_t> latePlaces(size_t count, const std::vector<std::pair<size_t, size_t>>& edges) {
  std::vector<std::vector<size_t>> successors(count);
  for (auto [a, b] : edges)
    if (a < b) successors[a].push_back(b);
  std::vector<size_t> below(count, 0);  // the longest path below, in edges
  for (size_t v = count; v-- > 0;)
    for (size_t w : successors[v])
      below[v] = std::max(below[v], below[w] + 1);
  std::vector<size_t> order(count);
  for (size_t v = 0; v < count; ++v)
    order[v] = v;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return below[a] > below[b]; });
  std::vector<size_t> place(count);
  for (size_t i = 0; i < count; ++i)
    place[order[i]] = i;
  return place;
}

}  // namespace

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

Vertices verticesOf(const frontend::PreparedModel& model, const CollapsedGroups& collapsed) {
  const size_t n = model.graph.nodes.size();
  std::vector<long> collapsedGroupOf(n, -1);
  for (size_t group : clusterGroups(model))
    if (group < collapsed.size() && collapsed[group])
      for (size_t node : model.plan.groups[group])
        if (node < n) collapsedGroupOf[node] = long(group);
  Vertices v;
  v.ofNode.assign(n, 0);
  std::map<long, size_t> vertexOfGroup;
  for (size_t node = 0; node < n; ++node) {
    if (collapsedGroupOf[node] < 0) {
      v.ofNode[node] = v.count++;
    } else {
      auto [it, added] = vertexOfGroup.try_emplace(collapsedGroupOf[node], v.count);
      if (added) ++v.count;
      v.ofNode[node] = it->second;
    }
  }
  std::set<std::pair<size_t, size_t>> seen;
  for (auto [from, to] : graphEdges(model.graph)) {
    const std::pair<size_t, size_t> e{v.ofNode[from], v.ofNode[to]};
    if (e.first == e.second || !seen.insert(e).second) continue;
    v.edges.push_back(e);
    v.edgeNodes.push_back({from, to});
  }
  v.place = latePlaces(v.count, v.edges);
  for (size_t group : clusterGroups(model)) {
    if (group < collapsed.size() && collapsed[group]) continue;
    size_t first = v.count, last = 0;
    for (size_t node : model.plan.groups[group])
      if (node < n) first = std::min(first, v.place[v.ofNode[node]]), last = std::max(last, v.place[v.ofNode[node]]);
    if (first < last) v.clusterSpans.push_back({first, last});
  }
  return v;
}

// Appends a band laid out on its own, moved by (dx, dy).
void appendBand(GraphLayout& out, GraphLayout band, double dx, double dy) {
  for (LayoutNode& n : band.nodes)
    n.x += dx, n.y += dy;
  for (LayoutEdge& e : band.edges) {
    for (auto& [x, y] : e.points)
      x += dx, y += dy;
    e.tipX += dx, e.tipY += dy;
  }
  for (LayoutCluster& c : band.clusters)
    c.x += dx, c.y += dy;
  out.nodes.insert(out.nodes.end(), band.nodes.begin(), band.nodes.end());
  out.edges.insert(out.edges.end(), band.edges.begin(), band.edges.end());
  out.clusters.insert(out.clusters.end(), band.clusters.begin(), band.clusters.end());
}

namespace {

// Each band's x offset: the edge into it from the band just above that
// leaves that band last (the graph's spine, where it was cut) is drawn
// straight down; a band no such edge enters is centred under the one above.
std::vector<double> bandOffsets(const BandedLayout& banded) {
  const Vertices& v = banded.v;
  const size_t bands = banded.bands.size();
  std::vector<int> spine(bands, -1);  // by band: index into v.edges
  for (size_t i = 0; i < v.edges.size(); ++i) {
    const auto [a, c] = v.edges[i];
    const size_t b = banded.bandOf(c);
    if (b == 0 || banded.bandOf(a) != b - 1) continue;
    if (spine[b] < 0) {
      spine[b] = int(i);
      continue;
    }
    const auto [sa, sc] = v.edges[size_t(spine[b])];
    if (v.place[a] > v.place[sa] || (v.place[a] == v.place[sa] && v.place[c] < v.place[sc])) spine[b] = int(i);
  }
  std::vector<double> dx(bands, 0);
  for (size_t b = 1; b < bands; ++b) {
    if (spine[b] >= 0) {
      const auto [a, c] = v.edges[size_t(spine[b])];
      dx[b] = dx[b - 1] + banded.spans[a].x - banded.spans[c].x;
    } else {
      dx[b] = dx[b - 1] + (banded.bands[b - 1].width - banded.bands[b].width) / 2;
    }
  }
  const double left = dx.empty() ? 0 : *std::min_element(dx.begin(), dx.end());
  for (double& d : dx)
    d -= left;
  return dx;
}

}  // namespace

void placeBands(BandedLayout& banded, const frontend::PreparedModel& model) {
  const Vertices& v = banded.v;
  banded.spans.assign(v.count, {});
  for (const GraphLayout& band : banded.bands) {
    for (const LayoutNode& n : band.nodes)
      banded.spans[v.ofNode[n.node]] = {n.x, n.y - n.height / 2, n.y + n.height / 2};
    for (const LayoutCluster& c : band.clusters)
      if (c.collapsed)
        banded.spans[v.ofNode[model.plan.groups[c.group].front()]] = {c.x + c.width / 2, c.y, c.y + c.height};
  }
  banded.dx = bandOffsets(banded);
  banded.dy.clear();
  banded.width = banded.height = 0;
  for (size_t b = 0; b < banded.bands.size(); ++b) {
    banded.dy.push_back(banded.height + (b > 0 ? kBandGap : 0));
    banded.width = std::max(banded.width, banded.dx[b] + banded.bands[b].width);
    banded.height = banded.dy[b] + banded.bands[b].height;
  }
}

std::vector<LayoutEdge> edgesBetweenBands(const BandedLayout& banded) {
  const Vertices& v = banded.v;
  std::vector<LayoutEdge> out;
  for (size_t i = 0; i < v.edges.size(); ++i) {
    const auto [a, b] = v.edges[i];
    const size_t from = banded.bandOf(a), to = banded.bandOf(b);
    if (from == to) continue;
    const double x0 = banded.spans[a].x + banded.dx[from], y0 = banded.spans[a].bottom + banded.dy[from];
    const double x1 = banded.spans[b].x + banded.dx[to], y1 = banded.spans[b].top + banded.dy[to];
    LayoutEdge e{v.edgeNodes[i].first, v.edgeNodes[i].second, {}};
    for (double t : {0.0, 1.0 / 3, 2.0 / 3, 1.0})
      e.points.push_back({x0 + t * (x1 - x0), y0 + t * (y1 - y0)});
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tessel::ui
