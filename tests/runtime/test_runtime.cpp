// The graph executor on every supported op (te lowering, compilation) against
// references computed here with plain loops.
#include <QtTest>

#include "runtime_test_support.h"
#include "tessel_test.h"

using namespace runtime_test;

class TestRuntime : public QObject {
  Q_OBJECT

 private slots:
  // Generated min/max are inline comparisons (not fminf/fmaxf): a NaN in either
  // operand of Relu, Clip, Max or Min comes out as NaN, as in PyTorch.
  void minMaxPropagateNan() {
    Builder b;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    b.input("x", {16});
    b.input("y", {16});
    b.feeds["x"].data[3] = nan;
    b.feeds["y"].data[9] = nan;
    b.weight("lo", {});
    b.g.initializers["lo"].data = {-0.25f};
    b.weight("hi", {});
    b.g.initializers["hi"].data = {0.5f};
    for (const char* op : {"Relu", "Clip", "Max", "Min"}) {
      std::vector<std::string> ins = {"x"};
      if (std::string(op) == "Clip") ins = {"x", "lo", "hi"};
      if (std::string(op) == "Max" || std::string(op) == "Min") ins = {"x", "y"};
      b.node(op, ins, {op}, {{16}});
      b.g.outputs.push_back(op);
    }
    GraphExecutor ex(b.g, {});
    auto out = ex.run(b.feeds);
    const std::vector<float>&x = b.feeds["x"].data, &y = b.feeds["y"].data;
    for (size_t i = 0; i < 16; ++i) {
      const bool xn = i == 3, yn = i == 9;
      QCOMPARE(std::isnan(out["Relu"].data[i]), xn);
      QCOMPARE(std::isnan(out["Clip"].data[i]), xn);
      QCOMPARE(std::isnan(out["Max"].data[i]), xn || yn);
      QCOMPARE(std::isnan(out["Min"].data[i]), xn || yn);
      if (xn || yn) continue;
      QCOMPARE(out["Relu"].data[i], std::max(x[i], 0.f));
      QCOMPARE(out["Clip"].data[i], std::min(std::max(x[i], -0.25f), 0.5f));
      QCOMPARE(out["Max"].data[i], std::max(x[i], y[i]));
      QCOMPARE(out["Min"].data[i], std::min(x[i], y[i]));
    }
  }

  // The executor's kernels go through the kernel cache: the same graph run
  // again (another process, a model exported in another format) loads them
  // and computes the same, without a new entry.
  void aGraphBuiltAgainLoadsItsKernels() {
    QTemporaryDir cache;
    qputenv("TESSEL_KERNEL_CACHE", cache.path().toUtf8());
    Builder b;
    b.input("x", {4, 8});
    b.node("Relu", {"x"}, {"r"}, {{4, 8}});
    b.node("Exp", {"r"}, {"y"}, {{4, 8}});
    b.g.outputs.push_back("y");
    auto count = [&] { return QDir(cache.path()).entryList({"*.so"}, QDir::Files).size(); };
    std::map<std::string, HostTensor> first;
    {
      GraphExecutor ex(b.g, {});
      first = ex.run(b.feeds);
    }
    const qsizetype built = count();
    QVERIFY(built > 0);
    GraphExecutor again(b.g, {});
    QCOMPARE(again.run(b.feeds)["y"].data, first["y"].data);
    QCOMPARE(count(), built);
    qunsetenv("TESSEL_KERNEL_CACHE");
  }

  // Groups that lower to the same code share one kernel, found in the cache
  // by its code wherever it stands in another graph.
  void repeatedGroupsShareOneKernel() {
    QTemporaryDir cache;
    qputenv("TESSEL_KERNEL_CACHE", cache.path().toUtf8());
    auto count = [&] { return QDir(cache.path()).entryList({"*.so"}, QDir::Files).size(); };
    Builder b;
    b.input("x", {4, 8});
    b.node("Relu", {"x"}, {"r1"}, {{4, 8}});
    b.node("Relu", {"r1"}, {"r2"}, {{4, 8}});
    b.node("Relu", {"r2"}, {"r3"}, {{4, 8}});
    b.node("Exp", {"r3"}, {"y"}, {{4, 8}});
    b.g.outputs.push_back("y");
    GraphExecutor ex(b.g, {});
    const std::vector<float> y = ex.run(b.feeds)["y"].data;
    const std::vector<float>& x = b.feeds.at("x").data;
    QCOMPARE(y.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i)
      QVERIFY(std::abs(y[i] - std::exp(std::max(x[i], 0.f))) <= 1e-5f * std::max(1.f, std::abs(y[i])));
    QCOMPARE(count(), 2);  // Relu's kernel and Exp's, each compiled once

    Builder other;  // the same kernels in another order
    other.input("x", {4, 8});
    other.node("Exp", {"x"}, {"e"}, {{4, 8}});
    other.node("Relu", {"e"}, {"y"}, {{4, 8}});
    other.g.outputs.push_back("y");
    GraphExecutor again(other.g, {});
    const std::vector<float> z = again.run(other.feeds)["y"].data;
    const std::vector<float>& x2 = other.feeds.at("x").data;
    QCOMPARE(z.size(), x2.size());
    for (size_t i = 0; i < x2.size(); ++i)
      QVERIFY(std::abs(z[i] - std::exp(x2[i])) <= 1e-5f * std::max(1.f, std::abs(z[i])));
    QCOMPARE(count(), 2);
    qunsetenv("TESSEL_KERNEL_CACHE");
  }

