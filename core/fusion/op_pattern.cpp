#include "fusion/op_pattern.h"

#include <set>

namespace tessel::fusion {

const char* patternName(OpPattern p) {
  switch (p) {
    case OpPattern::ElementWise:
      return "element-wise";
    case OpPattern::Broadcast:
      return "broadcast";
    case OpPattern::Injective:
      return "injective";
    case OpPattern::Reduction:
      return "reduction";
    case OpPattern::OutEWiseFusable:
      return "complex-out-fusable";
    case OpPattern::Opaque:
      break;
  }
  return "opaque";
}

OpPattern patternOf(const graph::Graph& g, const graph::Node& n) {
  static const std::set<std::string> unary = {"Relu", "Clip", "Sigmoid", "Tanh", "Erf",     "Gelu",       "Sqrt",
                                              "Exp",  "Neg",  "Abs",     "Cast", "Dropout", "Reciprocal", "Identity"};
  static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  static const std::set<std::string> injective = {"Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                                                  "Concat",  "Slice",   "Gather",    "Split",   "Pad"};
  static const std::set<std::string> reduction = {"Softmax", "LayerNormalization", "ReduceMean", "GlobalAveragePool"};
  static const std::set<std::string> heavy = {"Conv", "Gemm", "MatMul", "MaxPool", "AveragePool"};
  if (unary.count(n.op)) return OpPattern::ElementWise;
  if (binary.count(n.op)) {
    // Element-wise when every input has the output's shape, else broadcast.
    const auto& out = g.values.count(n.outputs.at(0)) ? g.value(n.outputs[0]).shape : std::vector<int64_t>{};
    for (const std::string& in : n.inputs)
      if (!in.empty() && g.values.count(in) && g.value(in).shape != out) return OpPattern::Broadcast;
    return OpPattern::ElementWise;
  }
  if (n.op == "BatchNormalization") return OpPattern::Broadcast;
  if (injective.count(n.op)) return OpPattern::Injective;
  if (reduction.count(n.op)) return OpPattern::Reduction;
  if (heavy.count(n.op)) return OpPattern::OutEWiseFusable;
  return OpPattern::Opaque;
}

bool isView(const graph::Node& n) {
  return n.op == "Reshape" || n.op == "Flatten" || n.op == "Squeeze" || n.op == "Unsqueeze" || n.op == "Identity" ||
         n.op == "Dropout";
}

}  // namespace tessel::fusion
