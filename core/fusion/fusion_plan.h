// Fusion: cutting a graph into groups of nodes that run as one kernel.
// "rule" follows TVM's FuseOps by op pattern; "dp" is AutoGTCO's DPOF:
// dynamic programming over a topological order with a bounded window,
// minimising an estimated cost, never worse than the rules on that estimate.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::fusion {

struct FusionPlan {
  std::string strategy;                     // none | rule | dp
  std::vector<std::vector<size_t>> groups;  // node indices; groups and their nodes in execution order
  double estimatedSeconds = 0;              // of the whole plan, on the estimate below
};

// The estimate: a kernel costs its launch, its memory traffic (inputs it
// reads and outputs it writes, once each) at a bandwidth, and its arithmetic
// at a peak rate, whichever of the last two is larger (a roofline).
struct CostEstimate {
  double bandwidthBytesPerSecond = 20e9;
  double peakFlopsPerSecond = 300e9;
  double launchSeconds = 5e-6;
};
double estimateGroupSeconds(const graph::Graph& g, const std::vector<size_t>& group, const CostEstimate& c = {});
double estimatePlanSeconds(const graph::Graph& g, const FusionPlan& plan, const CostEstimate& c = {});
// Arithmetic of one node (2 per multiply-add; element-wise ops a few per element).
double nodeFlops(const graph::Graph& g, const graph::Node& n);

// The most nodes the rules fuse into one group, as TVM's FuseOps bounds its
// fusion depth (256): a longer element-wise chain is cut into groups of this
// size, so a fused expression, and the work of planning it, stay bounded.
constexpr size_t kMaxFusedNodes = 256;

FusionPlan noFusion(const graph::Graph& g);
FusionPlan ruleFusion(const graph::Graph& g, const CostEstimate& c = {});
FusionPlan dpFusion(const graph::Graph& g, int window = 8, const CostEstimate& c = {});
// By name: none | rule | dp (std::invalid_argument otherwise).
FusionPlan makeFusionPlan(const graph::Graph& g, const std::string& strategy, const CostEstimate& c = {});

// Whether nodes may form one kernel under the DP's rules: connected, at most
// one complex-out-fusable op, element-wise epilogues after it, and before a
// MatMul/Gemm a reduction/element-wise prologue (softmax + batch matmul).
bool isLegalDpGroup(const graph::Graph& g, const std::vector<size_t>& nodes);

}  // namespace tessel::fusion