  void elementwise() {
    Builder b;
    Arr x = b.input("x", {2, 3, 4});
    Arr y = b.input("y", {3, 1});
    Arr z = b.input("z", {2, 1, 4});
    Arr pos = b.input("pos", {2, 3, 4}, 0.5f, 2.f);
    Arr s = b.weight("s", {}, 0.5f, 1.5f);
    Arr two = b.weight("two", {1});
    two.data = {2.f};
    b.g.initializers["two"].data = {2.f};
    Arr lo = b.weight("lo", {});
    lo.data = {-0.3f};
    b.g.initializers["lo"].data = {-0.3f};
    Arr hi = b.weight("hi", {});
    hi.data = {0.4f};
    b.g.initializers["hi"].data = {0.4f};
    Shape o = {2, 3, 4};
    b.check("Add", {"x", "y"}, "add", binaryRef(x, y, o, [](float a, float c) { return a + c; }));
    b.check("Mul", {"z", "y"}, "mul", binaryRef(z, y, {2, 3, 4}, [](float a, float c) { return a * c; }));
    b.check("Sub", {"y", "x"}, "sub", binaryRef(y, x, o, [](float a, float c) { return a - c; }));
    b.check("Div", {"x", "s"}, "div", binaryRef(x, s, o, [](float a, float c) { return a / c; }));
    b.check("Pow", {"x", "two"}, "pow2", binaryRef(x, two, o, [](float a, float c) { return std::pow(a, c); }));
    b.check("Pow", {"pos", "z"}, "powt", binaryRef(pos, z, o, [](float a, float c) { return std::pow(a, c); }));
    b.check("Max", {"x", "y", "z"}, "max",
            binaryRef(binaryRef(x, y, o, [](float a, float c) { return std::max(a, c); }), z, o,
                      [](float a, float c) { return std::max(a, c); }));
    b.check("Min", {"x", "z"}, "min", binaryRef(x, z, o, [](float a, float c) { return std::min(a, c); }));
    b.check("Relu", {"x"}, "relu", mapArr(x, [](float v) { return std::max(v, 0.f); }));
    b.check("Clip", {"x", "lo", "hi"}, "clip", mapArr(x, [](float v) { return std::min(std::max(v, -0.3f), 0.4f); }));
    b.check("Clip", {"x", "", "hi"}, "clip_hi", mapArr(x, [](float v) { return std::min(v, 0.4f); }));
    b.check("Sigmoid", {"x"}, "sigmoid", mapArr(x, [](float v) { return 1.f / (1.f + std::exp(-v)); }));
    b.check("Tanh", {"x"}, "tanh", mapArr(x, [](float v) { return std::tanh(v); }));
    b.check("Erf", {"x"}, "erf", mapArr(x, [](float v) { return std::erf(v); }));
    b.check("Gelu", {"x"}, "gelu", mapArr(x, [](float v) { return 0.5f * v * (1.f + std::erf(v / std::sqrt(2.f))); }));
    b.check("Gelu", {"x"}, "gelu_tanh",
            mapArr(x,
                   [](float v) {
                     return 0.5f * v * (1.f + std::tanh(std::sqrt(2.f / float(M_PI)) * (v + 0.044715f * v * v * v)));
                   }),
            {{"approximate", std::string("tanh")}});
    b.check("Exp", {"x"}, "exp", mapArr(x, [](float v) { return std::exp(v); }));
    b.check("Neg", {"x"}, "neg", mapArr(x, [](float v) { return -v; }));
    b.check("Abs", {"x"}, "abs", mapArr(x, [](float v) { return std::fabs(v); }));
    b.check("Reciprocal", {"pos"}, "recip", mapArr(pos, [](float v) { return 1.f / v; }));
    b.check("Sqrt", {"pos"}, "sqrt", mapArr(pos, [](float v) { return std::sqrt(v); }));
    b.check("Identity", {"x"}, "ident", x);
    b.check("Dropout", {"x"}, "drop", x);
    b.check("Cast", {"x"}, "cast", x, {{"to", int64_t(1)}});
    runAndCheck(b);
  }

