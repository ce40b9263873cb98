// Tests of the LibTorch reference executor against plain-loop references on
// small hand-built graphs, and of the TorchScript importer against the
// modules' own forward (the modules are written by make_torchscript.cpp,
// which keeps LibTorch's headers out of this Qt translation unit).
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <set>

#include "frontend/torchscript_import.h"
#include "graph/graph_builder.h"
#include "reference/libtorch_executor.h"
#include "tessel_test.h"

#ifdef TESSEL_TEST_HAVE_TORCH
#include "make_torchscript.h"
#endif

using namespace tessel;
using graph::GraphBuilder;
using runtime::HostTensor;
using Shape = std::vector<int64_t>;

namespace {

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

std::vector<float> randomValues(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(size_t(n), 0.0f);
  for (float& x : v)
    x = u(rng);
  return v;
}

HostTensor randomTensor(const Shape& shape, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  return HostTensor{shape, randomValues(count(shape), seed, lo, hi)};
}

// The data of a Float32 initializer (materialised from its seed when it has none).
std::vector<float> initData(const graph::Graph& g, const std::string& name) {
  graph::Initializer init = g.initializers.at(name);
  init.materialise();
  return init.data;
}

// Relative tolerance 1e-4 (with a small absolute floor for values near 0).
bool close(const HostTensor& got, const Shape& shape, const std::vector<float>& want, QString& why, double rel = 1e-4) {
  if (got.shape != shape) {
    why = "shape differs";
    return false;
  }
  if (got.data.size() != want.size()) {
    why = QString("%1 values, want %2").arg(got.data.size()).arg(want.size());
    return false;
  }
  for (size_t i = 0; i < want.size(); ++i) {
    const double a = got.data[i], b = want[i];
    if (!(std::abs(a - b) <= rel * std::abs(b) + 1e-5)) {
      why = QString("element %1: got %2, want %3").arg(i).arg(a, 0, 'g', 9).arg(b, 0, 'g', 9);
      return false;
    }
  }
  return true;
}

#define EXPECT_CLOSE(got, shape, want)                         \
  do {                                                         \
    QString why_;                                              \
    QVERIFY2(close(got, shape, want, why_), qPrintable(why_)); \
  } while (false)

// QSKIP returns from the test function: these are macros for that reason.
#define REQUIRE_TORCH() \
  if (!reference::libtorchAvailable()) TESSEL_SKIP("libtorch", "this build has no LibTorch")
#ifdef TESSEL_TEST_HAVE_TORCH
#define REQUIRE_TORCHSCRIPT_WRITER() REQUIRE_TORCH()
#else
#define REQUIRE_TORCHSCRIPT_WRITER() TESSEL_SKIP("libtorch", "this build has no LibTorch to write TorchScript modules")
#endif

reference::ReferenceRun run(const graph::Graph& g, const std::map<std::string, HostTensor>& inputs) {
  return reference::runWithLibTorch(g, inputs, 2, 1);
}

// ---- plain-loop references ---------------------------------------------------

// 2-D convolution (NCHW, OIHW), ONNX pads [top, left, bottom, right].
std::vector<float> convRef(const std::vector<float>& x, const Shape& xs, const std::vector<float>& w, const Shape& ws,
                           const std::vector<float>& b, Shape stride, Shape pads, Shape dil, int64_t group,
                           Shape& outShape) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], K = ws[0], CG = ws[1], R = ws[2], S = ws[3];
  const int64_t OH = (H + pads[0] + pads[2] - ((R - 1) * dil[0] + 1)) / stride[0] + 1;
  const int64_t OW = (W + pads[1] + pads[3] - ((S - 1) * dil[1] + 1)) / stride[1] + 1;
  outShape = {N, K, OH, OW};
  std::vector<float> y(size_t(N * K * OH * OW), 0.0f);
  const int64_t KG = K / group;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b.empty() ? 0.0 : b[size_t(k)];
          const int64_t g = k / KG;
          for (int64_t c = 0; c < CG; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t ih = oh * stride[0] - pads[0] + r * dil[0], iw = ow * stride[1] - pads[1] + s * dil[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[size_t(((n * C + g * CG + c) * H + ih) * W + iw)]) *
                       w[size_t(((k * CG + c) * R + r) * S + s)];
              }
          y[size_t(((n * K + k) * OH + oh) * OW + ow)] = float(acc);
        }
  return y;
}

// ONNX output extent of a pooled axis.
int64_t poolExtent(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil) {
  const int64_t span = in + pb + pe - k;
  if (!ceil) return span / s + 1;
  int64_t out = (span + s - 1) / s + 1;
  if ((out - 1) * s >= in + pb) --out;
  return out;
}

