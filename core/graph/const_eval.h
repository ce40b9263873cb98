// Evaluation of single nodes on constant tensors: what constant folding and
// shape inference (for Reshape/Slice/... shape inputs computed from Shape
// chains) need. Only small, data-movement and element-wise ops.
#pragma once

#include <optional>
#include <vector>

#include "graph/graph.h"

namespace tessel::graph {

// A tensor with values: `ints` for Int64/Int32/Bool, `floats` for Float32.
struct ConstTensor {
  ValueInfo info;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  bool isInt() const { return info.dtype == DType::Int64 || info.dtype == DType::Int32 || info.dtype == DType::Bool; }
};

// The initializer's values (it must have data).
ConstTensor constFromInitializer(const Initializer& init);
Initializer initializerFromConst(const ConstTensor& t);

// The value of a Constant node given by value_float(s)/value_int(s) (or
// "value" holding a number or list); GraphError if it has none of them.
ConstTensor constantNodeValue(const Node& n);

// Evaluates `n`: `in[i]` is its i-th input's value (nullptr when absent or not
// constant), `inInfo[i]` its shape (nullptr when absent), `outInfo` the output
// shapes from inferShapes. Shape needs only inInfo; the others need every
// present input constant. nullopt when the op is not evaluated here.
std::optional<std::vector<ConstTensor>> evaluateNode(const Node& n, const std::vector<const ConstTensor*>& in,
                                                     const std::vector<const ValueInfo*>& inInfo,
                                                     const std::vector<ValueInfo>& outInfo);

}  // namespace tessel::graph