  // The ops of exported models, each its own kernel, against plain loops.
  void exportedModelOps() {
    Builder b;
    Arr x = b.input("x", {2, 3, 4}, -3.f, 3.f);
    Arr y = b.input("y", {3, 1}, -3.f, 3.f);
    Arr pos = b.input("pos", {2, 3, 4}, 0.5f, 2.f);
    const Shape o = {2, 3, 4};
    auto hardSigmoid = [](float v) { return std::clamp(v / 6.f + 0.5f, 0.f, 1.f); };
    b.check("HardSigmoid", {"x"}, "hsig", mapArr(x, hardSigmoid), {{"alpha", 1.0 / 6.0}, {"beta", 0.5}});
    b.check("HardSwish", {"x"}, "hswish", mapArr(x, [&](float v) { return v * hardSigmoid(v); }));
    b.check("LeakyRelu", {"x"}, "leaky", mapArr(x, [](float v) { return v < 0 ? 0.1f * v : v; }), {{"alpha", 0.1}});
    b.check("Elu", {"x"}, "elu", mapArr(x, [](float v) { return v < 0 ? std::expm1(v) : v; }));
    b.check("Softplus", {"x"}, "softplus", mapArr(x, [](float v) { return std::log1p(std::exp(v)); }));
    b.check("Log", {"pos"}, "log", mapArr(pos, [](float v) { return std::log(v); }));
    b.check("Mod", {"x", "y"}, "fmod", binaryRef(x, y, o, [](float a, float c) { return std::fmod(a, c); }),
            {{"fmod", int64_t(1)}});
    // A condition computed by one kernel (0 / 1) and read by another.
    b.node("Greater", {"x", "y"}, {"gt"}, {o});
    b.g.values["gt"].dtype = graph::DType::Bool;
    b.check("Where", {"gt", "x", "y"}, "where", binaryRef(x, y, o, [](float a, float c) { return a > c ? a : c; }));
    b.check("Equal", {"x", "x"}, "same", mapArr(x, [](float) { return 1.f; }));
    b.ints("expand_shape", {2, 3, 5});
    Arr expanded = zeros({2, 3, 5});
    forEach(expanded.shape, [&](const Shape& i) { expanded.at(i) = y.at({i[1], 0}); });
    b.check("Expand", {"y", "expand_shape"}, "expand", expanded);
    b.ints("repeats", {1, 2, 3});
    Arr tiled = zeros({2, 6, 12});
    forEach(tiled.shape, [&](const Shape& i) { tiled.at(i) = x.at({i[0], i[1] % 3, i[2] % 4}); });
    b.check("Tile", {"x", "repeats"}, "tile", tiled);
    b.ints("k", {1}, {});
    Arr upper = x;
    forEach(o, [&](const Shape& i) { upper.at(i) = i[2] - i[1] >= 1 ? x.at(i) : 0.f; });
    b.check("Trilu", {"x", "k"}, "triu", upper);
    // Reductions over the last axis: log-sum-exp (shifted by the maximum), L2, log-softmax.
    b.ints("last", {-1});
    Arr lse = zeros({2, 3, 1}), l2 = zeros({2, 3, 1}), logSoftmax = zeros(o);
    forEach({2, 3}, [&](const Shape& r) {
      double sum = 0, squares = 0;
      for (int64_t k = 0; k < 4; ++k) {
        sum += std::exp(double(x.at({r[0], r[1], k})));
        squares += double(x.at({r[0], r[1], k})) * x.at({r[0], r[1], k});
      }
      lse.at({r[0], r[1], 0}) = float(std::log(sum));
      l2.at({r[0], r[1], 0}) = float(std::sqrt(squares));
      for (int64_t k = 0; k < 4; ++k)
        logSoftmax.at({r[0], r[1], k}) = float(x.at({r[0], r[1], k}) - std::log(sum));
    });
    b.check("ReduceLogSumExp", {"x", "last"}, "lse", lse);
    b.check("ReduceL2", {"x", "last"}, "l2", l2);
    b.check("LogSoftmax", {"x"}, "log_softmax", logSoftmax);
    // Instance norm: each (n, c) over its spatial axes.
    Arr img = b.input("img", {2, 3, 2, 3});
    Arr gamma = b.weight("gamma", {3}), beta = b.weight("beta", {3});
    Arr inorm = zeros(img.shape);
    forEach({2, 3}, [&](const Shape& nc) {
      double mean = 0, var = 0;
      forEach({2, 3}, [&](const Shape& hw) { mean += img.at({nc[0], nc[1], hw[0], hw[1]}) / 6.0; });
      forEach({2, 3}, [&](const Shape& hw) {
        const double d = img.at({nc[0], nc[1], hw[0], hw[1]}) - mean;
        var += d * d / 6.0;
      });
      forEach({2, 3}, [&](const Shape& hw) {
        const Shape i = {nc[0], nc[1], hw[0], hw[1]};
        inorm.at(i) =
            float((img.at(i) - mean) / std::sqrt(var + 1e-5) * gamma.data[size_t(nc[1])] + beta.data[size_t(nc[1])]);
      });
    });
    b.check("InstanceNormalization", {"img", "gamma", "beta"}, "inorm", inorm);
    runAndCheck(b);
  }

