// Small shape helpers shared by shape inference, constant evaluation and the
// folding passes: axis normalisation, broadcasting, Slice ranges, strides.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::graph {

// "[1, 3, 224, 224]".
std::string shapeString(const std::vector<int64_t>& shape);

// `axis` in [-rank, rank) mapped to [0, rank); GraphError naming `n` otherwise.
int64_t normaliseAxis(const Node& n, int64_t axis, int64_t rank, const char* what = "axis");

// Numpy-style multidirectional broadcast of two shapes; GraphError naming `n`.
std::vector<int64_t> broadcastShapes(const Node& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Row-major strides of `shape`.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape);

// For every element of `out` (row-major), the flat offset of the element of
// `in` that broadcasts to it (`in` is right-aligned against `out`).
std::vector<int64_t> broadcastOffsets(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

// One axis of an ONNX Slice after clamping: first index, step and count.
struct SliceRange {
  int64_t start = 0;
  int64_t step = 1;
  int64_t count = 0;
};
// ONNX Slice semantics (opset 10+): negative starts/ends count from the end,
// then clamp to [0, dim] (step > 0) or [-1, dim - 1] (step < 0).
SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step);
// The ranges of every axis of `shape` for a Slice with these starts/ends and
// optional axes/steps (empty: all leading axes, steps of 1). GraphError naming
// `n` for mismatched lengths, a repeated axis or a zero step.
std::vector<SliceRange> sliceRanges(const Node& n, const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                                    std::vector<int64_t> axes, std::vector<int64_t> steps);

// Slice's arguments, decoded once for every pass: inputs 1-4 (opset 10+;
// `ints(i, what)` reads constant integer input i) or the attributes of
// older opsets; then the ranges.
std::vector<SliceRange> sliceOf(const Node& n, const std::vector<int64_t>& shape,
                                const std::function<std::vector<int64_t>(size_t input, const char* what)>& ints);

// The spatial parameters of a Conv or pooling node over input shape
// `inShape` (N, C, spatial...): auto_pad resolved, ceil_mode applied to the
// output extents. GraphError naming `n` for mismatched lengths, non-positive
// values or a window that does not fit.
struct Window {
  std::vector<int64_t> kernel, stride, dilation, padBegin, padEnd, outSize;
};
Window windowOf(const Node& n, const std::vector<int64_t>& inShape, const std::vector<int64_t>& kernel, bool ceilMode);

// ONNX TensorProto data type code (Cast's `to`) to DType.
DType dtypeFromOnnx(int64_t code);

}  // namespace tessel::graph
