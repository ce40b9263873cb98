// The model's computation graph laid out by Graphviz dot (cgraph/gvc), with
// the fusion partitions as clusters. Plain C++ (no Qt) so that the layout can
// run on any thread and be benchmarked without a GUI.
//
// Clusters: one per plan group that a task stands for (every kernel, whatever
// its number of nodes), so that each kernel can be coloured by its latency
// share. Groups no task stands for (views: reshape, flatten, ...) are not
// clusters; their nodes sit outside every cluster.
// Edges: one per distinct (producer node, consumer node) pair.
// Collapsed partitions: a partition may be laid out as one box in place of
// its nodes (a big graph opens so: dot's time grows faster than linearly
// with the nodes, clusters cost most, and ten thousand nodes are more than
// one can read); its edges then end at the box, merged where they meet.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "frontend/model_loader.h"

namespace tessel::ui {

// Centre and size in points (1/72 inch); y grows downward.
struct LayoutNode {
  size_t node;
  double x, y, width, height;
};
// B-spline control points (Graphviz "pos", 1 + 3k points), y down. When
// Graphviz clipped the spline for an arrowhead, `hasTip` and (tipX, tipY)
// give the arrow's point; otherwise the arrow ends at the last point.
struct LayoutEdge {
  size_t from, to;
  std::vector<std::pair<double, double>> points;
  bool hasTip = false;
  double tipX = 0, tipY = 0;
};
// Top-left corner and size, y down; `group` indexes plan.groups.
// `collapsed`: the partition is one box, its nodes are not laid out.
struct LayoutCluster {
  size_t group;
  double x, y, width, height;
  bool collapsed = false;
};
struct GraphLayout {
  double width = 0, height = 0;
  std::vector<LayoutNode> nodes;  // in graph node order, one per node outside collapsed partitions
  // From and to name graph nodes; where edges merged at a collapsed
  // partition, those of the first of them.
  std::vector<LayoutEdge> edges;
  std::vector<LayoutCluster> clusters;  // in group order
  double seconds = 0;                   // wall time of building + laying out the Graphviz graph
};

// The groups that become clusters (see above), in increasing order.
std::vector<size_t> clusterGroups(const frontend::PreparedModel& model);
// The distinct (producer, consumer) node pairs, in consumer then input order.
std::vector<std::pair<size_t, size_t>> graphEdges(const graph::Graph& g);
// Index into model.tasks of the task standing for each plan group (-1: none).
std::vector<int> taskOfGroups(const frontend::PreparedModel& model);
// The default fill of a group's cluster ("#rrggbb", Graphviz's pastel19).
std::string defaultClusterColour(size_t group);
// "1x64x56x56" for a node's first output ("" if unknown).
std::string outputShapeText(const graph::Graph& g, size_t node);

// By plan group: whether the partition is laid out collapsed (missing: not).
using CollapsedGroups = std::vector<bool>;
// Every partition (cluster group) collapsed.
CollapsedGroups allCollapsed(const frontend::PreparedModel& model);

// Graphs of more vertices (nodes, and collapsed partitions) than this are
// laid out in bands of at most this many (ui/graph_bands.h), stacked top to
// bottom; the edges between bands are straight lines.
constexpr size_t kBandVertices = 400;

// Lays out the model's graph with Graphviz dot (partitions as clusters, or
// boxes where collapsed). Thread-safe (Graphviz has global state: calls are
// serialised by a mutex). Throws std::runtime_error naming the problem.
GraphLayout layoutGraph(const frontend::PreparedModel& model, const CollapsedGroups& collapsed = {});

// The graph as SVG rendered by Graphviz itself, clusters filled with
// `clusterColours` by group index ("#rrggbb"; missing: a pastel by index),
// `collapsed` partitions as boxes; a graph of several bands is one SVG of
// the bands' drawings placed as layoutGraph places them.
// Thread-safe; throws std::runtime_error naming the problem.
std::string renderSvg(const frontend::PreparedModel& model, const std::map<size_t, std::string>& clusterColours,
                      const CollapsedGroups& collapsed = {});

}  // namespace tessel::ui
