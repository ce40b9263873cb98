#include "graph/resize_plan.h"

#include <algorithm>
#include <cmath>

#include "graph/shape_utils.h"

namespace tessel::graph {

namespace {

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw GraphError(n.describe() + ": " + what);
}

[[noreturn]] void unsupported(const Node& n, const std::string& what) {
  throw UnsupportedError(n.describe() + ": " + what + " is not supported");
}

std::string modeOf(const Node& n) {
  const std::string mode = n.attrString("mode", "nearest");
  return mode == "bilinear" ? "linear" : mode;  // Upsample's older spelling
}

// The input coordinate output index i maps to, as ONNX's reference computes
// it (in doubles; `scale` is the float given or out/in; `outWidth` is
// scale x in, not rounded).
double sourceCoordinate(const std::string& mode, int64_t i, double scale, int64_t in, int64_t out) {
  const double outWidth = scale * double(in);
  const double x = double(i);
  if (mode == "align_corners") return outWidth == 1 ? 0.0 : x * double(in - 1) / (outWidth - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;  // opset 11 only
  if (mode == "pytorch_half_pixel") return outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "half_pixel_symmetric") {
    const double adjustment = double(out) / outWidth, center = double(in) / 2;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  return (x + 0.5) / scale - 0.5;  // half_pixel
}

// Nearest: ONNX takes the left neighbour floor(x) or the right one floor(x) + 1
// by the fractional part r in (0, 1] (an integer x has r = 1: x itself).
int64_t nearestIndex(const std::string& rounding, double x) {
  const double fl = std::floor(x);
  const double r = x == fl ? 1.0 : x - fl;
  bool right;
  if (rounding == "round_prefer_ceil")
    right = r >= 0.5;
  else if (rounding == "floor")
    right = r == 1.0;
  else if (rounding == "ceil")
    right = true;
  else  // round_prefer_floor
    right = r > 0.5;
  return int64_t(fl) + (right ? 1 : 0) - (x == fl ? 1 : 0);
}

ResizeAxis planAxis(const Node& n, bool linear, int64_t in, int64_t out, double scale) {
  const std::string coordinates = n.attrString("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = n.attrString("nearest_mode", "round_prefer_floor");
  ResizeAxis a;
  a.inSize = in;
  a.outSize = out;
  a.scale = scale;
  a.identity = in == out;
  for (int64_t i = 0; i < out; ++i) {
    const double x = sourceCoordinate(coordinates, i, scale, in, out);
    const double fl = std::floor(x);
    a.source.push_back(linear ? int64_t(fl) : nearestIndex(rounding, x));
    if (linear) a.weight.push_back(x - fl);
    a.identity = a.identity && std::clamp<int64_t>(a.source.back(), 0, in - 1) == i && (!linear || x == fl);
  }
  return a;
}

}  // namespace

std::vector<int64_t> ResizeAxis::reads(int64_t offset) const {
  std::vector<int64_t> out;
  for (int64_t s : source)
    out.push_back(std::clamp<int64_t>(s + offset, 0, inSize - 1));
  return out;
}

void checkResizeSupported(const Node& n) {
  const std::string mode = modeOf(n);
  if (mode != "nearest" && mode != "linear") unsupported(n, "mode '" + mode + "'");
  const std::string coordinates = n.attrString("coordinate_transformation_mode", "half_pixel");
  if (coordinates == "tf_crop_and_resize") unsupported(n, "coordinate_transformation_mode 'tf_crop_and_resize'");
  if (coordinates != "half_pixel" && coordinates != "half_pixel_symmetric" && coordinates != "pytorch_half_pixel" &&
      coordinates != "align_corners" && coordinates != "asymmetric" && coordinates != "tf_half_pixel_for_nn")
    fail(n, "unknown coordinate_transformation_mode '" + coordinates + "'");
  const std::string rounding = n.attrString("nearest_mode", "round_prefer_floor");
  if (mode == "nearest" && rounding != "round_prefer_floor" && rounding != "round_prefer_ceil" && rounding != "floor" &&
      rounding != "ceil")
    fail(n, "unknown nearest_mode '" + rounding + "'");
  const std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail(n, "unknown keep_aspect_ratio_policy '" + policy + "'");
}

ResizePlan planResize(const Node& n, const std::vector<int64_t>& in, const std::optional<std::vector<float>>& scales,
                      const std::optional<std::vector<int64_t>>& sizes) {
  checkResizeSupported(n);
  const size_t rank = in.size();
  std::vector<int64_t> axes = n.attrInts("axes");
  if (axes.empty())
    for (size_t d = 0; d < rank; ++d)
      axes.push_back(int64_t(d));
  for (int64_t& a : axes)
    a = normaliseAxis(n, a, int64_t(rank));
  ResizePlan p;
  p.linear = modeOf(n) == "linear";
  std::vector<double> scale(rank, 1.0);
  p.outShape = in;
  if (sizes && !sizes->empty()) {
    if (sizes->size() != axes.size())
      fail(n, "sizes " + shapeString(*sizes) + " must have " + std::to_string(axes.size()) + " entries");
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = size_t(axes[i]);
      if ((*sizes)[i] <= 0) fail(n, "sizes " + shapeString(*sizes) + " must be positive");
      p.outShape[d] = (*sizes)[i];
      scale[d] = double(p.outShape[d]) / double(in[d]);
    }
    const std::string policy = n.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch") {
      double s = scale[size_t(axes[0])];
      for (int64_t a : axes)
        s = policy == "not_larger" ? std::min(s, scale[size_t(a)]) : std::max(s, scale[size_t(a)]);
      for (int64_t a : axes) {
        scale[size_t(a)] = s;
        p.outShape[size_t(a)] = int64_t(s * double(in[size_t(a)]) + 0.5);
      }
    }
  } else if (scales && !scales->empty()) {
    if (scales->size() != axes.size())
      fail(n, "scales has " + std::to_string(scales->size()) + " entries, needs " + std::to_string(axes.size()));
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = size_t(axes[i]);
      const double s = (*scales)[i];
      if (!(s > 0) || !std::isfinite(s)) fail(n, "scale " + std::to_string(s) + " must be positive and finite");
      scale[d] = s;
      p.outShape[d] = int64_t(s * double(in[d]));
      if (p.outShape[d] <= 0) fail(n, "scale " + std::to_string(s) + " leaves axis " + std::to_string(d) + " empty");
    }
  } else {
    fail(n, "needs constant scales or sizes");
  }
  if (p.linear && n.attrInt("antialias", 0) != 0)
    for (size_t d = 0; d < rank; ++d)
      if (scale[d] < 1) unsupported(n, "antialiased downscaling");
  for (size_t d = 0; d < rank; ++d)
    p.axes.push_back(planAxis(n, p.linear, in[d], p.outShape[d], scale[d]));
  return p;
}

}  // namespace tessel::graph
