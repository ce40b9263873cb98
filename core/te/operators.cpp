#include "te/operators.h"

#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

namespace tessel::te {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

Expr inBounds(const Expr& v, int64_t lo, int64_t hi) {
  return (v >= intImm(lo)) && (v < intImm(hi));
}

// Where the N, C, H, W axes of an image tensor sit in `layout`.
struct ImageAxes {
  size_t n, c, h, w;
};
ImageAxes imageAxes(Layout l) {
  return l == Layout::NCHW ? ImageAxes{0, 1, 2, 3} : ImageAxes{0, 3, 1, 2};
}

// Indices (or a shape) in storage order from their N, C, H, W parts.
template <typename T>
std::vector<T> image(Layout l, T n, T c, T h, T w) {
  return l == Layout::NCHW ? std::vector<T>{n, c, h, w} : std::vector<T>{n, h, w, c};
}

// Zero/identity padding of the H and W axes of an image tensor.
Tensor pad2d(DagBuilder& b, const Tensor& x, int64_t pad, double value, Layout l, const std::string& name) {
  if (pad == 0) return x;
  ImageAxes a = imageAxes(l);
  int64_t h = x.dim(a.h), w = x.dim(a.w);
  return b.compute(name, image(l, x.dim(a.n), x.dim(a.c), h + 2 * pad, w + 2 * pad), [&](const Indices& i) {
    Expr y = i[a.h] - pad, z = i[a.w] - pad;
    return select(inBounds(y, 0, h) && inBounds(z, 0, w), x(image<Expr>(l, i[a.n], i[a.c], y, z)), floatImm(value));
  });
}

int64_t outSize(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil) {
  return (in + 2 * pad - dil * (k - 1) - 1) / stride + 1;
}

}  // namespace

Tensor matmul(DagBuilder& b, const Tensor& a, const Tensor& w, const std::string& name) {
  return b.reduce(name, {a.dim(0), w.dim(1)}, ReduceKind::Sum, {a.dim(1)}, [&](const Indices& i, const Indices& r) {
    return a({i[0], r[0]}) * w({r[0], i[1]});
  });
}

Tensor batchMatmul(DagBuilder& b, const Tensor& a, const Tensor& w, const std::string& name) {
  return b.reduce(name, {a.dim(0), a.dim(1), w.dim(2)}, ReduceKind::Sum, {a.dim(2)},
                  [&](const Indices& i, const Indices& r) {
                    return a({i[0], i[1], r[0]}) * w({i[0], r[0], i[2]});
                  });
}

Tensor dense(DagBuilder& b, const Tensor& x, const Tensor& w, const std::string& name) {
  return b.reduce(name, {x.dim(0), w.dim(0)}, ReduceKind::Sum, {x.dim(1)}, [&](const Indices& i, const Indices& r) {
    return x({i[0], r[0]}) * w({i[1], r[0]});
  });
}

Tensor conv2d(DagBuilder& b, const Tensor& x, const Tensor& w, const Conv2dParams& p, const std::string& name) {
  const Layout l = p.layout;
  ImageAxes a = imageAxes(l);
  int64_t n = x.dim(a.n), c = x.dim(a.c), h = x.dim(a.h), wd = x.dim(a.w);
  // Weights: KCRS for NCHW, RSCK for NHWC.
  const bool nchw = l == Layout::NCHW;
  int64_t k = w.dim(nchw ? 0 : 3), cg = w.dim(nchw ? 1 : 2), r = w.dim(nchw ? 2 : 0), s = w.dim(nchw ? 3 : 1);
  require(p.groups >= 1 && c % p.groups == 0 && k % p.groups == 0, "conv2d: groups (" + std::to_string(p.groups) +
                                                                       ") must divide channels " + std::to_string(c) +
                                                                       " and filters " + std::to_string(k));
  require(cg == c / p.groups, "conv2d: weight has " + std::to_string(cg) + " input channels per group, expected " +
                                  std::to_string(c / p.groups));
  int64_t oh = outSize(h, r, p.stride, p.pad, p.dilation), ow = outSize(wd, s, p.stride, p.pad, p.dilation);
  require(oh > 0 && ow > 0, "conv2d: the kernel does not fit the padded input");
  Tensor padded = pad2d(b, x, p.pad, 0.0, l, "pad");
  int64_t kg = k / p.groups;
  // NHWC reduces over (r, s, c) so that the channel, contiguous in both the
  // input and the weights, is the innermost reduction.
  std::vector<int64_t> reduce = nchw ? std::vector<int64_t>{cg, r, s} : std::vector<int64_t>{r, s, cg};
  return b.reduce(name, image(l, n, k, oh, ow), ReduceKind::Sum, reduce, [&](const Indices& i, const Indices& rd) {
    Expr rc = rd[nchw ? 0 : 2], rr = rd[nchw ? 1 : 0], rs = rd[nchw ? 2 : 1];
    Expr outC = i[a.c];
    Expr channel = p.groups == 1 ? rc : (outC / kg) * cg + rc;
    Expr in = padded(
        image<Expr>(l, i[a.n], channel, i[a.h] * p.stride + rr * p.dilation, i[a.w] * p.stride + rs * p.dilation));
    return in * w(nchw ? Indices{outC, rc, rr, rs} : Indices{rr, rs, rc, outC});
  });
}

