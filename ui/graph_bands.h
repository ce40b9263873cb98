// Where to cut a big graph into horizontal bands that Graphviz dot lays out
// one by one. dot's time grows much faster than the graph (its network
// simplex ranks a 4,500-vertex chain in 20 s on the build machine, and a
// 1,000-vertex one in 0.2 s), so a graph of ten thousand nodes is laid out
// as bands of a few hundred vertices stacked top to bottom, each cut where
// the fewest edges cross it and never inside a partition. Plain C++.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

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

}  // namespace tessel::ui
