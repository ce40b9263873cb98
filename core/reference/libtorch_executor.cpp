// The reference executor: every node of the graph is one or a few ATen calls,
// run eagerly in graph order. One of the few translation units of Tessel that
// include LibTorch's headers (with libtorch_baseline.cpp and
// torchscript_import.cpp).
#include "reference/libtorch_executor.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

#include "graph/const_eval.h"
#include "graph/shape_utils.h"

namespace tessel::reference {

namespace {

using graph::GraphError;
using graph::Node;
using Shape = std::vector<int64_t>;
using Tensors = std::vector<at::Tensor>;
// One node, compiled: its input tensors (undefined for an absent optional
// input) to its output tensors.
using Kernel = std::function<Tensors(const Tensors&)>;

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw GraphError(n.describe() + ": " + what);
}

// Sets ATen's intra-op thread count for as long as it lives.
class TorchThreads {
 public:
  explicit TorchThreads(int threads) : previous_(at::get_num_threads()) {
    if (threads > 0) at::set_num_threads(threads);
  }
  ~TorchThreads() { at::set_num_threads(previous_); }
  TorchThreads(const TorchThreads&) = delete;
  TorchThreads& operator=(const TorchThreads&) = delete;

 private:
  int previous_;
};

at::ScalarType scalarType(graph::DType t) {
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

at::Tensor floatTensor(const Shape& shape, const std::vector<float>& values) {
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(at::kFloat));
  if (!values.empty()) std::memcpy(t.data_ptr<float>(), values.data(), values.size() * sizeof(float));
  return t;
}

at::Tensor intTensor(const Shape& shape, const std::vector<int64_t>& values, at::ScalarType type = at::kLong) {
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(at::kLong));
  if (!values.empty()) std::memcpy(t.data_ptr<int64_t>(), values.data(), values.size() * sizeof(int64_t));
  return type == at::kLong ? t : t.to(type);
}

at::Tensor constTensor(const graph::ConstTensor& c) {
  if (c.isInt()) return intTensor(c.info.shape, c.ints, scalarType(c.info.dtype));
  return floatTensor(c.info.shape, c.floats);
}

// The values of an integer (shape, axes, indices) tensor.
Shape intsOf(const at::Tensor& t) {
  at::Tensor l = t.to(at::kLong).contiguous();
  const int64_t* p = l.data_ptr<int64_t>();
  return Shape(p, p + l.numel());
}

bool present(const Tensors& in, size_t i) {
  return i < in.size() && in[i].defined();
}

int64_t axisOf(const Node& n, int64_t axis, int64_t rank) {
  return graph::normaliseAxis(n, axis, rank);
}

// An attribute (older opsets) or a constant input (newer) holding a list.
std::optional<Shape> attrOrInput(const Node& n, const Tensors& in, const char* attr, size_t i) {
  if (n.has(attr)) return n.attrInts(attr);
  if (present(in, i)) return intsOf(in[i]);
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Convolution and pooling windows.

struct Window {
  Shape kernel, strides, dilations, padBegin, padEnd;
  bool symmetric() const { return padBegin == padEnd; }
};

// Strides, dilations and pads of a Conv / pool node for input `x` (auto_pad
// resolved as in shape inference).
Window window(const Node& n, const at::Tensor& x, const Shape& kernel) {
  const size_t sp = kernel.size();
  if (size_t(x.dim()) != sp + 2) fail(n, "input rank " + std::to_string(x.dim()) + " does not match the kernel");
  Window w;
  w.kernel = kernel;
  w.strides = n.attrInts("strides", Shape(sp, 1));
  w.dilations = n.attrInts("dilations", Shape(sp, 1));
  Shape pads = n.attrInts("pads", Shape(2 * sp, 0));
  if (w.strides.size() != sp || w.dilations.size() != sp || pads.size() != 2 * sp)
    fail(n, "strides, dilations or pads do not match " + std::to_string(sp) + " spatial axes");
  w.padBegin.assign(pads.begin(), pads.begin() + int64_t(sp));
  w.padEnd.assign(pads.begin() + int64_t(sp), pads.end());
  const std::string autoPad = n.attrString("auto_pad", "NOTSET");
  for (size_t d = 0; d < sp; ++d) {
    const int64_t input = x.size(int64_t(d + 2)), effective = (kernel[d] - 1) * w.dilations[d] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      const int64_t out = (input + w.strides[d] - 1) / w.strides[d];
      const int64_t total = std::max<int64_t>((out - 1) * w.strides[d] + effective - input, 0);
      w.padBegin[d] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padEnd[d] = total - w.padBegin[d];
    } else if (autoPad == "VALID") {
      w.padBegin[d] = w.padEnd[d] = 0;
    }
  }
  return w;
}