Tensor maxPool2d(DagBuilder& b, const Tensor& x, int64_t kernel, int64_t stride, int64_t pad, Layout l) {
  ImageAxes a = imageAxes(l);
  int64_t oh = outSize(x.dim(a.h), kernel, stride, pad, 1), ow = outSize(x.dim(a.w), kernel, stride, pad, 1);
  require(oh > 0 && ow > 0, "max_pool2d: the window does not fit the padded input");
  Tensor padded = pad2d(b, x, pad, -std::numeric_limits<double>::infinity(), l, "pad");
  return b.reduce("pool_max", image(l, x.dim(a.n), x.dim(a.c), oh, ow), ReduceKind::Max, {kernel, kernel},
                  [&](const Indices& i, const Indices& r) {
                    return padded(image<Expr>(l, i[a.n], i[a.c], i[a.h] * stride + r[0], i[a.w] * stride + r[1]));
                  });
}

Tensor avgPool2d(DagBuilder& b, const Tensor& x, int64_t kernel, int64_t stride, int64_t pad, Layout l) {
  ImageAxes a = imageAxes(l);
  int64_t oh = outSize(x.dim(a.h), kernel, stride, pad, 1), ow = outSize(x.dim(a.w), kernel, stride, pad, 1);
  require(oh > 0 && ow > 0, "avg_pool2d: the window does not fit the padded input");
  Tensor padded = pad2d(b, x, pad, 0.0, l, "pad");
  Tensor sum = b.reduce("pool_sum", image(l, x.dim(a.n), x.dim(a.c), oh, ow), ReduceKind::Sum, {kernel, kernel},
                        [&](const Indices& i, const Indices& r) {
                          return padded(image<Expr>(l, i[a.n], i[a.c], i[a.h] * stride + r[0], i[a.w] * stride + r[1]));
                        });
  double inv = 1.0 / double(kernel * kernel);  // count includes padding, as ONNX's default
  return b.compute("pool_avg", sum.shape(), [&](const Indices& i) { return sum(i) * floatImm(inv); });
}

Tensor globalAvgPool(DagBuilder& b, const Tensor& x, Layout l) {
  ImageAxes a = imageAxes(l);
  Tensor sum =
      b.reduce("pool_sum", image<int64_t>(l, x.dim(a.n), x.dim(a.c), 1, 1), ReduceKind::Sum, {x.dim(a.h), x.dim(a.w)},
               [&](const Indices& i, const Indices& r) { return x(image<Expr>(l, i[a.n], i[a.c], r[0], r[1])); });
  double inv = 1.0 / double(x.dim(a.h) * x.dim(a.w));
  return b.compute("pool_avg", sum.shape(), [&](const Indices& i) { return sum(i) * floatImm(inv); });
}

Tensor relu(DagBuilder& b, const Tensor& x, const std::string& name) {
  return b.compute(name, x.shape(), [&](const Indices& i) { return maxExpr(x(i), floatImm(0.0)); });
}

