// Reference kernels of the ops that move, reshape, make or resample values:
// views, slices, gathers, pads, shape ops, generators and Resize.
#include <algorithm>

#include "graph/resize_plan.h"
#include "reference/aten_kernels.h"

namespace tessel::reference::aten {

namespace {

Shape reshapeTarget(const Node& n, const at::Tensor& x, Shape target) {
  const bool allowZero = n.attrInt("allowzero", 0) != 0;
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] == 0 && !allowZero) {
      if (int64_t(i) >= x.dim()) fail(n, "shape copies a dimension the input does not have");
      target[i] = x.size(int64_t(i));
    }
  return target;
}

at::Tensor sliceAxis(const at::Tensor& x, int64_t axis, const graph::SliceRange& r) {
  const int64_t dim = x.size(axis);
  if (r.count == 0) return x.narrow(axis, 0, 0);
  if (r.step > 0) return x.slice(axis, r.start, r.start + (r.count - 1) * r.step + 1, r.step);
  // Negative steps: the same elements, read from the flipped axis.
  const int64_t start = dim - 1 - r.start, step = -r.step;
  return x.flip({axis}).slice(axis, start, start + (r.count - 1) * step + 1, step);
}

// The index along one axis of Pad's reflect / edge modes.
at::Tensor padIndices(int64_t dim, int64_t before, int64_t after, bool reflect) {
  std::vector<int64_t> idx;
  for (int64_t i = -before; i < dim + after; ++i) {
    int64_t j = i;
    if (reflect && dim > 1) {
      const int64_t period = 2 * (dim - 1);
      j = ((j % period) + period) % period;
      if (j >= dim) j = period - j;
    } else {
      j = std::clamp<int64_t>(j, 0, dim - 1);
    }
    idx.push_back(j);
  }
  return intTensor({int64_t(idx.size())}, idx);
}

Kernel padKernel(const Node& n) {
  const std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") fail(n, "mode '" + mode + "' is not supported");
  return [n, mode](const Tensors& in) -> Tensors {
    const at::Tensor& x = in[0];
    const Shape pads = present(in, 1) ? intsOf(in[1]) : n.attrInts("pads");
    Shape axes = present(in, 3) ? intsOf(in[3]) : Shape{};
    if (axes.empty())
      for (int64_t d = 0; d < x.dim(); ++d)
        axes.push_back(d);
    if (pads.size() != 2 * axes.size()) fail(n, "pads do not match the axes");
    Shape begin(size_t(x.dim()), 0), end(size_t(x.dim()), 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      const size_t d = size_t(axisOf(n, axes[i], x.dim()));
      begin[d] = pads[i];
      end[d] = pads[i + axes.size()];
    }
    if (mode == "constant") {
      double value = n.attrFloat("value", 0.0);
      if (present(in, 2) && in[2].numel() > 0) value = in[2].to(at::kDouble).reshape({-1})[0].item<double>();
      return {at::constant_pad_nd(x, torchPads(begin, end), value)};
    }
    at::Tensor y = x;
    for (int64_t d = 0; d < x.dim(); ++d) {
      if (begin[size_t(d)] == 0 && end[size_t(d)] == 0) continue;
      if (begin[size_t(d)] < 0 || end[size_t(d)] < 0) fail(n, "negative pads need mode 'constant'");
      y = y.index_select(d, padIndices(y.size(d), begin[size_t(d)], end[size_t(d)], mode == "reflect"));
    }
    return {y};
  };
}

Kernel splitKernel(const Node& n) {
  return [n](const Tensors& in) -> Tensors {
    const at::Tensor& x = in[0];
    const int64_t axis = axisOf(n, n.attrInt("axis", 0), x.dim());
    const int64_t dim = x.size(axis);
    const int64_t count = int64_t(n.outputs.size());
    Shape sizes;
    if (auto s = attrOrInput(n, in, "split", 1); s && !s->empty()) {
      sizes = *s;
    } else if (n.has("num_outputs")) {
      const int64_t chunk = (dim + count - 1) / count;
      for (int64_t i = 0; i < count; ++i)
        sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
    } else {
      if (dim % count) fail(n, "the axis does not split evenly");
      sizes.assign(size_t(count), dim / count);
    }
    return at::split_with_sizes(x, sizes, axis);
  };
}