// constant_pad_nd's list: pairs from the last axis backwards.
Shape torchPads(const Shape& begin, const Shape& end) {
  Shape p;
  for (size_t d = begin.size(); d-- > 0;) {
    p.push_back(begin[d]);
    p.push_back(end[d]);
  }
  return p;
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

// ---------------------------------------------------------------------------
// Shapes and data movement.

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

// Numpy-style integer division truncates in ONNX; floats divide.
at::Tensor divide(const at::Tensor& a, const at::Tensor& b) {
  if (!at::isFloatingType(a.scalar_type()) && !at::isFloatingType(b.scalar_type())) return at::div(a, b, "trunc");
  return at::div(a, b);
}

// ---------------------------------------------------------------------------

Kernel unary(at::Tensor (*f)(const at::Tensor&)) {
  return [f](const Tensors& in) -> Tensors { return {f(in[0])}; };
}

Kernel binary(at::Tensor (*f)(const at::Tensor&, const at::Tensor&)) {
  return [f](const Tensors& in) -> Tensors { return {f(in[0], in[1])}; };
}

// Activations of exported models (MobileNet v3's hard ones, ...).
std::optional<Kernel> activationKernel(const Node& n) {
  const std::string& op = n.op;
  if (op == "HardSigmoid") {
    const double alpha = n.attrFloat("alpha", 0.2), beta = n.attrFloat("beta", 0.5);
    return [alpha, beta](const Tensors& in) -> Tensors { return {at::clamp(in[0] * alpha + beta, 0.0, 1.0)}; };
  }
  if (op == "HardSwish") return unary([](const at::Tensor& x) { return at::hardswish(x); });
  if (op == "LeakyRelu") {
    const double alpha = n.attrFloat("alpha", 0.01);
    return [alpha](const Tensors& in) -> Tensors { return {at::leaky_relu(in[0], alpha)}; };
  }
  if (op == "Elu") {
    const double alpha = n.attrFloat("alpha", 1.0);
    return [alpha](const Tensors& in) -> Tensors { return {at::elu(in[0], alpha)}; };
  }
  if (op == "Softplus") return unary([](const at::Tensor& x) { return at::softplus(x); });
  if (op == "Log") return unary([](const at::Tensor& x) { return at::log(x); });
  return std::nullopt;
}

// Comparisons, logic and Where (booleans are ATen's bool tensors here).
std::optional<Kernel> logicKernel(const Node& n) {
  using Cmp = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
  static const std::map<std::string, Cmp> compare = {
      {"Equal", [](const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); }},
      {"Less", [](const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); }},
      {"Greater", [](const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); }},
      {"LessOrEqual", [](const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); }},
      {"GreaterOrEqual", [](const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); }},
      {"And", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); }},
      {"Or", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); }},
      {"Xor", [](const at::Tensor& a, const at::Tensor& b) { return at::logical_xor(a, b); }},
  };
  if (auto c = compare.find(n.op); c != compare.end()) return binary(c->second);
  if (n.op == "Not") return unary([](const at::Tensor& x) { return at::logical_not(x); });
  if (n.op == "Where")
    return [](const Tensors& in) -> Tensors { return {at::where(in[0].to(at::kBool), in[1], in[2])}; };
  if (n.op == "Mod") {
    const bool cStyle = n.attrInt("fmod", 0) != 0;
    return [cStyle](const Tensors& in) -> Tensors {
      return {cStyle ? at::fmod(in[0], in[1]) : at::remainder(in[0], in[1])};
    };
  }
  return std::nullopt;
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