  // Resize lowered to index expressions: align_corners 3 -> 5 rows (period
  // 2) and 4 -> 7 columns (period 6: a select over residues), and nearest x2
  // of a computed value (the producer's kernel feeds the resize).
  void resize() {
    Builder b;
    Arr x = b.input("x", {1, 2, 3, 4});
    b.ints("corner_sizes", {1, 2, 5, 7});
    Arr corners = zeros({1, 2, 5, 7});
    forEach(corners.shape, [&](const Shape& i) {
      const double r = double(i[2]) * 2 / 4, c = double(i[3]) * 3 / 6;
      const int64_t r0 = int64_t(r), c0 = int64_t(c);
      const int64_t r1 = std::min<int64_t>(r0 + 1, 2), c1 = std::min<int64_t>(c0 + 1, 3);
      const double tr = r - double(r0), tc = c - double(c0);
      auto at = [&](int64_t rr, int64_t cc) { return double(x.at({0, i[1], rr, cc})); };
      corners.at(i) =
          float((1 - tr) * ((1 - tc) * at(r0, c0) + tc * at(r0, c1)) + tr * ((1 - tc) * at(r1, c0) + tc * at(r1, c1)));
    });
    b.check("Resize", {"x", "", "", "corner_sizes"}, "corners", corners,
            {{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("align_corners")}});
    b.node("Relu", {"x"}, {"rx"}, {{1, 2, 3, 4}});
    graph::Initializer scales;
    scales.info = {"scales", {4}, graph::DType::Float32};
    scales.data = {1, 1, 2, 2};
    b.g.initializers["scales"] = scales;
    b.g.values["scales"] = scales.info;
    Arr doubled = zeros({1, 2, 6, 8});
    forEach(doubled.shape, [&](const Shape& i) { doubled.at(i) = std::max(0.f, x.at({0, i[1], i[2] / 2, i[3] / 2})); });
    b.check("Resize", {"rx", "", "scales"}, "doubled", doubled,
            {{"coordinate_transformation_mode", std::string("asymmetric")}, {"nearest_mode", std::string("floor")}});
    runAndCheck(b);
  }

  void constantNode() {
    Builder b;
    Arr x = b.input("x", {3, 4});
    b.node("Constant", {}, {"c"}, {{}}, {{"value_float", 1.5}});
    b.node("Constant", {}, {"cv"}, {{4}}, {{"value_floats", std::vector<double>{1, 2, 3, 4}}});
    b.check("Mul", {"x", "c"}, "m", mapArr(x, [](float v) { return v * 1.5f; }));
    Arr cv{{4}, {1, 2, 3, 4}};
    b.check("Add", {"x", "cv"}, "a", binaryRef(x, cv, {3, 4}, [](float a, float c) { return a + c; }));
    runAndCheck(b);
  }