// Ops that make or repeat values: ConstantOfShape, Range, Expand, Tile, ScatterND, Size.
std::optional<Kernel> generatorKernel(const Node& n) {
  const std::string& op = n.op;
  if (op == "ConstantOfShape") {
    const graph::DType type = graph::dtypeFromOnnx(n.attrInt("value_type", 1));
    const bool isInt = type != graph::DType::Float32;
    const int64_t iv = isInt && n.has("value") ? n.attrInt("value", 0) : 0;
    const double fv = !isInt && n.has("value") ? n.attrFloat("value", 0) : 0;
    const at::ScalarType st = scalarType(type);
    return [isInt, iv, fv, st](const Tensors& in) -> Tensors {
      const Shape shape = intsOf(in[0]);
      return {isInt ? at::full(shape, iv, at::TensorOptions().dtype(st)) : at::full(shape, fv)};
    };
  }
  if (op == "Range")
    return [](const Tensors& in) -> Tensors {
      const at::ScalarType t = in[0].scalar_type();
      return {at::arange(in[0].item(), in[1].item(), in[2].item(), at::TensorOptions().dtype(t))};
    };
  if (op == "Expand")
    return [](const Tensors& in) -> Tensors {
      // ONNX broadcasts both ways: the result of multiplying by ones of the shape.
      const Shape shape = intsOf(in[1]);
      return {in[0] * at::ones(shape, in[0].options())};
    };
  if (op == "Tile") return [](const Tensors& in) -> Tensors { return {in[0].repeat(intsOf(in[1]))}; };
  if (op == "ScatterND")
    return [](const Tensors& in) -> Tensors {
      at::Tensor out = in[0].clone();
      const at::Tensor idx = in[1].to(at::kLong).contiguous();
      const int64_t k = idx.size(-1);
      const at::Tensor flatIdx = idx.reshape({-1, k});
      Shape sliceShape(in[0].sizes().begin() + k, in[0].sizes().end());
      Shape updShape = {flatIdx.size(0)};
      updShape.insert(updShape.end(), sliceShape.begin(), sliceShape.end());
      const at::Tensor upd = in[2].reshape(updShape);
      for (int64_t t = 0; t < flatIdx.size(0); ++t) {
        at::Tensor view = out;
        for (int64_t d = 0; d < k; ++d)
          view = view.select(0, flatIdx[t][d].item<int64_t>());
        view.copy_(upd[t]);
      }
      return {out};
    };
  if (op == "Trilu") {
    const bool upper = n.attrInt("upper", 1) != 0;
    return [upper](const Tensors& in) -> Tensors {
      const int64_t k = present(in, 1) ? intsOf(in[1]).at(0) : 0;
      return {upper ? at::triu(in[0], k) : at::tril(in[0], k)};
    };
  }
  if (op == "Size") return [](const Tensors& in) -> Tensors { return {intTensor({}, {in[0].numel()})}; };
  return std::nullopt;
}

// ATen's interpolate, where it computes what ONNX's Resize does: resized
// axes after N and C; linear under half_pixel, pytorch_half_pixel (outputs
// over 1) or align_corners (whole scaled widths); nearest under asymmetric
// flooring by a power of two, where ATen's float scale is exact. Elsewhere
// nullopt. Kept apart from the plan so that it checks the lowering.
std::optional<at::Tensor> atenInterpolate(const Node& n, const at::Tensor& x, const graph::ResizePlan& plan) {
  const int64_t rank = x.dim();
  if (rank < 3 || rank > 5 || !plan.axes[0].identity || !plan.axes[1].identity) return std::nullopt;
  const std::string coords = n.attrString("coordinate_transformation_mode", "half_pixel");
  const Shape out(plan.outShape.begin() + 2, plan.outShape.end());
  bool fits = true;
  for (size_t d = 2; d < plan.axes.size(); ++d) {
    const graph::ResizeAxis& a = plan.axes[d];
    if (plan.linear) {
      const bool whole = a.scale * double(a.inSize) == double(a.outSize);
      fits = fits && (coords == "half_pixel" || (coords == "pytorch_half_pixel" && a.outSize > 1) ||
                      (coords == "align_corners" && whole));
    } else {
      const int64_t k = a.outSize / a.inSize;
      fits = fits && coords == "asymmetric" && n.attrString("nearest_mode", "") == "floor" &&
             a.outSize == k * a.inSize && (k & (k - 1)) == 0 && a.scale == double(k);
    }
  }
  if (!fits) return std::nullopt;
  const bool corners = coords == "align_corners";
  // The scales ONNX's coordinates use (as given, or out / in): ATen's default is out / in.
  std::vector<c10::optional<double>> s;
  for (size_t d = 2; d < plan.axes.size(); ++d)
    s.push_back(plan.axes[d].scale);
  if (plan.linear) {
    if (rank == 3) return at::upsample_linear1d(x, out, corners, s[0]);
    if (rank == 4) return at::upsample_bilinear2d(x, out, corners, s[0], s[1]);
    return at::upsample_trilinear3d(x, out, corners, s[0], s[1], s[2]);
  }
  if (rank == 3) return at::upsample_nearest1d(x, out);
  if (rank == 4) return at::upsample_nearest2d(x, out);
  return at::upsample_nearest3d(x, out);
}