Kernel compile(const Node& n) {
  const std::string& op = n.op;
  for (auto part : {activationKernel, logicKernel, generatorKernel})
    if (std::optional<Kernel> k = part(n)) return *k;
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
  if (op == "MatMul") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::matmul(a, b); });
  if (op == "Add") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); });
  if (op == "Sub") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); });
  if (op == "Mul") return binary([](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); });
  if (op == "Div") return binary(divide);
  if (op == "Pow")
    return binary([](const at::Tensor& a, const at::Tensor& b) { return at::pow(a, b.to(a.scalar_type())); });
  if (op == "Max" || op == "Min") {
    const bool isMax = op == "Max";
    return [isMax](const Tensors& in) -> Tensors {
      at::Tensor y = in[0];
      for (size_t i = 1; i < in.size(); ++i)
        y = isMax ? at::maximum(y, in[i]) : at::minimum(y, in[i]);
      return {y};
    };
  }
  if (op == "Sqrt") return unary([](const at::Tensor& x) { return at::sqrt(x); });
  if (op == "Relu") return unary([](const at::Tensor& x) { return at::relu(x); });
  if (op == "Sigmoid") return unary([](const at::Tensor& x) { return at::sigmoid(x); });
  if (op == "Tanh") return unary([](const at::Tensor& x) { return at::tanh(x); });
  if (op == "Erf") return unary([](const at::Tensor& x) { return at::erf(x); });
  if (op == "Exp") return unary([](const at::Tensor& x) { return at::exp(x); });
  if (op == "Neg") return unary([](const at::Tensor& x) { return at::neg(x); });
  if (op == "Abs") return unary([](const at::Tensor& x) { return at::abs(x); });
  if (op == "Reciprocal") return unary([](const at::Tensor& x) { return at::reciprocal(x); });
  if (op == "Gelu") {
    const std::string approximate = n.attrString("approximate", "none");
    if (approximate != "none" && approximate != "tanh") fail(n, "approximate '" + approximate + "' is not supported");
    return [approximate](const Tensors& in) -> Tensors { return {at::gelu(in[0], approximate)}; };
  }
  if (op == "Clip") {
    const bool attrMin = n.has("min"), attrMax = n.has("max");
    const double lo = n.attrFloat("min", 0), hi = n.attrFloat("max", 0);
    return [attrMin, attrMax, lo, hi](const Tensors& in) -> Tensors {
      c10::optional<at::Scalar> mn, mx;
      if (present(in, 1))
        mn = in[1].item();
      else if (attrMin)
        mn = lo;
      if (present(in, 2))
        mx = in[2].item();
      else if (attrMax)
        mx = hi;
      if (!mn && !mx) return {in[0]};
      return {at::clamp(in[0], mn, mx)};
    };
  }
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
  fail(n, "op '" + op + "' is not supported by the LibTorch reference executor");
}

// The graph, ready to run: a tensor per initializer and a kernel per node.
class Program {
 public:
  explicit Program(const graph::Graph& g) : g_(g) {
    for (const auto& [name, init] : g.initializers) {
      if (init.isInt()) {
        constants_[name] = intTensor(init.info.shape, init.ints, scalarType(init.info.dtype));
      } else if (init.info.dtype == graph::DType::Float32) {
        graph::Initializer copy = init;  // the graph is const: materialise a copy
        copy.materialise();
        if (int64_t(copy.data.size()) != init.info.numElements())
          throw GraphError("initializer '" + name + "' has " + std::to_string(copy.data.size()) + " values for " +
                           std::to_string(init.info.numElements()) + " elements");
        constants_[name] = floatTensor(init.info.shape, copy.data);
      } else {
        throw GraphError("initializer '" + name + "': data type " + graph::dtypeName(init.info.dtype) +
                         " is not supported by the LibTorch reference executor");
      }
    }
    for (const Node& n : g.nodes)
      kernels_.push_back(compile(n));
  }

