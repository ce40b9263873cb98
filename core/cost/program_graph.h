// The structure of a program as a graph, for the graph cost models (GTuner):
// nodes are the lowered loop nest's loops, stores, loads and buffers, each
// with a fixed-width attribute row; edges are nesting (loop -> what it
// encloses) and data flow (buffer -> load -> store -> buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lower/loop_nest.h"

namespace tessel::cost {

enum class GraphNodeKind : uint8_t { Loop, Store, Load, Buffer };
enum class GraphEdgeKind : uint8_t { Nesting, DataFlow };

// Attributes per node (see graphNodeFeatureNames()).
constexpr size_t kGraphNodeFeatures = 21;

struct ProgramGraph {
  std::vector<GraphNodeKind> kinds;  // per node
  std::vector<float> attributes;     // per node, kGraphNodeFeatures each, row-major
  struct Edge {
    int32_t from = 0, to = 0;
    GraphEdgeKind kind = GraphEdgeKind::Nesting;
    bool operator==(const Edge&) const = default;
  };
  std::vector<Edge> edges;

  size_t numNodes() const { return kinds.size(); }
  const float* row(size_t node) const { return attributes.data() + node * kGraphNodeFeatures; }
  bool operator==(const ProgramGraph&) const = default;
};

// One node per loop, Store statement, Load expression and buffer of the function.
ProgramGraph buildProgramGraph(const lower::LoweredFunc& f);
// Names of the node attributes, in row order.
const std::vector<std::string>& graphNodeFeatureNames();

}  // namespace tessel::cost
