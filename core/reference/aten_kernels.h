// The LibTorch reference executor's kernels: each graph node as one or a few
// ATen calls. Internal to core/reference/ (it includes LibTorch's headers):
// libtorch_executor.cpp holds the element-wise ops, the dispatch and the
// executor, aten_nn_kernels.cpp convolution, pooling, matmul, normalisation
// and reductions, aten_data_kernels.cpp shapes, data movement and Resize.
#pragma once

#include <ATen/ATen.h>

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "graph/const_eval.h"
#include "graph/graph.h"
#include "graph/shape_utils.h"

namespace tessel::reference::aten {

using graph::GraphError;
using graph::Node;
using Shape = std::vector<int64_t>;
using Tensors = std::vector<at::Tensor>;
// One node, compiled: its input tensors (undefined for an absent optional
// input) to its output tensors.
using Kernel = std::function<Tensors(const Tensors&)>;

[[noreturn]] inline void fail(const Node& n, const std::string& what) {
  throw GraphError(n.describe() + ": " + what);
}

inline at::ScalarType scalarType(graph::DType t) {
  switch (t) {
    case graph::DType::Float32:
      return at::kFloat;
    case graph::DType::Int64:
    case graph::DType::Int32:
      return at::kLong;  // integers are shapes and indices: one type serves
    case graph::DType::Bool:
      return at::kBool;
    case graph::DType::Float64:
      return at::kDouble;
    case graph::DType::Other:
      break;
  }
  return at::kFloat;
}

inline at::Tensor floatTensor(const Shape& shape, const std::vector<float>& values) {
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  if (!values.empty()) std::memcpy(t.data_ptr<float>(), values.data(), values.size() * sizeof(float));
  return t;
}

inline at::Tensor intTensor(const Shape& shape, const std::vector<int64_t>& values, at::ScalarType type = at::kLong) {
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(at::kLong));
  if (!values.empty()) std::memcpy(t.data_ptr<int64_t>(), values.data(), values.size() * sizeof(int64_t));
  return type == at::kLong ? t : t.to(type);
}

inline at::Tensor constTensor(const graph::ConstTensor& c) {
  if (c.isInt()) return intTensor(c.info.shape, c.ints, scalarType(c.info.dtype));
  return floatTensor(c.info.shape, c.floats);
}

// The values of an integer (shape, axes, indices) tensor.
inline Shape intsOf(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous();
  const int64_t* p = l.data_ptr<int64_t>();
  return Shape(p, p + l.numel());
}

inline bool present(const Tensors& in, size_t i) {
  return i < in.size() && in[i].defined();
}

inline int64_t axisOf(const Node& n, int64_t axis, int64_t rank) {
  return graph::normaliseAxis(n, axis, rank);
}

// An attribute (older opsets) or a constant input (newer) holding a list.
inline std::optional<Shape> attrOrInput(const Node& n, const Tensors& in, const char* attr, size_t i) {
  if (n.has(attr)) return n.attrInts(attr);
  if (present(in, i)) return intsOf(in[i]);
  return std::nullopt;
}

// constant_pad_nd's list: pairs from the last axis backwards.
inline Shape torchPads(const Shape& begin, const Shape& end) {
  Shape p;
  for (size_t d = begin.size(); d-- > 0;) {
    p.push_back(begin[d]);
    p.push_back(end[d]);
  }
  return p;
}

// The kernel of a node of each family; nullopt for the ops of other families.
std::optional<Kernel> nnKernel(const Node& n);
std::optional<Kernel> dataKernel(const Node& n);

}  // namespace tessel::reference::aten