  std::map<std::string, at::Tensor> run(const std::map<std::string, at::Tensor>& inputs) const {
    std::map<std::string, at::Tensor> env = constants_;
    for (const auto& [k, v] : inputs)
      env[k] = v;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      Tensors in;
      for (const std::string& name : n.inputs) {
        if (name.empty()) {
          in.emplace_back();
          continue;
        }
        auto it = env.find(name);
        if (it == env.end()) fail(n, "input '" + name + "' is not defined before the node");
        in.push_back(it->second);
      }
      Tensors out;
      try {
        out = kernels_[i](in);
      } catch (const c10::Error& e) {
        fail(n, e.what_without_backtrace());
      }
      for (size_t o = 0; o < n.outputs.size() && o < out.size(); ++o)
        if (!n.outputs[o].empty()) env[n.outputs[o]] = out[o];
    }
    std::map<std::string, at::Tensor> outputs;
    for (const std::string& name : g_.outputs) {
      auto it = env.find(name);
      if (it == env.end()) throw GraphError("graph output '" + name + "' is not produced by any node");
      outputs[name] = it->second;
    }
    return outputs;
  }

 private:
  const graph::Graph& g_;
  std::map<std::string, at::Tensor> constants_;
  std::vector<Kernel> kernels_;
};

runtime::HostTensor toHost(const at::Tensor& t) {
  const at::Tensor f = t.to(at::kFloat).contiguous();
  runtime::HostTensor h;
  h.shape.assign(f.sizes().begin(), f.sizes().end());
  h.data.resize(size_t(f.numel()));
  if (!h.data.empty()) std::memcpy(h.data.data(), f.data_ptr<float>(), h.data.size() * sizeof(float));
  return h;
}

}  // namespace

bool libtorchAvailable() {
  return true;
}

bool referenceRuns(const std::string& op) {
  // Compiling a node without attributes either succeeds, fails on what the
  // node lacks, or says the op is not supported: only the last is a no.
  Node probe;
  probe.name = "probe";
  probe.op = op;
  try {
    compile(probe);
  } catch (const GraphError& e) {
    return std::string(e.what()).find("is not supported by the LibTorch reference executor") == std::string::npos;
  } catch (const std::exception&) {
  }
  return true;
}

ReferenceRun runWithLibTorch(const graph::Graph& g, const std::map<std::string, runtime::HostTensor>& inputs,
                             int threads, int repeats) {
  TorchThreads torchThreads(threads);
  c10::InferenceMode guard;
  std::map<std::string, at::Tensor> in;
  for (const graph::ValueInfo& v : g.inputs) {
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw GraphError("graph input '" + v.name + "' is not given");
    const runtime::HostTensor& h = it->second;
    int64_t count = 1;
    for (int64_t d : h.shape)
      count *= d;
    if (count != int64_t(h.data.size()))
      throw GraphError("input '" + v.name + "' has " + std::to_string(h.data.size()) + " values for shape " +
                       graph::shapeString(h.shape));
    if (!v.shape.empty() && h.shape != v.shape)
      throw GraphError("input '" + v.name + "' has shape " + graph::shapeString(h.shape) + ", the graph expects " +
                       graph::shapeString(v.shape));
    at::Tensor t = floatTensor(h.shape, h.data);
    if (v.dtype != graph::DType::Float32) t = t.to(scalarType(v.dtype));
    in[v.name] = t;
  }
  const Program program(g);
  ReferenceRun result;
  std::map<std::string, at::Tensor> outputs = program.run(in);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    outputs = program.run(in);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  result.times = times;
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    const size_t m = times.size() / 2;
    result.seconds = times.size() % 2 ? times[m] : 0.5 * (times[m - 1] + times[m]);
  }
  for (const auto& [name, t] : outputs)
    result.outputs[name] = toHost(t);
  return result;
}

}  // namespace tessel::reference