Tensor gelu(DagBuilder& b, const Tensor& x, const std::string& name) {
  return b.compute(name, x.shape(), [&](const Indices& i) {
    Expr v = x(i);
    return floatImm(0.5) * v * (floatImm(1.0) + call(CallFn::Erf, {v * floatImm(M_SQRT1_2)}));
  });
}

Tensor add(DagBuilder& b, const Tensor& x, const Tensor& y, const std::string& name) {
  return b.compute(name, x.shape(), [&](const Indices& i) { return x(i) + y(i); });
}

Tensor mul(DagBuilder& b, const Tensor& x, const Tensor& y, const std::string& name) {
  return b.compute(name, x.shape(), [&](const Indices& i) { return x(i) * y(i); });
}

Tensor biasAdd(DagBuilder& b, const Tensor& x, const Tensor& bias, size_t axis, const std::string& name) {
  return b.compute(name, x.shape(), [&](const Indices& i) { return x(i) + bias({i[axis]}); });
}

Tensor softmax(DagBuilder& b, const Tensor& x) {
  std::vector<int64_t> outer(x.shape().begin(), x.shape().end() - 1);
  int64_t n = x.shape().back();
  auto outerIndex = [](const Indices& i) { return Indices(i.begin(), i.end() - 1); };
  auto row = [](const Indices& i, const Expr& last) {
    Indices j = i;
    j.push_back(last);
    return j;
  };
  Tensor mx = b.reduce("T_max", outer, ReduceKind::Max, {n},
                       [&](const Indices& i, const Indices& r) { return x(row(i, r[0])); });
  Tensor ex =
      b.compute("T_exp", x.shape(), [&](const Indices& i) { return call(CallFn::Exp, {x(i) - mx(outerIndex(i))}); });
  Tensor sum = b.reduce("T_sum", outer, ReduceKind::Sum, {n},
                        [&](const Indices& i, const Indices& r) { return ex(row(i, r[0])); });
  return b.compute("T_softmax", x.shape(), [&](const Indices& i) { return ex(i) / sum(outerIndex(i)); });
}

Tensor layerNorm(DagBuilder& b, const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
  std::vector<int64_t> outer(x.shape().begin(), x.shape().end() - 1);
  int64_t n = x.shape().back();
  auto row = [](const Indices& i, const Expr& last) {
    Indices j = i;
    j.push_back(last);
    return j;
  };
  auto outerIndex = [](const Indices& i) { return Indices(i.begin(), i.end() - 1); };
  Expr invN = floatImm(1.0 / double(n));
  Tensor sum = b.reduce("T_sum", outer, ReduceKind::Sum, {n},
                        [&](const Indices& i, const Indices& r) { return x(row(i, r[0])); });
  Tensor variance = b.reduce("T_var", outer, ReduceKind::Sum, {n}, [&](const Indices& i, const Indices& r) {
    Expr d = x(row(i, r[0])) - sum(i) * invN;
    return d * d;
  });
  return b.compute("T_layernorm", x.shape(), [&](const Indices& i) {
    Expr mean = sum(outerIndex(i)) * invN;
    Expr rstd = floatImm(1.0) / call(CallFn::Sqrt, {variance(outerIndex(i)) * invN + floatImm(eps)});
    Expr last = i.back();
    return (x(i) - mean) * rstd * gamma({last}) + beta({last});
  });
}

const char* layoutName(Layout l) {
  return l == Layout::NCHW ? "nchw" : "nhwc";
}

Layout parseLayout(const std::string& name) {
  if (name == "nchw") return Layout::NCHW;
  if (name == "nhwc") return Layout::NHWC;
  throw std::invalid_argument("unknown layout '" + name + "' (known: nchw, nhwc)");
}

