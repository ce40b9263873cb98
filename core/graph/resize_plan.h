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

// One axis of a resize: output element i reads input source[i] (nearest), or
// (1 - weight[i]) x input source[i] + weight[i] x input source[i] + 1
// (linear), each index clamped into the input, as ONNX's edge padding does.
struct ResizeAxis {
  int64_t inSize = 0, outSize = 0;
  double scale = 1;       // as given, or outSize / inSize from sizes
  bool identity = false;  // output i reads input i: nothing to compute
  // floor(x) (linear) or the rounded x (nearest) of each output's source
  // coordinate x, before clamping: periodic for rational scales, which the
  // lowering relies on.
  std::vector<int64_t> source;
  std::vector<double> weight;  // linear only: of source + 1, in [0, 1)

  // The clamped input index each output reads at source + offset.
  std::vector<int64_t> reads(int64_t offset) const;
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