// Resize: ATen's interpolate where it matches, else a gather (and a blend,
// for linear) along each resized axis from the resize plan.
std::optional<Kernel> resizeKernel(const Node& n) {
  if (n.op != "Resize") return std::nullopt;
  return [n](const Tensors& in) -> Tensors {
    const at::Tensor& x = in[0];
    std::optional<std::vector<float>> scales;
    if (present(in, 2) && in[2].numel() > 0) {
      const at::Tensor s = in[2].to(at::kFloat).contiguous();
      scales = std::vector<float>(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
    }
    std::optional<Shape> sizes;
    if (present(in, 3) && in[3].numel() > 0) sizes = intsOf(in[3]);
    const graph::ResizePlan plan = graph::planResize(n, Shape(x.sizes().begin(), x.sizes().end()), scales, sizes);
    if (std::optional<at::Tensor> y = atenInterpolate(n, x, plan)) return {*y};
    at::Tensor y = x;
    for (size_t d = 0; d < plan.axes.size(); ++d) {
      const graph::ResizeAxis& a = plan.axes[d];
      if (a.identity) continue;
      const int64_t axis = int64_t(d);
      at::Tensor r = y.index_select(axis, intTensor({a.outSize}, a.reads(0)));
      if (plan.linear) {
        Shape along(size_t(y.dim()), 1);
        along[d] = a.outSize;
        const at::Tensor w = at::tensor(a.weight, at::kDouble).to(at::kFloat).reshape(along);
        r = r * (1 - w) + y.index_select(axis, intTensor({a.outSize}, a.reads(1))) * w;
      }
      y = r;
    }
    return {y};
  };
}

}  // namespace

