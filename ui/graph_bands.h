// Where to cut a big graph into horizontal bands that Graphviz dot lays out
// one by one. dot's time grows much faster than the graph (its network
// simplex ranks a 4,500-vertex chain in 20 s on the build machine, and a
// 1,000-vertex one in 0.2 s), so a graph of ten thousand nodes is laid out
// as bands of a few hundred vertices stacked top to bottom, each cut where
// the fewest edges cross it and never inside a partition; and where the
// bands go once laid out. Plain C++ (graph_layout.cpp runs Graphviz).
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "ui/graph_layout.h"

namespace tessel::ui {

// Vertices are numbered in a topological order (most edges go forward).
// `edges` are (from, to) vertex pairs; `unbreakable` are [first, last]
// vertex ranges a cut must not split (a partition's nodes). Returns the
// first vertex of each band after the first, in increasing order: bands
// hold about `target` vertices (between target / 2 and target where a cut
// is allowed), and each cut is the allowed position in that window that
// the fewest edges cross (the latest of equals). None when all fit in one.
std::vector<size_t> bandCuts(size_t vertices, const std::vector<std::pair<size_t, size_t>>& edges,
                             const std::vector<std::pair<size_t, size_t>>& unbreakable, size_t target);

// The graph as the layout sees it: one vertex per node outside collapsed
// partitions and one per collapsed partition (numbered at its first node),
// each with its place in the order the bands are cut from: a topological
// order, as late as possible (by the longest path below a vertex, the
// longest first), so that a node sits near its consumers however early the
// model computes it (a position table built once, used by every layer).
struct Vertices {
  std::vector<size_t> ofNode;
  size_t count = 0;
  std::vector<std::pair<size_t, size_t>> edges;         // distinct vertex pairs
  std::vector<std::pair<size_t, size_t>> edgeNodes;     // the first node pair of each
  std::vector<size_t> place;                            // of each vertex in the order
  std::vector<std::pair<size_t, size_t>> clusterSpans;  // [first, last] place of each expanded partition
};

Vertices verticesOf(const frontend::PreparedModel& model, const CollapsedGroups& collapsed);

// Bands are stacked this far apart (points).
constexpr double kBandGap = 36;

// A vertex in its band: its centre's x, its top and its bottom (points).
struct VertexSpan {
  double x = 0, top = 0, bottom = 0;
};

// A graph laid out band by band and the bands placed: what layoutGraph
// returns merged and renderSvg draws.
struct BandedLayout {
  Vertices v;
  std::vector<size_t> cuts;
  std::vector<GraphLayout> bands;  // each in its own coordinates
  std::vector<VertexSpan> spans;   // by vertex, in its band's coordinates
  std::vector<double> dx, dy;      // where each band's origin goes
  double width = 0, height = 0;

  size_t bandOf(size_t vertex) const {
    return size_t(std::upper_bound(cuts.begin(), cuts.end(), v.place[vertex]) - cuts.begin());
  }
};

// Places the laid-out bands: stacked top to bottom kBandGap apart, each
// moved sideways so that the edge into it from the band just above that
// leaves that band last (the graph's spine, where it was cut) is drawn
// straight down (a band no such edge enters is centred under the one
// above). Sets spans, dx, dy, width and height.
void placeBands(BandedLayout& banded, const frontend::PreparedModel& model);

// Appends a band laid out on its own, moved by (dx, dy).
void appendBand(GraphLayout& out, GraphLayout band, double dx, double dy);

// The edges between placed bands: straight, from the bottom of one vertex
// to the top of the other.
std::vector<LayoutEdge> edgesBetweenBands(const BandedLayout& banded);

}  // namespace tessel::ui