// 2-D max / average pooling with ONNX semantics; pads [top, left, bottom, right].
std::vector<float> poolRef(const std::vector<float>& x, const Shape& xs, bool isMax, Shape k, Shape st, Shape pads,
                           bool ceil, bool includePad, Shape& outShape) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3];
  const int64_t OH = poolExtent(H, k[0], st[0], pads[0], pads[2], ceil);
  const int64_t OW = poolExtent(W, k[1], st[1], pads[1], pads[3], ceil);
  outShape = {N, C, OH, OW};
  std::vector<float> y;
  for (int64_t nc = 0; nc < N * C; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t n = 0;
        for (int64_t r = 0; r < k[0]; ++r)
          for (int64_t s = 0; s < k[1]; ++s) {
            const int64_t ih = oh * st[0] - pads[0] + r, iw = ow * st[1] - pads[1] + s;
            const bool inside = ih >= 0 && ih < H && iw >= 0 && iw < W;
            const bool inPadded = ih >= -pads[0] && ih < H + pads[2] && iw >= -pads[1] && iw < W + pads[3];
            if (inside) {
              const double v = x[size_t((nc * H + ih) * W + iw)];
              acc = isMax ? std::max(acc, v) : acc + v;
            }
            if (inside || (includePad && inPadded)) ++n;
          }
        y.push_back(float(isMax ? acc : acc / double(n)));
      }
  return y;
}

// ONNX Resize of the last two axes of [N, C, H, W], written from the
// operator's definition: `row` and `col` map an output index (with the
// axis's input and output lengths) to its source coordinate; nearest rounds
// it with `round`, linear blends the two neighbours; source indices are
// clamped into the input.
using Coordinate = std::function<double(int64_t i, int64_t in, int64_t out)>;
std::vector<float> resizeRef(const HostTensor& x, int64_t oh, int64_t ow, const Coordinate& row, const Coordinate& col,
                             bool linear, const std::function<int64_t(double)>& round) {
  const int64_t nc = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
  auto at = [&](int64_t plane, int64_t i, int64_t j) {
    i = std::clamp<int64_t>(i, 0, h - 1);
    j = std::clamp<int64_t>(j, 0, w - 1);
    return double(x.data[size_t((plane * h + i) * w + j)]);
  };
  std::vector<float> y;
  for (int64_t plane = 0; plane < nc; ++plane)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const double ci = row(i, h, oh), cj = col(j, w, ow);
        if (!linear) {
          y.push_back(float(at(plane, round(ci), round(cj))));
          continue;
        }
        const double fi = std::floor(ci), fj = std::floor(cj), ti = ci - fi, tj = cj - fj;
        const int64_t i0 = int64_t(fi), j0 = int64_t(fj);
        y.push_back(float((1 - ti) * ((1 - tj) * at(plane, i0, j0) + tj * at(plane, i0, j0 + 1)) +
                          ti * ((1 - tj) * at(plane, i0 + 1, j0) + tj * at(plane, i0 + 1, j0 + 1))));
      }
  return y;
}

// Softmax over the last axis.
std::vector<float> softmaxLast(std::vector<float> v, int64_t inner) {
  for (size_t row = 0; row < v.size(); row += size_t(inner)) {
    double mx = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t i = 0; i < inner; ++i)
      mx = std::max(mx, double(v[row + size_t(i)]));
    for (int64_t i = 0; i < inner; ++i)
      sum += std::exp(double(v[row + size_t(i)]) - mx);
    for (int64_t i = 0; i < inner; ++i)
      v[row + size_t(i)] = float(std::exp(double(v[row + size_t(i)]) - mx) / sum);
  }
  return v;
}

// Elements of `v` (shape `s`) gathered by a function from output index to input index.
std::vector<float> remap(const std::vector<float>& v, const Shape& out, const std::function<int64_t(const Shape&)>& f) {
  std::vector<float> y(size_t(count(out)));
  Shape idx(out.size(), 0);
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t rest = int64_t(i);
    for (size_t d = out.size(); d-- > 0;) {
      idx[d] = rest % out[d];
      rest /= out[d];
    }
    y[i] = v[size_t(f(idx))];
  }
  return y;
}

}  // namespace

class TestReference : public QObject {
  Q_OBJECT

 private slots:
  void available() {
#ifdef TESSEL_HAVE_LIBTORCH
    QVERIFY(reference::libtorchAvailable());
    QVERIFY(frontend::torchscriptAvailable());
#else
    QVERIFY(!reference::libtorchAvailable());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, reference::runWithLibTorch(graph::Graph{}, {}, 1));
    QVERIFY(!frontend::torchscriptAvailable());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, frontend::importTorchScript("model.pt", {{1, 3}}));
    TESSEL_SKIP("libtorch", "this build has no LibTorch");
