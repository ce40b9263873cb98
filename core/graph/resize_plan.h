// Resize (ONNX opsets 10-19, and the Upsample it replaced): where each output
// element reads its input, axis by axis, under ONNX's coordinate
// transformations and rounding rules. Shape inference takes the output shape
// from it, the lowering turns its tables into index expressions, and the
// reference executor uses it where ATen's interpolate has no equivalent mode.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "graph/graph.h"

namespace tessel::graph {

// One axis of a resize: output element i reads input lo[i] (nearest), or
// (1 - weight[i]) x input lo[i] + weight[i] x input hi[i] (linear). Indices
// are clamped into the input, as ONNX's edge padding does.
struct ResizeAxis {
  int64_t inSize = 0, outSize = 0;
  double scale = 1;            // as given, or outSize / inSize from sizes
  bool identity = false;       // output i reads input i: nothing to compute
  std::vector<int64_t> lo;     // per output index
  std::vector<int64_t> hi;     // linear only: min(lo + 1, inSize - 1) before clamping lo
  std::vector<double> weight;  // linear only: of hi, in [0, 1)
  // The same reads before clamping: floor(x) (linear) or the rounded x
  // (nearest). Periodic for rational scales, which the lowering relies on.
  std::vector<int64_t> unclamped;
};

struct ResizePlan {
  bool linear = false;  // else nearest
  std::vector<int64_t> outShape;
  std::vector<ResizeAxis> axes;  // one per input axis
};

// The plan of a Resize node for input shape `in`, from its constant scales
// (float per axis, or per entry of `axes`) or sizes. Throws GraphError for
// inconsistent inputs and UnsupportedError for the modes Tessel does not
// implement (cubic, tf_crop_and_resize, antialiased downscaling), naming them.
ResizePlan planResize(const Node& n, const std::vector<int64_t>& in, const std::optional<std::vector<float>>& scales,
                      const std::optional<std::vector<int64_t>>& sizes);

// Only the attribute checks of planResize (for the registry's import-time check).
void checkResizeSupported(const Node& n);

}  // namespace tessel::graph
