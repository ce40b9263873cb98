// Op patterns, as in TVM's FuseOps and AutoGTCO: what an op may fuse with.
#pragma once

#include "graph/graph.h"

namespace tessel::fusion {

enum class OpPattern {
  ElementWise,      // out[i] = f(in[i]): relu, add of same shapes, ...
  Broadcast,        // element-wise with broadcasting (bias add, batch norm)
  Injective,        // each output element from one input element: reshape, transpose, slice, ...
  Reduction,        // reduces axes: softmax, layer norm, reduce_mean, global pooling
  OutEWiseFusable,  // heavy ops whose output can take element-wise epilogues: conv, matmul, pooling
  Opaque,           // never fused
};
const char* patternName(OpPattern p);
OpPattern patternOf(const graph::Graph& g, const graph::Node& n);

// Ops that are views of their input in row-major storage (no kernel needed).
bool isView(const graph::Node& n);

}  // namespace tessel::fusion