#endif
  }

  void convRelu() {
    REQUIRE_TORCH();
    GraphBuilder b("conv");
    b.input("x", {2, 4, 9, 8});
    b.weight("w1", {6, 2, 3, 3}, 0.4f);  // 2 groups
    b.weight("b1", {6}, 0.2f);
    b.weight("w2", {5, 6, 3, 2}, 0.3f);
    const std::string c1 = b.node("c1", "Conv", {"x", "w1", "b1"},
                                  {{"group", int64_t(2)},
                                   {"strides", Shape{2, 1}},
                                   {"pads", Shape{1, 2, 0, 1}},  // asymmetric
                                   {"kernel_shape", Shape{3, 3}}});
    const std::string r = b.node("r", "Relu", {c1});
    const std::string c2 = b.node("c2", "Conv", {r, "w2"}, {{"dilations", Shape{2, 1}}, {"pads", Shape{2, 1, 2, 1}}});
    b.output(c2);
    b.output(r);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 4, 9, 8}, 1);
    const auto out = run(g, {{"x", x}});

    Shape s1, s2;
    std::vector<float> y1 = convRef(x.data, x.shape, initData(g, "w1"), {6, 2, 3, 3}, initData(g, "b1"), {2, 1},
                                    {1, 2, 0, 1}, {1, 1}, 2, s1);
    for (float& v : y1)
      v = std::max(v, 0.0f);
    const std::vector<float> y2 =
        convRef(y1, s1, initData(g, "w2"), {5, 6, 3, 2}, {}, {1, 1}, {2, 1, 2, 1}, {2, 1}, 1, s2);
    QCOMPARE(g.value(c2).shape, s2);
    EXPECT_CLOSE(out.outputs.at(r), s1, y1);
    EXPECT_CLOSE(out.outputs.at(c2), s2, y2);
  }

  void gemm() {
    REQUIRE_TORCH();
    GraphBuilder b("gemm");
    b.input("a", {4, 3});          // transA: A is 3 x 4
    b.weight("bw", {5, 4}, 0.5f);  // transB: B is 4 x 5
    b.weight("c", {5}, 0.5f);
    const std::string y = b.node("y", "Gemm", {"a", "bw", "c"},
                                 {{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}});
    const std::string z = b.node("z", "Gemm", {"a", "bw"}, {{"transA", int64_t(1)}, {"transB", int64_t(1)}});
    b.output(y);
    b.output(z);
    const graph::Graph g = b.finish();
    const HostTensor a = randomTensor({4, 3}, 2);
    const auto out = run(g, {{"a", a}});
    const std::vector<float> w = initData(g, "bw"), c = initData(g, "c");
    std::vector<float> wy, wz;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k)
          acc += double(a.data[size_t(k * 3 + i)]) * w[size_t(j * 4 + k)];
        wy.push_back(float(0.5 * acc + 2.0 * c[size_t(j)]));
        wz.push_back(float(acc));
      }
    EXPECT_CLOSE(out.outputs.at(y), Shape({3, 5}), wy);
    EXPECT_CLOSE(out.outputs.at(z), Shape({3, 5}), wz);
  }

  void batchedMatmulSoftmax() {
    REQUIRE_TORCH();
    GraphBuilder b("attn");
    b.input("a", {2, 3, 4, 5});
    b.input("b", {3, 5, 6});  // broadcast over the leading 2
    const std::string m = b.node("m", "MatMul", {"a", "b"});
    const std::string s = b.node("s", "Softmax", {m}, {{"axis", int64_t(-1)}});
    b.output(s);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 3, 4, 5}, 3, -2, 2), y = randomTensor({3, 5, 6}, 4, -2, 2);
    const auto out = run(g, {{"a", x}, {"b", y}});
    std::vector<float> mm;
    for (int64_t p = 0; p < 2; ++p)
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t i = 0; i < 4; ++i)
          for (int64_t j = 0; j < 6; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < 5; ++k)
              acc += double(x.data[size_t(((p * 3 + h) * 4 + i) * 5 + k)]) * y.data[size_t((h * 5 + k) * 6 + j)];
            mm.push_back(float(acc));
          }
    EXPECT_CLOSE(out.outputs.at(s), Shape({2, 3, 4, 6}), softmaxLast(mm, 6));
  }

  void layerNorm() {
    REQUIRE_TORCH();
    GraphBuilder b("ln");
    b.input("x", {2, 3, 8});
    b.weight("g", {8}, 0.5f);
    b.weight("bias", {8}, 0.5f);
    b.weight("g2", {3, 8}, 0.5f);
    const std::string y = b.node("y", "LayerNormalization", {"x", "g", "bias"}, {{"epsilon", 1e-5}});
    const std::string z = b.node("z", "LayerNormalization", {"x", "g2"}, {{"axis", int64_t(1)}, {"epsilon", 1e-3}});
    b.output(y);
    b.output(z);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 3, 8}, 5, -3, 3);
    const auto out = run(g, {{"x", x}});
    auto ref = [&](int64_t inner, const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
      std::vector<float> r(x.data.size());
      for (size_t row = 0; row < x.data.size(); row += size_t(inner)) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < inner; ++i)
          mean += x.data[row + size_t(i)];
        mean /= double(inner);
        for (int64_t i = 0; i < inner; ++i)
          var += (x.data[row + size_t(i)] - mean) * (x.data[row + size_t(i)] - mean);
        var /= double(inner);
        for (int64_t i = 0; i < inner; ++i)
          r[row + size_t(i)] = float((x.data[row + size_t(i)] - mean) / std::sqrt(var + eps) * scale[size_t(i)] +
                                     (bias.empty() ? 0.0 : bias[size_t(i)]));
      }
      return r;
    };
    EXPECT_CLOSE(out.outputs.at(y), Shape({2, 3, 8}), ref(8, initData(g, "g"), initData(g, "bias"), 1e-5));
    EXPECT_CLOSE(out.outputs.at(z), Shape({2, 3, 8}), ref(24, initData(g, "g2"), {}, 1e-3));
  }

  void pools_data() {
    QTest::addColumn<bool>("isMax");
    QTest::addColumn<Shape>("kernel");
    QTest::addColumn<Shape>("strides");
    QTest::addColumn<Shape>("pads");
    QTest::addColumn<bool>("ceil");
    QTest::addColumn<bool>("includePad");
    QTest::newRow("max 3x3 s2 p1") << true << Shape{3, 3} << Shape{2, 2} << Shape{1, 1, 1, 1} << false << false;
    QTest::newRow("max ceil asym") << true << Shape{3, 2} << Shape{2, 2} << Shape{0, 1, 1, 0} << true << false;
    QTest::newRow("max 2x2") << true << Shape{2, 2} << Shape{2, 2} << Shape{0, 0, 0, 0} << false << false;
    QTest::newRow("avg p1 exclude") << false << Shape{3, 3} << Shape{2, 2} << Shape{1, 1, 1, 1} << false << false;
    QTest::newRow("avg p1 include") << false << Shape{3, 3} << Shape{2, 2} << Shape{1, 1, 1, 1} << false << true;
    QTest::newRow("avg ceil asym include") << false << Shape{3, 3} << Shape{2, 3} << Shape{1, 0, 2, 1} << true << true;
    QTest::newRow("avg ceil asym exclude") << false << Shape{2, 3} << Shape{2, 2} << Shape{0, 2, 1, 0} << true << false;
  }

  void pools() {
    REQUIRE_TORCH();
    QFETCH(bool, isMax);
    QFETCH(Shape, kernel);
    QFETCH(Shape, strides);
    QFETCH(Shape, pads);
    QFETCH(bool, ceil);
    QFETCH(bool, includePad);
    GraphBuilder b("pool");
    b.input("x", {2, 3, 7, 8});
    std::map<std::string, graph::AttrValue> attrs = {
        {"kernel_shape", kernel}, {"strides", strides}, {"pads", pads}, {"ceil_mode", int64_t(ceil)}};
    if (!isMax) attrs["count_include_pad"] = int64_t(includePad);
    const std::string p = b.node("p", isMax ? "MaxPool" : "AveragePool", {"x"}, attrs);
    const std::string gp = b.node("gp", "GlobalAveragePool", {"x"});
    b.output(p);
    b.output(gp);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 3, 7, 8}, 6);
    const auto out = run(g, {{"x", x}});
    Shape outShape;
    const std::vector<float> want = poolRef(x.data, x.shape, isMax, kernel, strides, pads, ceil, includePad, outShape);
    QCOMPARE(g.value(p).shape, outShape);
    EXPECT_CLOSE(out.outputs.at(p), outShape, want);
    std::vector<float> means;
    for (int64_t nc = 0; nc < 6; ++nc) {
      double acc = 0;
      for (int64_t i = 0; i < 56; ++i)
        acc += x.data[size_t(nc * 56 + i)];
      means.push_back(float(acc / 56));
    }
    EXPECT_CLOSE(out.outputs.at(gp), Shape({2, 3, 1, 1}), means);
  }

  void dataMovement() {
    REQUIRE_TORCH();
    GraphBuilder b("move");
    b.input("x", {2, 3, 4});
    b.input("y", {4, 2});
    const std::string t = b.node("t", "Transpose", {"x"}, {{"perm", Shape{2, 0, 1}}});  // [4, 2, 3]
    const std::string r = b.node("r", "Reshape", {t, b.ints("shape", {0, -1})});        // [4, 6]
    const std::string c = b.node("c", "Concat", {r, "y"}, {{"axis", int64_t(-1)}});     // [4, 8]
    // Rows 0, 2; columns 7, 5, 3, 1.
    const std::string s = b.node("s", "Slice",
                                 {c, b.ints("starts", {0, -1}), b.ints("ends", {4, -100}), b.ints("axes", {0, 1}),
                                  b.ints("steps", {2, -2})});  // [2, 4]
    const std::string ga =
        b.node("ga", "Gather", {s, b.ints("idx", {2, 2}, {3, -1, 0, 1})}, {{"axis", int64_t(1)}});  // [2, 2, 2]
    const std::string u = b.node("u", "Unsqueeze", {ga, b.ints("uaxes", {0, 3})});                  // [1, 2, 2, 1, 2]
    const std::string sq = b.node("sq", "Squeeze", {u, b.ints("saxes", {0})});                      // [2, 2, 1, 2]
    const std::vector<std::string> parts =
        b.nodeN("sp", "Split", {"x", b.ints("split", {1, 3})}, 2, {{"axis", int64_t(2)}});  // [2,3,1], [2,3,3]
    const std::string fl = b.node("fl", "Flatten", {parts[1]}, {{"axis", int64_t(2)}});     // [6, 3]
    b.output(sq);
    b.output(parts[0]);
    b.output(fl);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 3, 4}, 7), y = randomTensor({4, 2}, 8);
    const auto out = run(g, {{"x", x}, {"y", y}});

    // c[i][j]: j < 6 -> t[i][j / 3][j % 3] = x[j / 3][j % 3][i]; else y[i][j - 6].
    auto cAt = [&](int64_t i, int64_t j) {
      return j < 6 ? x.data[size_t((j / 3) * 12 + (j % 3) * 4 + i)] : y.data[size_t(i * 2 + j - 6)];
    };
    const Shape rows = {0, 2}, cols = {7, 5, 3, 1}, idx = {3, 3, 0, 1};  // -1 -> 3
    std::vector<float> wantSq;
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t k = 0; k < 2; ++k)
          wantSq.push_back(cAt(rows[size_t(a)], cols[size_t(idx[size_t(i * 2 + k)])]));
    EXPECT_CLOSE(out.outputs.at(sq), Shape({2, 2, 1, 2}), wantSq);
    const Shape xs = {2, 3, 4};
    EXPECT_CLOSE(out.outputs.at(parts[0]), Shape({2, 3, 1}),
                 remap(x.data, {2, 3, 1}, [](const Shape& i) { return i[0] * 12 + i[1] * 4; }));
    EXPECT_CLOSE(out.outputs.at(fl), Shape({6, 3}),
                 remap(x.data, {6, 3}, [](const Shape& i) { return (i[0] / 3) * 12 + (i[0] % 3) * 4 + 1 + i[1]; }));
  }

  // Resize under the coordinate modes exporters write: ATen's interpolate
  // (nearest x2, bilinear half_pixel / align_corners) and the gather path
  // (nearest half_pixel rounding, downscaling by a float scale).
  void resize() {
    REQUIRE_TORCH();
    GraphBuilder b("resize");
    b.input("x", {1, 2, 5, 7});
    auto resize = [&](const std::string& name, const std::string& mode, const std::string& coords,
                      const std::string& rounding, const Shape& sizes, std::vector<float> scales) {
      std::vector<std::string> in = {"x", ""};
      if (scales.empty())
        in.insert(in.end(), {"", b.ints(name + "_sizes", sizes)});
      else
        in.push_back(b.floats(name + "_scales", {4}, scales));
      const std::string out = b.node(
          name, "Resize", in, {{"mode", mode}, {"coordinate_transformation_mode", coords}, {"nearest_mode", rounding}});
      b.output(out);
      return out;
    };
    const std::string near2 = resize("near2", "nearest", "asymmetric", "floor", {}, {1, 1, 2, 2});
    const std::string half = resize("half", "linear", "half_pixel", "", {1, 2, 9, 13}, {});
    const std::string corners = resize("corners", "linear", "align_corners", "", {1, 2, 8, 3}, {});
    const std::string ceil = resize("ceil", "nearest", "half_pixel", "round_prefer_ceil", {1, 2, 3, 12}, {});
    const std::string down = resize("down", "linear", "pytorch_half_pixel", "", {}, {1, 1, 0.6f, 0.5f});
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({1, 2, 5, 7}, 21);
    const auto out = run(g, {{"x", x}});
    auto halfPixel = [](double scale) -> Coordinate {
      return [scale](int64_t i, int64_t in, int64_t len) {
        return (double(i) + 0.5) / (scale > 0 ? scale : double(len) / double(in)) - 0.5;
      };
    };
    const Coordinate byTwo = [](int64_t i, int64_t, int64_t) { return double(i) / 2; };
    const Coordinate corner = [](int64_t i, int64_t in, int64_t len) {
      return double(i) * double(in - 1) / double(len - 1);
    };
    auto floorRound = [](double c) { return int64_t(std::floor(c)); };
    EXPECT_CLOSE(out.outputs.at(near2), Shape({1, 2, 10, 14}), resizeRef(x, 10, 14, byTwo, byTwo, false, floorRound));
    EXPECT_CLOSE(out.outputs.at(half), Shape({1, 2, 9, 13}),
                 resizeRef(x, 9, 13, halfPixel(0), halfPixel(0), true, floorRound));
    EXPECT_CLOSE(out.outputs.at(corners), Shape({1, 2, 8, 3}), resizeRef(x, 8, 3, corner, corner, true, floorRound));
    // round_prefer_ceil: halves go up.
    EXPECT_CLOSE(
        out.outputs.at(ceil), Shape({1, 2, 3, 12}),
        resizeRef(x, 3, 12, halfPixel(0), halfPixel(0), false, [](double c) { return int64_t(std::floor(c + 0.5)); }));
    // 5 x 0.6 = 3 rows, 7 x 0.5 = 3 columns: the coordinates use the scales given.
    EXPECT_CLOSE(out.outputs.at(down), Shape({1, 2, 3, 3}),
                 resizeRef(x, 3, 3, halfPixel(0.6), halfPixel(0.5), true, floorRound));
  }

  void elementwise() {
    REQUIRE_TORCH();
    GraphBuilder b("ew");
    b.input("x", {2, 3, 4});
    b.weight("v", {4}, 1.0f);
    b.scalar("two", 2.0f);
    b.scalar("lo", -0.3f);
    b.scalar("hi", 0.4f);
    const std::string add = b.node("add", "Add", {"x", "v"});
    const std::string sub = b.node("sub", "Sub", {"v", "x"});
    const std::string mul = b.node("mul", "Mul", {"x", "v"});
    const std::string div = b.node("div", "Div", {"x", b.node("den", "Add", {b.node("ab", "Abs", {"v"}), "two"})});
    const std::string pw = b.node("pw", "Pow", {"x", "two"});
    const std::string sq = b.node("sq", "Sqrt", {b.node("ax", "Abs", {"x"})});
    const std::string clip = b.node("clip", "Clip", {"x", "lo", "hi"});
    const std::string gelu = b.node("gelu", "Gelu", {"x"});
    const std::string gelut = b.node("gelut", "Gelu", {"x"}, {{"approximate", std::string("tanh")}});
    const std::string erf = b.node("erf", "Erf", {"x"});
    const std::string sig = b.node("sig", "Sigmoid", {"x"});
    const std::string th = b.node("th", "Tanh", {"x"});
    const std::string mx = b.node("mx", "Max", {"x", "v"});
    const std::string mn = b.node("mn", "Min", {"x", "v"});
    const std::string rm =
        b.node("rm", "ReduceMean", {"x", b.ints("raxes", {-1})}, {{"keepdims", int64_t(1)}});  // [2, 3, 1]
    const std::string pad = b.node("pad", "Pad", {"x", b.ints("pads", {0, 0, 1, 0, 0, 2})},
                                   {{"mode", std::string("reflect")}});  // [2, 3, 7]
    const std::string edge = b.node("edge", "Pad", {"x", b.ints("epads", {0, 1, 0, 0, 0, 1})},
                                    {{"mode", std::string("edge")}});  // [2, 4, 5]
    for (const std::string& o : {add, sub, mul, div, pw, sq, clip, gelu, gelut, erf, sig, th, mx, mn, rm, pad, edge})
      b.output(o);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 3, 4}, 9, -2, 2);
    const auto out = run(g, {{"x", x}});
    const std::vector<float> v = initData(g, "v");
    auto each = [&](const std::function<double(double, double)>& f) {
      std::vector<float> r;
      for (size_t i = 0; i < x.data.size(); ++i)
        r.push_back(float(f(x.data[i], v[i % 4])));
      return r;
    };
    const Shape s = {2, 3, 4};
    EXPECT_CLOSE(out.outputs.at(add), s, each([](double a, double c) { return a + c; }));
    EXPECT_CLOSE(out.outputs.at(sub), s, each([](double a, double c) { return c - a; }));
    EXPECT_CLOSE(out.outputs.at(mul), s, each([](double a, double c) { return a * c; }));
    EXPECT_CLOSE(out.outputs.at(div), s, each([](double a, double c) { return a / (std::abs(c) + 2); }));
    EXPECT_CLOSE(out.outputs.at(pw), s, each([](double a, double) { return a * a; }));
    EXPECT_CLOSE(out.outputs.at(sq), s, each([](double a, double) { return std::sqrt(std::abs(a)); }));
    EXPECT_CLOSE(out.outputs.at(clip), s, each([](double a, double) { return std::clamp(a, -0.3, 0.4); }));
    EXPECT_CLOSE(out.outputs.at(gelu), s,
                 each([](double a, double) { return 0.5 * a * (1 + std::erf(a / std::sqrt(2.0))); }));
    EXPECT_CLOSE(out.outputs.at(gelut), s, each([](double a, double) {
                   return 0.5 * a * (1 + std::tanh(std::sqrt(2 / M_PI) * (a + 0.044715 * a * a * a)));
                 }));
    EXPECT_CLOSE(out.outputs.at(erf), s, each([](double a, double) { return std::erf(a); }));
    EXPECT_CLOSE(out.outputs.at(sig), s, each([](double a, double) { return 1 / (1 + std::exp(-a)); }));
    EXPECT_CLOSE(out.outputs.at(th), s, each([](double a, double) { return std::tanh(a); }));
    EXPECT_CLOSE(out.outputs.at(mx), s, each([](double a, double c) { return std::max(a, c); }));
    EXPECT_CLOSE(out.outputs.at(mn), s, each([](double a, double c) { return std::min(a, c); }));
    std::vector<float> means;
    for (size_t row = 0; row < 24; row += 4)
      means.push_back((x.data[row] + x.data[row + 1] + x.data[row + 2] + x.data[row + 3]) / 4);
    EXPECT_CLOSE(out.outputs.at(rm), Shape({2, 3, 1}), means);
    // reflect [1 | a b c d | 2]: index -1 -> 1, 4 -> 2, 5 -> 1.
    const int64_t reflect[] = {1, 0, 1, 2, 3, 2, 1};
    EXPECT_CLOSE(out.outputs.at(pad), Shape({2, 3, 7}),
                 remap(x.data, {2, 3, 7}, [&](const Shape& i) { return i[0] * 12 + i[1] * 4 + reflect[i[2]]; }));
    EXPECT_CLOSE(out.outputs.at(edge), Shape({2, 4, 5}), remap(x.data, {2, 4, 5}, [](const Shape& i) {
                   return i[0] * 12 + std::clamp<int64_t>(i[1] - 1, 0, 2) * 4 + std::min<int64_t>(i[2], 3);
                 }));
  }

  void batchNormAndTiming() {
    REQUIRE_TORCH();
    GraphBuilder b("bn");
    b.input("x", {2, 3, 4, 4});
    b.weight("scale", {3}, 1.0f);
    b.weight("bias", {3}, 1.0f);
    b.weight("mean", {3}, 1.0f);
    b.floats("var", {3}, {0.5f, 1.0f, 2.0f});
    const std::string y = b.node("y", "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {{"epsilon", 1e-3}});
    b.output(y);
    const graph::Graph g = b.finish();
    const HostTensor x = randomTensor({2, 3, 4, 4}, 10);
    const auto out = reference::runWithLibTorch(g, {{"x", x}}, 1, 3);
    QVERIFY(out.seconds > 0);
    const std::vector<float> sc = initData(g, "scale"), bi = initData(g, "bias"), mu = initData(g, "mean");
    const float var[] = {0.5f, 1.0f, 2.0f};
    std::vector<float> bn(x.data.size());
    for (size_t i = 0; i < bn.size(); ++i) {
      const size_t c = (i / 16) % 3;
      bn[i] = float((x.data[i] - mu[c]) / std::sqrt(double(var[c]) + 1e-3) * sc[c] + bi[c]);
    }
    EXPECT_CLOSE(out.outputs.at(y), Shape({2, 3, 4, 4}), bn);
  }

  void errors() {
    REQUIRE_TORCH();
    graph::Graph g;
    g.name = "bad";
    g.inputs.push_back(graph::ValueInfo{"x", {2, 2}, graph::DType::Float32});
    g.nodes.push_back(graph::Node{"weird", "Frobnicate", {"x"}, {"y"}, {}});
    g.outputs.push_back("y");
    try {
      run(g, {{"x", randomTensor({2, 2}, 11)}});
      QFAIL("an unknown op must throw");
    } catch (const graph::GraphError& e) {
      QVERIFY2(std::string(e.what()).find("node 'weird' (Frobnicate)") != std::string::npos, e.what());
    }
    // A missing input names it.
    GraphBuilder b("ok");
    b.input("x", {2, 2});
    b.output(b.node("r", "Relu", {"x"}));
    const graph::Graph ok = b.finish();
    QVERIFY_THROWS_EXCEPTION(graph::GraphError, run(ok, {}));
    QVERIFY_THROWS_EXCEPTION(graph::GraphError, run(ok, {{"x", randomTensor({3, 2}, 12)}}));
  }

  // ---- TorchScript ---------------------------------------------------------------

  void torchscriptConvNet() {
    REQUIRE_TORCHSCRIPT_WRITER();
#ifdef TESSEL_TEST_HAVE_TORCH
    const std::string path = dir_.filePath("convnet.pt").toStdString();
    testing::writeConvNet(path);
    const graph::Graph g = frontend::importTorchScript(path, {{ 2, 3, 8, 8 }});
    std::multiset<std::string> ops;
    for (const graph::Node& n : g.nodes)
      ops.insert(n.op);
    const std::multiset<std::string> expected = {
        "Conv", "BatchNormalization", "Relu", "MaxPool", "GlobalAveragePool", "Flatten", "Gemm"};
    QCOMPARE(ops, expected);
    QCOMPARE(g.outputs.size(), size_t(1));
    QCOMPARE(g.value(g.outputs[0]).shape, Shape({2, 10}));
    // Conv 8x3x3x3 + 8, BN 8 + 8 (the running statistics are buffers), linear 10x8 + 10.
    QCOMPARE(g.parameterCount(), int64_t(216 + 8 + 16 + 80 + 10));
    const HostTensor x = randomTensor({2, 3, 8, 8}, 13);
    const testing::ModuleOutput want = testing::runModule(path, {x.shape}, {x.data});
    const auto out = run(g, {{ g.inputs[0].name, x }});
    EXPECT_CLOSE(out.outputs.at(g.outputs[0]), want.shape, want.data);
#endif
  }

  void torchscriptAttention() {
    REQUIRE_TORCHSCRIPT_WRITER();
#ifdef TESSEL_TEST_HAVE_TORCH
    const std::string path = dir_.filePath("attention.pt").toStdString();
    testing::writeAttention(path);
    const graph::Graph g = frontend::importTorchScript(path, {{ 2, 5, 8 }});
    std::set<std::string> ops;
    size_t matmuls = 0;
    for (const graph::Node& n : g.nodes) {
      ops.insert(n.op);
      matmuls += n.op == "MatMul";
    }
    for (const char* op : {"MatMul", "Softmax", "Transpose", "Reshape", "Mul", "Add", "LayerNormalization", "Gelu"})
      QVERIFY2(ops.count(op), op);
    // q, k, v, output projections (3-D linear: MatMul + Add) and the two attention products.
    QCOMPARE(matmuls, size_t(6));
    for (const std::string& op : ops)
      QVERIFY2(graph::isSupportedOp(op), op.c_str());
    QCOMPARE(g.value(g.outputs.at(0)).shape, Shape({2, 5, 8}));
    const HostTensor x = randomTensor({2, 5, 8}, 14);
    const testing::ModuleOutput want = testing::runModule(path, {x.shape}, {x.data});
    const auto out = run(g, {{ g.inputs[0].name, x }});
    EXPECT_CLOSE(out.outputs.at(g.outputs[0]), want.shape, want.data);
#endif
  }

  void torchscriptMisc() {
    REQUIRE_TORCHSCRIPT_WRITER();
#ifdef TESSEL_TEST_HAVE_TORCH
    const std::string path = dir_.filePath("misc.pt").toStdString();
    testing::writeMisc(path);
    const graph::Graph g = frontend::importTorchScript(path, {{ 2, 4, 6, 6 }});
    std::set<std::string> ops;
    for (const graph::Node& n : g.nodes)
      ops.insert(n.op);
    for (const char* op :
         {"AveragePool", "Relu", "Sigmoid", "Tanh", "Sub", "Add", "Mul", "Div", "Concat", "Reshape", "Gemm", "MatMul",
          "Split", "Slice", "Gather", "Unsqueeze", "ReduceMean", "MaxPool", "Flatten"})
      QVERIFY2(ops.count(op), op);
    const HostTensor x = randomTensor({2, 4, 6, 6}, 15);
    const testing::ModuleOutput want = testing::runModule(path, {x.shape}, {x.data});
    const auto out = run(g, {{ g.inputs[0].name, x }});
    EXPECT_CLOSE(out.outputs.at(g.outputs[0]), want.shape, want.data);
#endif
  }

  void torchscriptUpsample() {
    REQUIRE_TORCHSCRIPT_WRITER();
#ifdef TESSEL_TEST_HAVE_TORCH
    const std::string path = dir_.filePath("upsample.pt").toStdString();
    testing::writeUpsample(path);
    const graph::Graph g = frontend::importTorchScript(path, {{ 1, 2, 5, 7 }});
    int resizes = 0;
    for (const graph::Node& n : g.nodes)
      resizes += n.op == "Resize";
    QCOMPARE(resizes, 5);
    const HostTensor x = randomTensor({1, 2, 5, 7}, 16);
    const testing::ModuleOutput want = testing::runModule(path, {x.shape}, {x.data});
    const auto out = run(g, {{ g.inputs[0].name, x }});
    EXPECT_CLOSE(out.outputs.at(g.outputs[0]), want.shape, want.data);
#endif
  }

  void torchscriptErrors() {
    REQUIRE_TORCHSCRIPT_WRITER();
#ifdef TESSEL_TEST_HAVE_TORCH
    auto message = [](const std::function<void()>& f) -> std::string {
      try {
        f();
      } catch (const graph::GraphError& e) {
        return e.what();
      }
      return "";
    };
    const std::string missing = dir_.filePath("missing.pt").toStdString();
    std::string what = message([&] { frontend::importTorchScript(missing, {{ 1 }}); });
    QVERIFY2(what.find(missing) != std::string::npos, what.c_str());

    const std::string garbage = dir_.filePath("garbage.pt").toStdString();
    std::ofstream(garbage) << "this is not a TorchScript archive";
    what = message([&] { frontend::importTorchScript(garbage, {{ 1 }}); });
    QVERIFY2(what.find(garbage) != std::string::npos, what.c_str());

    const std::string path = dir_.filePath("unsupported.pt").toStdString();
    testing::writeUnsupported(path);
    what = message([&] { frontend::importTorchScript(path, {{ 2, 3 }}); });
    QVERIFY2(what.find("unsupported TorchScript op 'aten::cumsum' at ") != std::string::npos, what.c_str());
    QVERIFY2(what.find("cumsum(y, 1)") != std::string::npos, what.c_str());  // the source position

    // forward takes one tensor: two shapes are an error.
    what = message([&] { frontend::importTorchScript(path, {{2, 3}, { 2, 3 }}); });
    QVERIFY2(what.find("input shapes") != std::string::npos, what.c_str());

    // An archive whose pickle the fuzzer damaged: LibTorch's loader corrupts
    // its heap on it (an abort in this process before the fix); now a clear
    // error, and this process goes on.
    const std::string damaged = TESSEL_TEST_FUZZ_REGRESSIONS "/torchscript/unpickler_heap_corruption.pt";
    what = message([&] { frontend::importTorchScript(damaged, {{ 1, 8 }}); });
    QVERIFY2(what.find(damaged) != std::string::npos, what.c_str());
#endif
  }

 private:
  QTemporaryDir dir_;
};

QTEST_APPLESS_MAIN(TestReference)
#include "test_reference.moc"