std::optional<Kernel> dataKernel(const Node& n) {
  if (std::optional<Kernel> k = generatorKernel(n)) return k;
  if (std::optional<Kernel> k = resizeKernel(n)) return k;
  const std::string& op = n.op;
  if (op == "Flatten") {
    const int64_t axisAttr = n.attrInt("axis", 1);
    return [n, axisAttr](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      int64_t axis = axisAttr < 0 ? axisAttr + x.dim() : axisAttr;
      if (axis < 0 || axis > x.dim()) fail(n, "axis is out of range");
      int64_t outer = 1;
      for (int64_t d = 0; d < axis; ++d)
        outer *= x.size(d);
      return {x.reshape({outer, outer == 0 ? 0 : x.numel() / outer})};
    };
  }
  if (op == "Reshape")
    return [n](const Tensors& in) -> Tensors {
      const Shape target = present(in, 1) ? intsOf(in[1]) : n.attrInts("shape");
      return {in[0].reshape(reshapeTarget(n, in[0], target))};
    };
  if (op == "Transpose") {
    const Shape permAttr = n.attrInts("perm");
    return [permAttr](const Tensors& in) -> Tensors {
      Shape perm = permAttr;
      if (perm.empty())
        for (int64_t d = in[0].dim(); d-- > 0;)
          perm.push_back(d);
      return {in[0].permute(perm)};
    };
  }
  if (op == "Concat") {
    const int64_t axisAttr = n.attrInt("axis", 0);
    return [n, axisAttr](const Tensors& in) -> Tensors { return {at::cat(in, axisOf(n, axisAttr, in.at(0).dim()))}; };
  }
  if (op == "Slice")
    return [n](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      Shape starts, ends, axes, steps;
      if (n.inputs.size() >= 3) {
        starts = intsOf(in[1]);
        ends = intsOf(in[2]);
        if (present(in, 3)) axes = intsOf(in[3]);
        if (present(in, 4)) steps = intsOf(in[4]);
      } else {
        starts = n.attrInts("starts");
        ends = n.attrInts("ends");
        axes = n.attrInts("axes");
      }
      const Shape shape(x.sizes().begin(), x.sizes().end());
      const std::vector<graph::SliceRange> ranges = graph::sliceRanges(n, shape, starts, ends, axes, steps);
      at::Tensor y = x;
      for (size_t d = 0; d < ranges.size(); ++d)
        if (ranges[d].start != 0 || ranges[d].step != 1 || ranges[d].count != shape[d])
          y = sliceAxis(y, int64_t(d), ranges[d]);
      return {y};
    };
  if (op == "Gather") {
    const int64_t axisAttr = n.attrInt("axis", 0);
    return [n, axisAttr](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      const int64_t axis = axisOf(n, axisAttr, x.dim());
      at::Tensor idx = in[1].to(at::kLong);
      idx = at::where(idx < 0, idx + x.size(axis), idx);
      Shape shape(x.sizes().begin(), x.sizes().begin() + axis);
      shape.insert(shape.end(), idx.sizes().begin(), idx.sizes().end());
      shape.insert(shape.end(), x.sizes().begin() + axis + 1, x.sizes().end());
      return {x.index_select(axis, idx.reshape({-1})).reshape(shape)};
    };
  }
  if (op == "Squeeze")
    return [n](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      const Shape axes = attrOrInput(n, in, "axes", 1).value_or(Shape{});
      std::vector<bool> drop(size_t(x.dim()), false);
      for (int64_t d = 0; d < x.dim(); ++d)
        drop[size_t(d)] = axes.empty() && x.size(d) == 1;
      for (int64_t a : axes) {
        const int64_t d = axisOf(n, a, x.dim());
        if (x.size(d) != 1) fail(n, "cannot squeeze an axis of size " + std::to_string(x.size(d)));
        drop[size_t(d)] = true;
      }
      Shape out;
      for (int64_t d = 0; d < x.dim(); ++d)
        if (!drop[size_t(d)]) out.push_back(x.size(d));
      return {x.reshape(out)};
    };
  if (op == "Unsqueeze")
    return [n](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      const Shape axes = attrOrInput(n, in, "axes", 1).value_or(Shape{});
      const int64_t rank = x.dim() + int64_t(axes.size());
      std::vector<bool> inserted(size_t(rank), false);
      for (int64_t a : axes)
        inserted[size_t(axisOf(n, a, rank))] = true;
      Shape out;
      int64_t next = 0;
      for (int64_t d = 0; d < rank; ++d)
        out.push_back(inserted[size_t(d)] ? 1 : x.size(next++));
      return {x.reshape(out)};
    };
  if (op == "Split") return splitKernel(n);
  if (op == "Pad") return padKernel(n);
  if (op == "Shape") {
    const int64_t startAttr = n.attrInt("start", 0);
    const bool hasEnd = n.has("end");
    const int64_t endAttr = n.attrInt("end", 0);
    return [startAttr, hasEnd, endAttr](const Tensors& in) -> Tensors {
      const int64_t rank = in[0].dim();
      int64_t start = startAttr < 0 ? startAttr + rank : startAttr;
      int64_t end = !hasEnd ? rank : endAttr < 0 ? endAttr + rank : endAttr;
      start = std::clamp<int64_t>(start, 0, rank);
      end = std::clamp<int64_t>(end, start, rank);
      const Shape dims(in[0].sizes().begin() + start, in[0].sizes().begin() + end);
      return {intTensor({int64_t(dims.size())}, dims)};
    };
  }
  if (op == "Cast") {
    const graph::DType to = graph::dtypeFromOnnx(n.attrInt("to", 1));
    if (to == graph::DType::Other) fail(n, "cast to ONNX data type " + std::to_string(n.attrInt("to", 1)));
    const at::ScalarType type = scalarType(to);
    return [type](const Tensors& in) -> Tensors { return {in[0].to(type)}; };
  }
  if (op == "Identity") return [](const Tensors& in) -> Tensors { return {in[0]}; };
  if (op == "Dropout")  // inference: the identity, and a mask of ones
    return [](const Tensors& in) -> Tensors { return {in[0], at::ones_like(in[0], at::kBool)}; };
  if (op == "Constant") {
    const at::Tensor value = constTensor(graph::constantNodeValue(n));
    return [value](const Tensors&) -> Tensors { return {value}; };
  }
  return std::nullopt;
}

}  // namespace tessel::reference::aten
