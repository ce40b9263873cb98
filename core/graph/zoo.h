// The built-in model zoo: graphs with shapes and seeded random weights
// (materialised on demand), parameter counts and FLOPs as published.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::graph {

struct ZooEntry {
  std::string name;         // "resnet18", ...
  std::string description;  // one line: what it is, input shape
  int64_t publishedParams;  // the published parameter count
  double publishedGflops;   // published 2 x multiply-adds, in GFLOP
};
const std::vector<ZooEntry>& zooModels();
bool isZooModel(const std::string& name);
// The model with shapes inferred; GraphError for an unknown name (listing the known ones).
Graph makeZooModel(const std::string& name);

}  // namespace tessel::graph
