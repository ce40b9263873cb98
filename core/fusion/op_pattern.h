// Op patterns, as in TVM's FuseOps and AutoGTCO: what an op may fuse with.
#pragma once

#include "graph/graph.h"
#include "graph/op_registry.h"

namespace tessel::fusion {

using graph::OpPattern;  // graph/op_registry.h
const char* patternName(OpPattern p);
OpPattern patternOf(const graph::Graph& g, const graph::Node& n);

// Ops that are views of their input in row-major storage (no kernel needed).
bool isView(const graph::Node& n);

}  // namespace tessel::fusion