namespace {

using Shape = std::vector<int64_t>;

constexpr size_t kNoPad = std::numeric_limits<size_t>::max();

// A library operator `tune-op` builds: its shape list and how it becomes a DAG.
struct LibraryOp {
  OpSignature signature;
  size_t minValues, maxValues;  // how many shape values it takes
  size_t padValue;              // the one value that may be 0 (the padding), or kNoPad
  bool image = false;           // stored NCHW or NHWC (convolutions and pools)
  std::function<void(DagBuilder&, const Shape&, Layout)> build;
};

void convolution(DagBuilder& b, const Shape& s, Layout layout, const std::string& op, bool biasRelu) {
  Conv2dParams p{s[7], s[8], s.size() > 9 ? s[9] : 1, s.size() > 10 ? s[10] : 1, layout};
  if (s[1] % p.groups) throw std::invalid_argument(op + ": groups must divide the input channels");
  Tensor x = b.placeholder("X", image(layout, s[0], s[1], s[2], s[3]));
  Tensor w = b.placeholder("W",
                           layout == Layout::NCHW ? std::vector<int64_t>{s[4], s[1] / p.groups, s[5], s[6]}
                                                  : std::vector<int64_t>{s[5], s[6], s[1] / p.groups, s[4]},
                           /*layoutFree=*/true);
  Tensor c = conv2d(b, x, w, p);
  if (!biasRelu) return;
  Tensor bias = b.placeholder("bias", {s[4]});
  size_t channel = imageAxes(layout).c;
  b.compute("bias_relu", c.shape(),
            [&](const Indices& i) { return maxExpr(c(i) + bias({i[channel]}), floatImm(0.0)); });
}

const std::vector<LibraryOp>& libraryOps() {
  static const std::vector<LibraryOp> table = {
      {{"matmul", "M,N,K"},
       3,
       3,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("A", {s[0], s[2]});  // (in order: they are the kernel's arguments)
         Tensor y = b.placeholder("B", {s[2], s[1]});
         matmul(b, x, y);
       }},
      {{"batch_matmul", "B,M,N,K"},
       4,
       4,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("A", {s[0], s[1], s[3]});
         Tensor y = b.placeholder("B", {s[0], s[3], s[2]});
         batchMatmul(b, x, y);
       }},
      {{"dense", "M,N,K (with bias)"},
       3,
       3,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("X", {s[0], s[2]});
         Tensor w = b.placeholder("W", {s[1], s[2]}, /*layoutFree=*/true);
         Tensor bias = b.placeholder("bias", {s[1]});
         biasAdd(b, dense(b, x, w), bias, 1);
       }},
      {{"conv2d", "N,C,H,W,K,R,S,stride,pad[,dilation,groups]"},
       9,
       11,
       8,
       true,
       [](DagBuilder& b, const Shape& s, Layout l) { convolution(b, s, l, "conv2d", false); }},
      {{"conv2d_bias_relu", "N,C,H,W,K,R,S,stride,pad[,dilation,groups]"},
       9,
       11,
       8,
       true,
       [](DagBuilder& b, const Shape& s, Layout l) { convolution(b, s, l, "conv2d_bias_relu", true); }},
      {{"depthwise_conv2d", "N,C,H,W,R,S,stride,pad[,dilation]"},
       8,
       9,
       7,
       true,
       [](DagBuilder& b, const Shape& s, Layout layout) {
         Conv2dParams p{s[6], s[7], s.size() > 8 ? s[8] : 1, s[1], layout};
         Tensor x = b.placeholder("X", image(layout, s[0], s[1], s[2], s[3]));
         Tensor w = b.placeholder("W",
                                  layout == Layout::NCHW ? std::vector<int64_t>{s[1], 1, s[4], s[5]}
                                                         : std::vector<int64_t>{s[4], s[5], 1, s[1]},
                                  /*layoutFree=*/true);
         conv2d(b, x, w, p);
       }},
      {{"max_pool2d", "N,C,H,W,kernel,stride,pad"},
       7,
       7,
       6,
       true,
       [](DagBuilder& b, const Shape& s, Layout layout) {
         maxPool2d(b, b.placeholder("X", image(layout, s[0], s[1], s[2], s[3])), s[4], s[5], s[6], layout);
       }},
      {{"avg_pool2d", "N,C,H,W,kernel,stride,pad"},
       7,
       7,
       6,
       true,
       [](DagBuilder& b, const Shape& s, Layout layout) {
         avgPool2d(b, b.placeholder("X", image(layout, s[0], s[1], s[2], s[3])), s[4], s[5], s[6], layout);
       }},
      {{"global_avg_pool", "N,C,H,W"},
       4,
       4,
       kNoPad,
       true,
       [](DagBuilder& b, const Shape& s, Layout layout) {
         globalAvgPool(b, b.placeholder("X", image(layout, s[0], s[1], s[2], s[3])), layout);
       }},
      {{"relu", "dims of the tensor"},
       1,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) { relu(b, b.placeholder("X", s)); }},
      {{"gelu", "dims of the tensor"},
       1,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) { gelu(b, b.placeholder("X", s)); }},
      {{"add", "dims of the tensors"},
       1,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("X", s), y = b.placeholder("Y", s);
         add(b, x, y);
       }},
      {{"mul", "dims of the tensors"},
       1,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("X", s), y = b.placeholder("Y", s);
         mul(b, x, y);
       }},
      {{"bias_add", "dims of the tensor (bias on axis 1)"},
       2,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("X", s);
         Tensor bias = b.placeholder("bias", {s[1]});
         biasAdd(b, x, bias, 1);
       }},
      {{"softmax", "dims (over the last)"},
       2,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) { softmax(b, b.placeholder("X", s)); }},
      {{"layernorm", "dims (over the last)"},
       2,
       6,
       kNoPad,
       false,
       [](DagBuilder& b, const Shape& s, Layout) {
         Tensor x = b.placeholder("X", s);
         Tensor gamma = b.placeholder("gamma", {s.back()});
         Tensor beta = b.placeholder("beta", {s.back()});
         layerNorm(b, x, gamma, beta);
       }},
  };
  return table;
}

