// Reference kernels of the compute-heavy ops: convolution, pooling, Gemm and
// MatMul, softmax, normalisation and reductions.
#include <algorithm>

#include "reference/aten_kernels.h"

namespace tessel::reference::aten {

namespace {

struct Window {
  Shape kernel, strides, dilations, padBegin, padEnd;
  bool symmetric() const { return padBegin == padEnd; }
};

// Strides, dilations and pads of a Conv / pool node for input `x` (auto_pad
// resolved as in shape inference).
Window window(const Node& n, const at::Tensor& x, const Shape& kernel) {
  if (size_t(x.dim()) != kernel.size() + 2)
    fail(n, "input rank " + std::to_string(x.dim()) + " does not match the kernel");
  const graph::Window w = graph::windowOf(n, Shape(x.sizes().begin(), x.sizes().end()), kernel, false);
  return {kernel, w.stride, w.dilation, w.padBegin, w.padEnd};
}

// ONNX output extent of one pooled axis (ceil_mode as in shape inference).
int64_t pooledExtent(int64_t input, int64_t kernel, int64_t stride, int64_t dilation, int64_t padBegin, int64_t padEnd,
                     bool ceilMode) {
  const int64_t span = input + padBegin + padEnd - ((kernel - 1) * dilation + 1);
  if (span < 0) return 0;
  if (!ceilMode) return span / stride + 1;
  int64_t out = (span + stride - 1) / stride + 1;
  if ((out - 1) * stride >= input + padBegin) --out;
  return out;
}

at::Tensor maxPool(const at::Tensor& x, const Shape& k, const Shape& s, const Shape& p, const Shape& d, bool ceil) {
  switch (k.size()) {
    case 1:
      return at::max_pool1d(x, k, s, p, d, ceil);
    case 2:
      return at::max_pool2d(x, k, s, p, d, ceil);
    default:
      return at::max_pool3d(x, k, s, p, d, ceil);
  }
}

at::Tensor avgPool(const at::Tensor& x, const Shape& k, const Shape& s, const Shape& p, bool ceil, bool includePad) {
  switch (k.size()) {
    case 1:
      return at::avg_pool1d(x, k, s, p, ceil, includePad);
    case 2:
      return at::avg_pool2d(x, k, s, p, ceil, includePad);
    default:
      return at::avg_pool3d(x, k, s, p, ceil, includePad);
  }
}

Kernel poolKernel(const Node& n) {
  if (!n.has("kernel_shape")) fail(n, "attribute 'kernel_shape' is missing");
  const Shape kernel = n.attrInts("kernel_shape");
  if (kernel.empty() || kernel.size() > 3) fail(n, "only 1-D, 2-D and 3-D pooling is supported");
  const bool isMax = n.op == "MaxPool";
  const bool ceil = n.attrInt("ceil_mode", 0) != 0;
  const bool includePad = n.attrInt("count_include_pad", 0) != 0;
  if (!isMax && n.has("dilations"))
    for (int64_t d : n.attrInts("dilations"))
      if (d != 1) fail(n, "dilated average pooling is not supported");
  return [n, kernel, isMax, ceil, includePad](const Tensors& in) -> Tensors {
    const at::Tensor& x = in[0];
    const Window w = window(n, x, kernel);
    bool native = w.symmetric();
    for (size_t d = 0; d < kernel.size(); ++d)
      native = native && 2 * w.padBegin[d] <= kernel[d];  // ATen's limit on implicit padding
    if (native) {
      if (isMax) return {maxPool(x, kernel, w.strides, w.padBegin, w.dilations, ceil)};
      return {avgPool(x, kernel, w.strides, w.padBegin, ceil, includePad)};
    }
    // Asymmetric (or large) pads: pad explicitly, with room for the windows
    // that ceil_mode adds, then pool without padding.
    Shape extra, out;
    for (size_t d = 0; d < kernel.size(); ++d) {
      const int64_t input = x.size(int64_t(d + 2));
      const int64_t o = pooledExtent(input, kernel[d], w.strides[d], w.dilations[d], w.padBegin[d], w.padEnd[d], ceil);
      const int64_t need = (o - 1) * w.strides[d] + (kernel[d] - 1) * w.dilations[d] + 1;
      out.push_back(o);
      extra.push_back(std::max<int64_t>(need - (input + w.padBegin[d] + w.padEnd[d]), 0));
    }
    Shape end = w.padEnd;
    for (size_t d = 0; d < end.size(); ++d)
      end[d] += extra[d];
    const Shape zeros(kernel.size(), 0);
    at::Tensor y;
    if (isMax) {
      const at::Tensor padded =
          at::constant_pad_nd(x, torchPads(w.padBegin, end), -std::numeric_limits<double>::infinity());
      y = maxPool(padded, kernel, w.strides, zeros, w.dilations, false);
    } else {
      // Sum of each window over the count of the elements it covers: the
      // input only, or the input and the pads (never the ceil_mode overhang).
      const double volume = double(std::accumulate(kernel.begin(), kernel.end(), int64_t(1), std::multiplies<>()));
      const at::Tensor sums =
          avgPool(at::constant_pad_nd(x, torchPads(w.padBegin, end), 0.0), kernel, w.strides, zeros, false, true) *
          volume;
      Shape maskShape = {1, 1};
      for (size_t d = 0; d < kernel.size(); ++d)
        maskShape.push_back(x.size(int64_t(d + 2)));
      at::Tensor mask = at::ones(maskShape, x.options());
      if (includePad) {
        mask = at::constant_pad_nd(mask, torchPads(w.padBegin, w.padEnd), 1.0);
        mask = at::constant_pad_nd(mask, torchPads(zeros, extra), 0.0);
      } else {
        mask = at::constant_pad_nd(mask, torchPads(w.padBegin, end), 0.0);
      }
      const at::Tensor counts = avgPool(mask, kernel, w.strides, zeros, false, true) * volume;
      y = sums / counts;
    }
    for (size_t d = 0; d < kernel.size(); ++d)
      y = y.narrow(int64_t(d + 2), 0, out[d]);
    return {y.contiguous()};
  };
}

Kernel convKernel(const Node& n) {
  const int64_t group = n.attrInt("group", 1);
  return [n, group](const Tensors& in) -> Tensors {
    at::Tensor x = in[0];
    const at::Tensor& w = in[1];
    const Shape kernel(w.sizes().begin() + 2, w.sizes().end());
    const Window win = window(n, x, kernel);
    Shape padding = win.padBegin;
    if (!win.symmetric()) {
      x = at::constant_pad_nd(x, torchPads(win.padBegin, win.padEnd), 0.0);
      padding.assign(kernel.size(), 0);
    }
    const at::Tensor bias = present(in, 2) ? in[2] : at::Tensor();
    return {at::convolution(x, w, bias, win.strides, padding, win.dilations, false, Shape(kernel.size(), 0), group)};
  };
}

}  // namespace

std::optional<Kernel> nnKernel(const Node& n) {
  const std::string& op = n.op;
  if (op == "Conv") return convKernel(n);
  if (op == "MaxPool" || op == "AveragePool") return poolKernel(n);
  if (op == "GlobalAveragePool")
    return [](const Tensors& in) -> Tensors {
      Shape dims;
      for (int64_t d = 2; d < in[0].dim(); ++d)
        dims.push_back(d);
      return {in[0].mean(dims, /*keepdim=*/true)};
    };
  if (op == "Gemm") {
    const bool ta = n.attrInt("transA", 0) != 0, tb = n.attrInt("transB", 0) != 0;
    const double alpha = n.attrFloat("alpha", 1.0), beta = n.attrFloat("beta", 1.0);
    return [ta, tb, alpha, beta](const Tensors& in) -> Tensors {
      const at::Tensor a = ta ? in[0].t() : in[0], b = tb ? in[1].t() : in[1];
      if (present(in, 2)) return {at::addmm(in[2], a, b, beta, alpha)};
      at::Tensor y = at::mm(a, b);
      return {alpha == 1.0 ? y : y * alpha};
    };
  }
  if (op == "MatMul") return [](const Tensors& in) -> Tensors { return {at::matmul(in[0], in[1])}; };
  if (op == "Softmax") {
    const int64_t axis = n.attrInt("axis", -1);
    return [n, axis](const Tensors& in) -> Tensors { return {at::softmax(in[0], axisOf(n, axis, in[0].dim()))}; };
  }
  if (op == "LayerNormalization") {
    const int64_t axisAttr = n.attrInt("axis", -1);
    const double eps = n.attrFloat("epsilon", 1e-5);
    return [n, axisAttr, eps](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      const int64_t axis = axisOf(n, axisAttr, x.dim());
      const Shape normalized(x.sizes().begin() + axis, x.sizes().end());
      // Scale and bias may broadcast to the normalized shape.
      const at::Tensor scale = present(in, 1) ? in[1].expand(normalized).contiguous() : at::Tensor();
      const at::Tensor bias = present(in, 2) ? in[2].expand(normalized).contiguous() : at::Tensor();
      const bool stats = n.outputs.size() > 1;
      if (!stats) return {at::layer_norm(x, normalized, scale, bias, eps)};
      auto [y, mean, rstd] = at::native_layer_norm(x, normalized, scale, bias, eps);
      Shape stat(x.sizes().begin(), x.sizes().begin() + axis);
      stat.resize(size_t(x.dim()), 1);
      return {y, mean.reshape(stat), rstd.reshape(stat)};
    };
  }
  if (op == "BatchNormalization") {
    const double eps = n.attrFloat("epsilon", 1e-5);
    if (n.attrInt("training_mode", 0) != 0) fail(n, "training mode is not supported");
    return [eps](const Tensors& in) -> Tensors {
      return {at::batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.0, eps, false), in[3], in[4]};
    };
  }
  if (op == "LogSoftmax") {
    const int64_t axis = n.attrInt("axis", -1);
    return [n, axis](const Tensors& in) -> Tensors { return {at::log_softmax(in[0], axisOf(n, axis, in[0].dim()))}; };
  }
  if (op == "InstanceNormalization") {
    const double eps = n.attrFloat("epsilon", 1e-5);
    return [eps](const Tensors& in) -> Tensors {
      return {at::instance_norm(in[0], in[1], in[2], {}, {}, true, 0.0, eps, false)};
    };
  }
  if (op.rfind("Reduce", 0) == 0) {
    const bool keep = n.attrInt("keepdims", 1) != 0;
    const bool noop = n.attrInt("noop_with_empty_axes", 0) != 0;
    return [n, keep, noop, op](const Tensors& in) -> Tensors {
      const at::Tensor& x = in[0];
      Shape axes = attrOrInput(n, in, "axes", 1).value_or(Shape{});
      if (axes.empty()) {
        if (noop) return {x};
        for (int64_t d = 0; d < x.dim(); ++d)
          axes.push_back(d);
      }
      for (int64_t& a : axes)
        a = axisOf(n, a, x.dim());
      if (op == "ReduceSum") return {x.sum(axes, keep)};
      if (op == "ReduceL1") return {x.abs().sum(axes, keep)};
      if (op == "ReduceL2") return {(x * x).sum(axes, keep).sqrt()};
      if (op == "ReduceSumSquare") return {(x * x).sum(axes, keep)};
      if (op == "ReduceLogSum") return {x.sum(axes, keep).log()};
      if (op == "ReduceLogSumExp") return {at::logsumexp(x, axes, keep)};
      if (op == "ReduceMax") return {at::amax(x, axes, keep)};
      if (op == "ReduceMin") return {at::amin(x, axes, keep)};
      return {x.mean(axes, keep)};
    };
  }
  return std::nullopt;
}

}  // namespace tessel::reference::aten