  void conv() {
    Builder b;
    Arr x = b.input("x", {1, 4, 7, 7});
    Arr w1 = b.weight("w1", {6, 4, 3, 3});
    Arr b1 = b.weight("b1", {6});
    Arr w2 = b.weight("w2", {6, 2, 3, 3});
    Arr w3 = b.weight("w3", {4, 1, 3, 3});
    Arr w4 = b.weight("w4", {5, 4, 1, 1});
    Arr w5 = b.weight("w5", {3, 4, 2, 3});
    ConvP p1;
    p1.sh = p1.sw = 2;
    p1.pt = p1.pl = p1.pb = p1.pr = 1;
    b.check("Conv", {"x", "w1", "b1"}, "c1", convRef(x, w1, &b1, p1),
            {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    ConvP p2;
    p2.groups = 2;
    p2.dh = p2.dw = 2;
    p2.pt = 0, p2.pl = 1, p2.pb = 1, p2.pr = 0;
    b.check("Conv", {"x", "w2"}, "c2", convRef(x, w2, nullptr, p2),
            {{"group", int64_t(2)},
             {"dilations", std::vector<int64_t>{2, 2}},
             {"pads", std::vector<int64_t>{0, 1, 1, 0}},
             {"kernel_shape", std::vector<int64_t>{3, 3}}});
    ConvP p3;
    p3.groups = 4;
    p3.pt = p3.pl = p3.pb = p3.pr = 1;
    b.check("Conv", {"x", "w3"}, "c3", convRef(x, w3, nullptr, p3),
            {{"group", int64_t(4)}, {"auto_pad", std::string("SAME_UPPER")}});
    b.check("Conv", {"x", "w4"}, "c4", convRef(x, w4, nullptr, ConvP{}));
    ConvP p5;
    p5.sh = 2, p5.sw = 1;
    p5.pt = 1, p5.pb = 0, p5.pl = 2, p5.pr = 1;
    b.check("Conv", {"x", "w5"}, "c5", convRef(x, w5, nullptr, p5),
            {{"strides", std::vector<int64_t>{2, 1}}, {"pads", std::vector<int64_t>{1, 2, 0, 1}}});
    runAndCheck(b);
  }

  void gemmMatmul() {
    Builder b;
    Arr a = b.input("a", {3, 5});
    Arr at = b.input("at", {5, 3});
    Arr w = b.weight("w", {4, 5});
    Arr w2 = b.weight("w2", {5, 4});
    Arr c = b.weight("c", {4});
    Arr c2 = b.weight("c2", {3, 1});
    // Gemm transB with alpha, beta and a broadcast C.
    Arr g1 = zeros({3, 4});
    forEach(g1.shape, [&](const Shape& i) {
      double acc = 0;
      for (int64_t k = 0; k < 5; ++k)
        acc += double(a.at({i[0], k})) * w.at({i[1], k});
      g1.at(i) = float(0.5 * acc + 2.0 * c.data[size_t(i[1])]);
    });
    b.check("Gemm", {"a", "w", "c"}, "g1", g1, {{"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}});
    Arr g2 = zeros({3, 4});
    forEach(g2.shape, [&](const Shape& i) {
      double acc = 0;
      for (int64_t k = 0; k < 5; ++k)
        acc += double(at.at({k, i[0]})) * w2.at({k, i[1]});
      g2.at(i) = float(acc + c2.data[size_t(i[0])]);
    });
    b.check("Gemm", {"at", "w2", "c2"}, "g2", g2, {{"transA", int64_t(1)}});
    Arr g3 = matmulRef(a, w2, {3, 4});
    b.check("Gemm", {"a", "w2"}, "g3", g3);
    // MatMul: batched, broadcast batch, 1-D operands.
    Arr x = b.input("x", {2, 3, 4, 5});
    Arr y = b.input("y", {5, 6});
    b.check("MatMul", {"x", "y"}, "mm1", matmulRef(x, y, {2, 3, 4, 6}));
    Arr p = b.input("p", {2, 1, 3, 4});
    Arr q = b.input("q", {3, 4, 2});
    b.check("MatMul", {"p", "q"}, "mm2", matmulRef(p, q, {2, 3, 3, 2}));
    Arr v = b.input("v", {5});
    Arr mv = zeros({6});
    for (int64_t j = 0; j < 6; ++j)
      for (int64_t k = 0; k < 5; ++k)
        mv.data[size_t(j)] += v.data[size_t(k)] * y.at({k, j});
    b.check("MatMul", {"v", "y"}, "mm3", mv);
    Arr u = b.input("u", {6});
    Arr xr = b.input("xr", {3, 5, 6});
    Arr mv2 = zeros({3, 5});
    forEach(mv2.shape, [&](const Shape& i) {
      for (int64_t k = 0; k < 6; ++k)
        mv2.at(i) += xr.at({i[0], i[1], k}) * u.data[size_t(k)];
    });
    b.check("MatMul", {"xr", "u"}, "mm4", mv2);
    runAndCheck(b);
  }

  void normalisation() {
    Builder b;
    Arr x = b.input("x", {2, 5, 6});
    b.check("Softmax", {"x"}, "sm_last", softmaxRef(x, 2), {{"axis", int64_t(-1)}});
    b.check("Softmax", {"x"}, "sm_1", softmaxRef(x, 1), {{"axis", int64_t(1)}});
    Arr gamma = b.weight("gamma", {6});
    Arr beta = b.weight("beta", {6});
    Arr ln = zeros(x.shape);
    forEach({2, 5}, [&](const Shape& o) {
      double mean = 0, var = 0;
      for (int64_t k = 0; k < 6; ++k)
        mean += x.at({o[0], o[1], k});
      mean /= 6;
      for (int64_t k = 0; k < 6; ++k)
        var += std::pow(x.at({o[0], o[1], k}) - mean, 2);
      var /= 6;
      for (int64_t k = 0; k < 6; ++k)
        ln.at({o[0], o[1], k}) = float((x.at({o[0], o[1], k}) - mean) / std::sqrt(var + 1e-5) * gamma.data[size_t(k)] +
                                       beta.data[size_t(k)]);
    });
    b.node("LayerNormalization", {"x", "gamma", "beta"}, {"ln", "ln_mean", "ln_rstd"}, {x.shape, {2, 5, 1}, {2, 5, 1}},
           {{"axis", int64_t(-1)}, {"epsilon", 1e-5}});
    Arr mean = zeros({2, 5, 1}), rstd = zeros({2, 5, 1});
    forEach({2, 5}, [&](const Shape& o) {
      double m = 0, v = 0;
      for (int64_t k = 0; k < 6; ++k)
        m += x.at({o[0], o[1], k}) / 6.0;
      for (int64_t k = 0; k < 6; ++k)
        v += std::pow(x.at({o[0], o[1], k}) - m, 2) / 6.0;
      mean.at({o[0], o[1], 0}) = float(m);
      rstd.at({o[0], o[1], 0}) = float(1.0 / std::sqrt(v + 1e-5));
    });
    b.g.outputs.insert(b.g.outputs.end(), {"ln", "ln_mean", "ln_rstd"});
    b.expected["ln"] = ln;
    b.expected["ln_mean"] = mean;
    b.expected["ln_rstd"] = rstd;
    // Over the last two axes, no bias.
    Arr g2 = b.weight("g2", {5, 6});
    Arr ln2 = zeros(x.shape);
    for (int64_t n = 0; n < 2; ++n) {
      double mean = 0, var = 0;
      forEach({5, 6}, [&](const Shape& i) { mean += x.at({n, i[0], i[1]}); });
      mean /= 30;
      forEach({5, 6}, [&](const Shape& i) { var += std::pow(x.at({n, i[0], i[1]}) - mean, 2); });
      var /= 30;
      forEach({5, 6}, [&](const Shape& i) {
        ln2.at({n, i[0], i[1]}) = float((x.at({n, i[0], i[1]}) - mean) / std::sqrt(var + 1e-3) * g2.at(i));
      });
    }
    b.check("LayerNormalization", {"x", "g2"}, "ln2", ln2, {{"axis", int64_t(1)}, {"epsilon", 1e-3}});
    Arr img = b.input("img", {2, 3, 4, 4});
    Arr sc = b.weight("sc", {3}), bi = b.weight("bi", {3}), mu = b.weight("mu", {3});
    Arr va = b.weight("va", {3}, 0.5f, 2.f);
    Arr bn = zeros(img.shape);
    forEach(img.shape, [&](const Shape& i) {
      size_t c = size_t(i[1]);
      bn.at(i) = float((img.at(i) - mu.data[c]) / std::sqrt(double(va.data[c]) + 1e-5) * sc.data[c] + bi.data[c]);
    });
    b.check("BatchNormalization", {"img", "sc", "bi", "mu", "va"}, "bn", bn);
    runAndCheck(b);
  }

  void pools() {
    Builder b;
    Arr x = b.input("x", {1, 3, 7, 7});
    auto attrs = [](const PoolP& p) {
      std::map<std::string, AttrValue> a = {{"kernel_shape", std::vector<int64_t>{p.k, p.k}},
                                            {"strides", std::vector<int64_t>{p.s, p.s}},
                                            {"pads", std::vector<int64_t>{p.pad, p.pad, p.pad, p.pad}},
                                            {"ceil_mode", int64_t(p.ceil)}};
      if (p.dil != 1) a["dilations"] = std::vector<int64_t>{p.dil, p.dil};
      if (p.includePad) a["count_include_pad"] = int64_t(1);
      return a;
    };
    PoolP m1{3, 2, 1, 1, false, false};
    b.check("MaxPool", {"x"}, "mp1", poolRef(x, m1, true), attrs(m1));
    PoolP m2{2, 2, 0, 1, true, false};
    b.check("MaxPool", {"x"}, "mp2", poolRef(x, m2, true), attrs(m2));
    PoolP m3{2, 1, 0, 2, false, false};
    b.check("MaxPool", {"x"}, "mp3", poolRef(x, m3, true), attrs(m3));
    PoolP a1{3, 2, 1, 1, false, false};
    b.check("AveragePool", {"x"}, "ap1", poolRef(x, a1, false), attrs(a1));
    PoolP a2{3, 2, 1, 1, false, true};
    b.check("AveragePool", {"x"}, "ap2", poolRef(x, a2, false), attrs(a2));
    PoolP a3{2, 2, 0, 1, true, false};
    b.check("AveragePool", {"x"}, "ap3", poolRef(x, a3, false), attrs(a3));
    PoolP a4{3, 2, 1, 1, true, true};
    b.check("AveragePool", {"x"}, "ap4", poolRef(x, a4, false), attrs(a4));
    Arr gap = zeros({1, 3, 1, 1});
    forEach(x.shape, [&](const Shape& i) { gap.at({0, i[1], 0, 0}) += x.at(i) / 49.f; });
    b.check("GlobalAveragePool", {"x"}, "gap", gap);
    runAndCheck(b);
  }

  void dataMovement() {
    Builder b;
    Arr x = b.input("x", {2, 3, 4});
    Arr y = b.input("y", {2, 2, 4});
    // Transpose
    Arr tr = zeros({4, 2, 3});
    forEach(x.shape, [&](const Shape& i) { tr.at({i[2], i[0], i[1]}) = x.at(i); });
    b.check("Transpose", {"x"}, "tr", tr, {{"perm", std::vector<int64_t>{2, 0, 1}}});
    // Concat on axis 1 (x, y, x)
    Arr cat = zeros({2, 8, 4});
    forEach(cat.shape, [&](const Shape& i) {
      int64_t c = i[1];
      cat.at(i) = c < 3 ? x.at({i[0], c, i[2]}) : c < 5 ? y.at({i[0], c - 3, i[2]}) : x.at({i[0], c - 5, i[2]});
    });
    b.check("Concat", {"x", "y", "x"}, "cat", cat, {{"axis", int64_t(1)}});
    // Slice: axis 2 from -1 backwards with step -2, axis 1 [1, 3).
    b.ints("st", {-1, 1});
    b.ints("en", {-100, 3});
    b.ints("ax", {2, 1});
    b.ints("sp", {-2, 1});
    Arr sl = zeros({2, 2, 2});
    forEach(sl.shape, [&](const Shape& i) { sl.at(i) = x.at({i[0], 1 + i[1], 3 - 2 * i[2]}); });
    b.check("Slice", {"x", "st", "en", "ax", "sp"}, "sl", sl);
    // Gather: a scalar index on axis 1, and a [2, 2] index table on axis 2.
    b.ints("gi", {-1}, {});
    Arr ga = zeros({2, 4});
    forEach(ga.shape, [&](const Shape& i) { ga.at(i) = x.at({i[0], 2, i[1]}); });
    b.check("Gather", {"x", "gi"}, "ga", ga, {{"axis", int64_t(1)}});
    b.ints("gt", {3, 0, 0, 2}, {2, 2});
    Arr gb = zeros({2, 3, 2, 2});
    std::vector<int64_t> tbl = {3, 0, 0, 2};
    forEach(gb.shape, [&](const Shape& i) { gb.at(i) = x.at({i[0], i[1], tbl[size_t(i[2] * 2 + i[3])]}); });
    b.check("Gather", {"x", "gt"}, "gb", gb, {{"axis", int64_t(2)}});
    // Reshape (0 and -1), Flatten, Squeeze, Unsqueeze: the same elements.
    b.ints("rs", {0, -1, 2});
    b.check("Reshape", {"x", "rs"}, "rs_out", Arr{{2, 6, 2}, x.data});
    b.check("Flatten", {"x"}, "fl", Arr{{2, 12}, x.data});
    b.check("Flatten", {"x"}, "fl0", Arr{{1, 24}, x.data}, {{"axis", int64_t(0)}});
    b.ints("ua", {0, 3});
    b.check("Unsqueeze", {"x", "ua"}, "us", Arr{{1, 2, 3, 1, 4}, x.data});
    Arr z = b.input("z", {2, 1, 4, 1});
    b.ints("sa", {1, -1});
    b.check("Squeeze", {"z", "sa"}, "sq", Arr{{2, 4}, z.data});
    b.ints("rs2", {4, 3, 2});
    b.check("Reshape", {"x", "rs2"}, "rs2_out", Arr{{4, 3, 2}, x.data});
    // Split: explicit sizes, and equal parts.
    b.ints("ss", {1, 3});
    Arr s0 = zeros({2, 3, 1}), s1 = zeros({2, 3, 3});
    forEach(s0.shape, [&](const Shape& i) { s0.at(i) = x.at(i); });
    forEach(s1.shape, [&](const Shape& i) { s1.at(i) = x.at({i[0], i[1], i[2] + 1}); });
    b.node("Split", {"x", "ss"}, {"s0", "s1"}, {s0.shape, s1.shape}, {{"axis", int64_t(-1)}});
    b.g.outputs.push_back("s0");
    b.g.outputs.push_back("s1");
    b.expected["s0"] = s0;
    b.expected["s1"] = s1;
    Arr e0 = zeros({1, 3, 4}), e1 = zeros({1, 3, 4});
    forEach(e0.shape, [&](const Shape& i) {
      e0.at(i) = x.at(i);
      e1.at(i) = x.at({1, i[1], i[2]});
    });
    b.node("Split", {"x"}, {"e0", "e1"}, {e0.shape, e1.shape});
    b.g.outputs.push_back("e0");
    b.g.outputs.push_back("e1");
    b.expected["e0"] = e0;
    b.expected["e1"] = e1;
    // Split with an unused part (dropped from the DAG).
    b.node("Split", {"x"}, {"d0", "d1"}, {{2, 1, 4}, {2, 2, 4}},
           {{"axis", int64_t(1)}, {"split", std::vector<int64_t>{1, 2}}});
    b.g.outputs.push_back("d0");
    Arr d0 = zeros({2, 1, 4});
    forEach(d0.shape, [&](const Shape& i) { d0.at(i) = x.at(i); });
    b.expected["d0"] = d0;
    // Pad: constant (with a value input), reflect, edge; negative pads crop.
    b.ints("pads", {0, 1, 2, 0, 2, -1});
    Arr pv = b.weight("pv", {});
    auto padRef = [&](const std::string& mode, float value) {
      Arr r = zeros({2, 6, 5});
      forEach(r.shape, [&](const Shape& i) {
        int64_t j1 = i[1] - 1, j2 = i[2] - 2;
        auto fix = [&](int64_t j, int64_t n) {
          if (mode == "edge") return std::clamp<int64_t>(j, 0, n - 1);
          if (j < 0) return -j;
          if (j >= n) return 2 * (n - 1) - j;
          return j;
        };
        if (mode == "constant")
          r.at(i) = j1 >= 0 && j1 < 3 && j2 >= 0 && j2 < 4 ? x.at({i[0], j1, j2}) : value;
        else
          r.at(i) = x.at({i[0], fix(j1, 3), fix(j2, 4)});
      });
      return r;
    };
    b.check("Pad", {"x", "pads", "pv"}, "pad_c", padRef("constant", pv.data[0]));
    b.check("Pad", {"x", "pads"}, "pad_r", padRef("reflect", 0), {{"mode", std::string("reflect")}});
    b.check("Pad", {"x", "pads"}, "pad_e", padRef("edge", 0), {{"mode", std::string("edge")}});
    // ReduceMean: keepdims and not.
    Arr rm1 = zeros({2, 1, 1}), rm2 = zeros({3});
    forEach(x.shape, [&](const Shape& i) {
      rm1.at({i[0], 0, 0}) += x.at(i) / 12.f;
      rm2.at({i[1]}) += x.at(i) / 8.f;
    });
    b.check("ReduceMean", {"x"}, "rm1", rm1, {{"axes", std::vector<int64_t>{1, -1}}});
    b.ints("rma", {0, 2});
    b.check("ReduceMean", {"x", "rma"}, "rm2", rm2, {{"keepdims", int64_t(0)}});
    runAndCheck(b);
  }
};

QTEST_APPLESS_MAIN(TestRuntime)
#include "test_runtime.moc"