const LibraryOp* findLibraryOp(const std::string& op) {
  for (const LibraryOp& o : libraryOps())
    if (o.signature.name == op) return &o;
  return nullptr;
}

}  // namespace

bool hasImageLayout(const std::string& op) {
  const LibraryOp* o = findLibraryOp(op);
  return o && o->image;
}

const std::vector<OpSignature>& tunableOps() {
  static const std::vector<OpSignature> ops = [] {
    std::vector<OpSignature> v;
    for (const LibraryOp& o : libraryOps())
      v.push_back(o.signature);
    return v;
  }();
  return ops;
}

namespace {

// "stride (value 8)" from "N,C,H,W,K,R,S,stride,pad[,dilation,groups]"; "value 2"
// where the help names no values ("dims of the tensor").
std::string shapeValueName(const std::string& shapeHelp, size_t index) {
  std::string names = shapeHelp;
  std::erase_if(names, [](char c) { return c == '[' || c == ']'; });
  const std::string value = "value " + std::to_string(index + 1);
  if (names.find(',') == std::string::npos) return value;
  size_t start = 0;
  for (size_t i = 0; i < index; ++i) {
    start = names.find(',', start);
    if (start == std::string::npos) return value;
    ++start;
  }
  const size_t end = names.find(',', start);
  return names.substr(start, end == std::string::npos ? std::string::npos : end - start) + " (" + value + ")";
}

}  // namespace

ComputeDAG makeOperator(const std::string& op, const std::vector<int64_t>& s, Layout layout) {
  const LibraryOp* o = findLibraryOp(op);
  if (!o) {
    std::string known;
    for (const OpSignature& sig : tunableOps())
      known += (known.empty() ? "" : ", ") + sig.name;
    throw std::invalid_argument("unknown op '" + op + "' (known: " + known + ")");
  }
  if (s.size() < o->minValues || s.size() > o->maxValues) {
    const std::string want = o->minValues == o->maxValues
                                 ? std::to_string(o->minValues)
                                 : std::to_string(o->minValues) + " to " + std::to_string(o->maxValues);
    throw std::invalid_argument(op + ": shape needs " + want + " values (" + o->signature.shapeHelp + "), got " +
                                std::to_string(s.size()));
  }
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] < 0 || (s[i] == 0 && i != o->padValue))
      throw std::invalid_argument(op + ": " + shapeValueName(o->signature.shapeHelp, i) + " must be " +
                                  (i == o->padValue ? "0 or more" : "positive") + ", got " + std::to_string(s[i]));
  DagBuilder b;
  o->build(b, s, layout);
  return b.build();
}

}  // namespace tessel::te
