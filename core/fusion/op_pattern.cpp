#include "fusion/op_pattern.h"

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
  const graph::OpDef* d = graph::findOp(n.op);
  if (!d) return OpPattern::Opaque;
  if (d->broadcasts) {
    // Element-wise when every input has the output's shape, else broadcast.
    const auto& out = g.values.count(n.outputs.at(0)) ? g.value(n.outputs[0]).shape : std::vector<int64_t>{};
    for (const std::string& in : n.inputs)
      if (!in.empty() && g.values.count(in) && g.value(in).shape != out) return OpPattern::Broadcast;
  }
  return d->pattern;
}

bool isView(const graph::Node& n) {
  const graph::OpDef* d = graph::findOp(n.op);
  return d && d->view;
}

}  // namespace tessel::fusion
