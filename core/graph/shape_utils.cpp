#include "graph/shape_utils.h"

#include <algorithm>
#include <limits>

namespace tessel::graph {

std::string shapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int64_t normaliseAxis(const Node& n, int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    throw GraphError(n.describe() + ": " + what + " " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> broadcastShapes(const Node& n, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1)
      out[i] = da;
    else if (da == 1)
      out[i] = db;
    else
      throw GraphError(n.describe() + ": shapes " + shapeString(a) + " and " + shapeString(b) + " cannot be broadcast");
  }
  return out;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

std::vector<int64_t> broadcastOffsets(const std::vector<int64_t>& out, const std::vector<int64_t>& in) {
  int64_t total = 1;
  for (int64_t d : out)
    total *= d;
  std::vector<int64_t> inStrides = rowMajorStrides(in);
  size_t lead = out.size() - in.size();
  std::vector<int64_t> stride(out.size(), 0);
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1) stride[lead + i] = inStrides[i];
  std::vector<int64_t> offsets(size_t(std::max<int64_t>(total, 0)));
  std::vector<int64_t> idx(out.size(), 0);
  int64_t off = 0;
  for (int64_t e = 0; e < total; ++e) {
    offsets[size_t(e)] = off;
    for (size_t d = out.size(); d-- > 0;) {
      off += stride[d];
      if (++idx[d] < out[d]) break;
      off -= stride[d] * out[d];
      idx[d] = 0;
    }
  }
  return offsets;
}

SliceRange sliceRange(int64_t dim, int64_t start, int64_t end, int64_t step) {
  SliceRange r;
  r.step = step;
  if (start < 0) start = start < -dim ? -1 : start + dim;  // -1: before the first, clamped below
  if (end < 0) end = end < -dim ? -1 : end + dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, -1, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  r.start = start;
  return r;
}

std::vector<SliceRange> sliceRanges(const Node& n, const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                                    std::vector<int64_t> axes, std::vector<int64_t> steps) {
  int64_t rank = int64_t(shape.size());
  if (starts.size() != ends.size()) throw GraphError(n.describe() + ": starts and ends have different lengths");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    throw GraphError(n.describe() + ": starts, ends, axes and steps must have the same length");
  std::vector<SliceRange> ranges(shape.size());
  std::vector<bool> seen(shape.size(), false);
  for (size_t d = 0; d < shape.size(); ++d)
    ranges[d] = {0, 1, shape[d]};
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t axis = normaliseAxis(n, axes[i], rank);
    if (seen[size_t(axis)]) throw GraphError(n.describe() + ": axis " + std::to_string(axis) + " is sliced twice");
    seen[size_t(axis)] = true;
    if (steps[i] == 0) throw GraphError(n.describe() + ": a step is 0");
    ranges[size_t(axis)] = sliceRange(shape[size_t(axis)], starts[i], ends[i], steps[i]);
  }
  return ranges;
}

std::vector<SliceRange> sliceOf(const Node& n, const std::vector<int64_t>& shape,
                                const std::function<std::vector<int64_t>(size_t input, const char* what)>& ints) {
  auto present = [&](size_t i) { return i < n.inputs.size() && !n.inputs[i].empty(); };
  std::vector<int64_t> starts, ends, axes, steps;
  if (present(1)) {
    starts = ints(1, "starts");
    ends = ints(2, "ends");
    if (present(3)) axes = ints(3, "axes");
    if (present(4)) steps = ints(4, "steps");
  } else {
    starts = n.attrInts("starts");
    ends = n.attrInts("ends");
    axes = n.attrInts("axes");
  }
  return sliceRanges(n, shape, starts, ends, axes, steps);
}

DType dtypeFromOnnx(int64_t code) {
  switch (code) {
    case 1:
      return DType::Float32;
    case 6:
      return DType::Int32;
    case 7:
      return DType::Int64;
    case 9:
      return DType::Bool;
    case 11:
      return DType::Float64;
    default:
      return DType::Other;
  }
}

Window windowOf(const Node& n, const std::vector<int64_t>& inShape, const std::vector<int64_t>& kernel, bool ceilMode) {
  size_t sp = inShape.size() - 2;
  Window w;
  w.kernel = kernel;
  w.stride = n.attrInts("strides", std::vector<int64_t>(sp, 1));
  w.dilation = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
  if (w.kernel.size() != sp || w.stride.size() != sp || w.dilation.size() != sp || pads.size() != 2 * sp)
    throw GraphError(n.describe() + ": kernel_shape/strides/dilations/pads do not match " + std::to_string(sp) +
                     " spatial dims");
  std::string autoPad = n.attrString("auto_pad", "NOTSET");
  for (size_t d = 0; d < sp; ++d) {
    int64_t in = inShape[2 + d], s = w.stride[d], eff = w.dilation[d] * (w.kernel[d] - 1) + 1;
    if (s <= 0 || w.dilation[d] <= 0 || w.kernel[d] <= 0)
      throw GraphError(n.describe() + ": strides, dilations and kernel must be positive");
    int64_t pb = pads[d], pe = pads[sp + d], o;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      o = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (o - 1) * s + eff - in);
      pb = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (autoPad == "VALID")
        pb = pe = 0;
      else if (autoPad != "NOTSET")
        throw GraphError(n.describe() + ": unknown auto_pad '" + autoPad + "'");
      int64_t num = in + pb + pe - eff;
      if (num < 0) throw GraphError(n.describe() + ": the window does not fit the padded input");
      o = (ceilMode ? (num + s - 1) / s : num / s) + 1;
      if (ceilMode && (o - 1) * s >= in + pb) --o;
    }
    w.padBegin.push_back(pb);
    w.padEnd.push_back(pe);
    w.outSize.push_back(o);
  }
  return w;
}

}  // namespace tessel::graph
