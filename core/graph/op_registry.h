// The ops Tessel knows, one entry per op, the way TVM attaches TOpPattern and
// FTVMCompute to an op: what it may fuse with, whether it is a view, whether
// its task has an image layout, its name in task names, its FLOP counts and
// its shape-inference rule. Passes look an op up here instead of comparing
// names; an op without an entry is unsupported everywhere. (The LibTorch
// reference in core/reference/ stays independent: it is the oracle.)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::graph {

// TVM's op patterns (FuseOps, AutoGTCO): what an op may fuse with.
enum class OpPattern {
  ElementWise,      // out[i] = f(in[i]): relu, add of same shapes, ...
  Broadcast,        // element-wise with broadcasting (bias add, batch norm)
  Injective,        // each output element from one input element: reshape, transpose, slice, ...
  Reduction,        // reduces axes: softmax, layer norm, reduce_mean, global pooling
  OutEWiseFusable,  // heavy ops whose output can take element-wise epilogues: conv, matmul, pooling
  Opaque,           // never fused
};

class ShapeInferer;  // graph/shape_inference.cpp
class TeLowerer;     // graph/te_lowering.cpp
struct ConstTensor;  // graph/const_eval.h

struct OpDef {
  std::string name;  // the ONNX op type
  OpPattern pattern = OpPattern::Opaque;
  // Element-wise over several inputs: Broadcast instead when an input's
  // shape differs from the output's.
  bool broadcasts = false;
  bool view = false;   // a view of its input in row-major storage: no kernel
  bool image = false;  // reads images (N, C, H, W): its task has a layout
  // Inputs that are image kernels (K, C, R, S), stored RSCK for NHWC: Conv's 1.
  std::vector<size_t> imageWeightInputs;
  bool constant = false;  // its output is a constant the node holds (Constant)
  // Inputs whose integer constants a frontend turns into floats (Pow's
  // exponent: the same result, and the lowering reads float constants).
  std::vector<size_t> floatConstantInputs;
  // Throws UnsupportedError naming an attribute value or form of the op
  // that Tessel does not implement (training modes, Pad's wrap mode, ...);
  // frontends call it at import, before anything runs. Null: all are.
  std::function<void(const Graph&, const Node&)> checkSupported;
  // Inputs whose values must be known when the model is loaded (Resize's
  // roi, scales and sizes): a graph input there is bound to its test data
  // as a constant by the conformance runner, like integer inputs.
  std::vector<size_t> loadTimeInputs;
  // Evaluated from its input's shape alone, constant or not (Shape).
  bool evalFromShapes = false;
  // Its part of a task's name ("conv2d"); null: the op, lower-cased.
  std::function<std::string(const Graph&, const Node&)> taskName;
  // Inputs that are buffers, not learned parameters (batch norm's running
  // mean and variance): left out of the parameter count.
  std::vector<size_t> bufferInputs;
  // Work in FLOPs, for the fusion cost estimate (0 for views).
  std::function<double(const Graph&, const Node&)> flops;
  // Multiply-add FLOPs (2 per MAC) as models publish them: Conv, Gemm and
  // MatMul only; null for the others.
  std::function<double(const Graph&, const Node&)> macFlops;
  // Output infos from the inputs' (graph/shape_inference.cpp).
  std::function<std::vector<ValueInfo>(ShapeInferer&, const Node&)> infer;
  // Its tensor expression in a subgraph (graph/te_lowering.cpp).
  std::function<void(TeLowerer&, const Node&)> lower;
  // Its value from constant inputs, into `out` (whose info is set): what
  // constant folding and shape inference evaluate at load time; false when
  // it cannot (graph/const_eval.cpp). Null: never evaluated.
  std::function<bool(const Node&, const std::vector<const ConstTensor*>& in,
                     const std::vector<const ValueInfo*>& inInfo, ConstTensor& out)>
      eval;
};

// nullptr for an op Tessel does not support.
const OpDef* findOp(const std::string& op);
// Every op, in a fixed order.
const std::vector<OpDef>& ops();

// The entry of a node's op; GraphError naming the node for an unsupported op.
const OpDef& opOf(const Node& n);
// A node's part of its task's name ("conv2d", "batch_matmul", "relu").
std::string taskNameOf(const Graph& g, const Node& n);

// Fill `infer` (shape_inference.cpp), `lower` (te_lowering.cpp) and `eval`
// (const_eval.cpp) of every op; called once by the registry.
void attachShapeRules(std::vector<OpDef>& table);
void attachLoweringRules(std::vector<OpDef>& table);
void attachConstEvalRules(std::vector<OpDef>& table);

}  // namespace tessel::graph
