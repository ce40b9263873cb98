// The vendor baselines: every peer against a naive reference on random
// inputs, the measurement's results and notes, and the peers' GFLOP/s on two
// reference layers (printed, not asserted).
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>

#include "baseline/baselines.h"
#include "tessel_test.h"

using namespace tessel::baseline;
using tessel::measure::CacheState;

Q_DECLARE_METATYPE(std::vector<int64_t>)

namespace {

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<std::vector<float>> randomInputs(const std::string& op, const std::vector<int64_t>& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs;
  for (const auto& s : baselineInputShapes(op, shape)) {
    std::vector<float> v(size_t(count(s)));
    for (float& x : v)
      x = dist(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

// Convolution parameters of a conv2d / conv2d_bias_relu / depthwise_conv2d shape.
struct Conv {
  int64_t n, c, h, w, k, r, s, stride, pad, dilation, groups;
};

Conv convOf(const std::string& op, const std::vector<int64_t>& v) {
  if (op == "depthwise_conv2d")
    return {v[0], v[1], v[2], v[3], v[1], v[4], v[5], v[6], v[7], v.size() > 8 ? v[8] : 1, v[1]};
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v.size() > 9 ? v[9] : 1, v.size() > 10 ? v[10] : 1};
}

// The op computed with plain loops in double precision, as te/operators.cpp
// defines it.
std::vector<double> reference(const std::string& op, const std::vector<int64_t>& s,
                              const std::vector<std::vector<float>>& in) {
  const std::vector<int64_t> outShape = baselineOutputShape(op, s);
  std::vector<double> out(size_t(count(outShape)), 0.0);
  if (op == "matmul" || op == "batch_matmul" || op == "dense") {
    const bool batched = op == "batch_matmul";
    const int64_t b = batched ? s[0] : 1, m = s[batched], n = s[batched + 1], k = s[batched + 2];
    for (int64_t p = 0; p < b; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double acc = op == "dense" ? double(in[2][size_t(j)]) : 0.0;
          for (int64_t r = 0; r < k; ++r) {
            const double w = op == "dense" ? in[1][size_t(j * k + r)] : in[1][size_t((p * k + r) * n + j)];
            acc += double(in[0][size_t((p * m + i) * k + r)]) * w;
          }
          out[size_t((p * m + i) * n + j)] = acc;
        }
  } else if (op == "conv2d" || op == "conv2d_bias_relu" || op == "depthwise_conv2d") {
    const Conv c = convOf(op, s);
    const int64_t oh = outShape[2], ow = outShape[3], cg = c.c / c.groups, kg = c.k / c.groups;
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t k = 0; k < c.k; ++k)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            double acc = 0;
            for (int64_t ci = 0; ci < cg; ++ci)
              for (int64_t r = 0; r < c.r; ++r)
                for (int64_t t = 0; t < c.s; ++t) {
                  const int64_t iy = y * c.stride + r * c.dilation - c.pad;
                  const int64_t ix = x * c.stride + t * c.dilation - c.pad;
                  if (iy < 0 || iy >= c.h || ix < 0 || ix >= c.w) continue;
                  const int64_t channel = (k / kg) * cg + ci;
                  acc += double(in[0][size_t(((n * c.c + channel) * c.h + iy) * c.w + ix)]) *
                         double(in[1][size_t(((k * cg + ci) * c.r + r) * c.s + t)]);
                }
            if (op == "conv2d_bias_relu") acc = std::max(0.0, acc + double(in[2][size_t(k)]));
            out[size_t(((n * c.k + k) * oh + y) * ow + x)] = acc;
          }
  } else if (op == "max_pool2d" || op == "avg_pool2d" || op == "global_avg_pool") {
    const bool global = op == "global_avg_pool";
    const int64_t h = s[2], w = s[3], kh = global ? h : s[4], kw = global ? w : s[4];
    const int64_t stride = global ? 1 : s[5], pad = global ? 0 : s[6];
    const int64_t oh = outShape[2], ow = outShape[3];
    for (int64_t nc = 0; nc < s[0] * s[1]; ++nc)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = op == "max_pool2d" ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t r = 0; r < kh; ++r)
            for (int64_t t = 0; t < kw; ++t) {
              const int64_t iy = y * stride + r - pad, ix = x * stride + t - pad;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              const double v = in[0][size_t((nc * h + iy) * w + ix)];
              acc = op == "max_pool2d" ? std::max(acc, v) : acc + v;
            }
          out[size_t((nc * oh + y) * ow + x)] = op == "max_pool2d" ? acc : acc / double(kh * kw);
        }
  } else if (op == "relu" || op == "gelu" || op == "add" || op == "mul") {
    for (size_t i = 0; i < out.size(); ++i) {
      const double v = in[0][i];
      if (op == "relu") out[i] = std::max(0.0, v);
      if (op == "gelu") out[i] = 0.5 * v * (1.0 + std::erf(v * M_SQRT1_2));
      if (op == "add") out[i] = v + double(in[1][i]);
      if (op == "mul") out[i] = v * double(in[1][i]);
    }
  } else if (op == "bias_add") {
    const int64_t inner = count(s) / (s[0] * s[1]);
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = double(in[0][i]) + double(in[1][size_t((int64_t(i) / inner) % s[1])]);
  } else if (op == "softmax" || op == "layernorm") {
    const int64_t n = s.back(), rows = count(s) / n;
    for (int64_t row = 0; row < rows; ++row) {
      const float* x = in[0].data() + row * n;
      double* y = out.data() + row * n;
      if (op == "softmax") {
        double mx = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < n; ++j)
          mx = std::max(mx, double(x[j]));
        for (int64_t j = 0; j < n; ++j)
          sum += y[j] = std::exp(double(x[j]) - mx);
        for (int64_t j = 0; j < n; ++j)
          y[j] /= sum;
      } else {
        double mean = 0, var = 0;
        for (int64_t j = 0; j < n; ++j)
          mean += x[j];
        mean /= double(n);
        for (int64_t j = 0; j < n; ++j)
          var += (x[j] - mean) * (x[j] - mean);
        const double rstd = 1.0 / std::sqrt(var / double(n) + 1e-5);
        for (int64_t j = 0; j < n; ++j)
          y[j] = (x[j] - mean) * rstd * double(in[1][size_t(j)]) + double(in[2][size_t(j)]);
      }
    }
  } else {
    throw std::invalid_argument("no reference for " + op);
  }
  return out;
}

// Largest |got - want| / (1 + |want|), or +inf on a size mismatch.
double maxRelativeError(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(double(got[i]) - want[i]) / (1.0 + std::abs(want[i]));
    if (!(e <= worst)) worst = e;  // NaN counts as the worst
  }
  return worst;
}

bool gemmLike(const std::string& op) {
  return op == "matmul" || op == "batch_matmul" || op == "dense";
}

int hardwareThreads() {
  return std::max(1, int(std::thread::hardware_concurrency()));
}

QString describe(const BaselineResult& r) {
  QString text;
  auto slot = [&](const char* name, const std::optional<double>& t) {
    text += QString("%1=%2 ").arg(name, t ? QString::number(*t * 1e3, 'g', 4) + " ms" : QString("-"));
  };
  slot("onednn", r.onednnSeconds);
  slot("openblas", r.openblasSeconds);
  slot("libtorch", r.libtorchSeconds);
  for (const auto& [peer, note] : r.notes)
    text += QString("[%1: %2] ").arg(QString::fromStdString(peer), QString::fromStdString(note));
  return text;
}

}  // namespace

class TestBaselines : public QObject {
  Q_OBJECT

 private slots:
  void peersMatchTheNaiveReference_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<std::vector<int64_t>>("shape");
    auto row = [](const char* name, const char* op, std::vector<int64_t> shape) {
      QTest::newRow(name) << QString(op) << shape;
    };
    row("matmul", "matmul", {17, 23, 29});
    row("batch_matmul", "batch_matmul", {3, 17, 23, 29});
    row("dense", "dense", {17, 23, 29});
    row("conv2d", "conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 1});
    row("conv2d stride 2", "conv2d", {1, 8, 12, 12, 16, 3, 3, 2, 1});
    row("conv2d batch 2, no pad", "conv2d", {2, 8, 12, 12, 16, 3, 3, 1, 0});
    row("conv2d dilation 2", "conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 2, 2});
    row("conv2d groups 4", "conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 1, 1, 4});
    row("conv2d 3x5 on 12x11", "conv2d", {1, 8, 12, 11, 16, 3, 5, 1, 2});
    row("conv2d 1x1", "conv2d", {1, 8, 12, 12, 16, 1, 1, 1, 0});
    row("conv2d_bias_relu", "conv2d_bias_relu", {1, 8, 12, 12, 16, 3, 3, 1, 1});
    row("conv2d_bias_relu stride 2 groups 2", "conv2d_bias_relu", {1, 8, 12, 12, 16, 3, 3, 2, 1, 1, 2});
    row("depthwise_conv2d", "depthwise_conv2d", {1, 8, 12, 12, 3, 3, 1, 1});
    row("depthwise_conv2d stride 2 dilation 2", "depthwise_conv2d", {1, 8, 12, 12, 3, 3, 2, 2, 2});
    row("max_pool2d", "max_pool2d", {1, 8, 12, 12, 3, 2, 1});
    row("max_pool2d 2x2", "max_pool2d", {2, 4, 11, 11, 2, 2, 0});
    row("avg_pool2d", "avg_pool2d", {1, 8, 12, 12, 3, 2, 1});
    row("avg_pool2d 3x3 stride 3", "avg_pool2d", {1, 8, 13, 13, 3, 3, 0});
    row("global_avg_pool", "global_avg_pool", {2, 8, 7, 7});
    row("relu", "relu", {4, 5, 6});
    row("gelu", "gelu", {4, 5, 6});
    row("add", "add", {3, 7, 5});
    row("mul", "mul", {3, 7, 5});
    row("bias_add 4-d", "bias_add", {2, 8, 5, 5});
    row("bias_add 2-d", "bias_add", {6, 10});
    row("softmax", "softmax", {7, 33});
    row("softmax 3-d", "softmax", {2, 3, 50});
    row("layernorm", "layernorm", {7, 33});
    row("layernorm 3-d", "layernorm", {2, 3, 50});
  }

  void peersMatchTheNaiveReference() {
    QFETCH(QString, op);
    QFETCH(std::vector<int64_t>, shape);
    const std::string name = op.toStdString();
    const auto inputs = randomInputs(name, shape, 7u + unsigned(shape.size()));
    const std::vector<double> want = reference(name, shape, inputs);
    int checked = 0;
    for (const std::string& peer : peerNames()) {
      const bool applicable = peer != "openblas" || gemmLike(name);
      try {
        const std::vector<float> got = runBaselineOnce(peer, name, shape, inputs);
        QVERIFY2(applicable, (peer + " ran an op it does not support").c_str());
        const double err = maxRelativeError(got, want);
        QVERIFY2(err <= 1e-4, (peer + ": relative error " + std::to_string(err)).c_str());
        ++checked;
      } catch (const std::runtime_error& e) {
        const std::string why = e.what();
        if (!peerAvailable(peer)) {
          QVERIFY2(why.find("not built with") != std::string::npos, why.c_str());
        } else {
          QVERIFY2(!applicable, (peer + " failed: " + why).c_str());
          QVERIFY2(why.find("not applicable") != std::string::npos, why.c_str());
        }
      }
    }
    // oneDNN and LibTorch cover every op.
    const int expected = int(peerAvailable("onednn")) + int(peerAvailable("libtorch")) +
                         int(peerAvailable("openblas") && gemmLike(name));
    QCOMPARE(checked, expected);
  }

  void peersAgreeWithEachOtherWithTwoThreads() {
    // Larger than one vector and one thread's share of the work.
    const std::vector<int64_t> shape = {2, 16, 30, 30, 32, 3, 3, 1, 1};
    const auto inputs = randomInputs("conv2d_bias_relu", shape, 3u);
    const std::vector<double> want = reference("conv2d_bias_relu", shape, inputs);
    for (const char* peer : {"onednn", "libtorch"}) {
      if (!peerAvailable(peer)) continue;
      const double err = maxRelativeError(runBaselineOnce(peer, "conv2d_bias_relu", shape, inputs, 2), want);
      QVERIFY2(err <= 1e-4, (std::string(peer) + ": relative error " + std::to_string(err)).c_str());
    }
    const std::vector<int64_t> mm = {130, 70, 150};
    const auto mmInputs = randomInputs("matmul", mm, 4u);
    const std::vector<double> mmWant = reference("matmul", mm, mmInputs);
    for (const std::string& peer : peerNames()) {
      if (!peerAvailable(peer)) continue;
      const double err = maxRelativeError(runBaselineOnce(peer, "matmul", mm, mmInputs, 2), mmWant);
      QVERIFY2(err <= 1e-4, (peer + ": relative error " + std::to_string(err)).c_str());
    }
  }

  void matmulHasAllThreeTimes() {
    for (const char* peer : {"onednn", "openblas", "libtorch"})
      if (!peerAvailable(peer)) TESSEL_SKIP(peer, "this build lacks one of the three peers");
    const BaselineResult r = measureBaselines("matmul", {256, 256, 256}, 2);
    qInfo("matmul 256^3: %s", qPrintable(describe(r)));
    QVERIFY2(r.notes.empty(), qPrintable(describe(r)));
    QVERIFY(r.onednnSeconds && *r.onednnSeconds > 0);
    QVERIFY(r.openblasSeconds && *r.openblasSeconds > 0);
    QVERIFY(r.libtorchSeconds && *r.libtorchSeconds > 0);
    // A 256^3 product is ~34 MFLOP: far from both 1 ns and 1 s.
    for (double t : {*r.onednnSeconds, *r.openblasSeconds, *r.libtorchSeconds})
      QVERIFY2(t > 1e-6 && t < 1.0, qPrintable(describe(r)));
  }

  // With the cache flush the peers are timed cold, every repeat kept: a copy
  // through memory is not faster than the warm loop. Under "model" only the
  // weights go to memory: a matrix-vector product (4 MiB of weights, beyond
  // any private cache, within the shared one) is not faster than warm either.
  void flushedPeersKeepTheirRepeats() {
    if (!peerAvailable("onednn")) TESSEL_SKIP("onednn", "this build has no oneDNN");
    // Under CTest -j another test may slow one timing alone: each state keeps
    // its best over the attempts, so a busy moment cannot decide it; a flush
    // that made calls faster never would pass.
    double warm = INFINITY, cold = INFINITY, denseWarm = INFINITY, denseModel = INFINITY;
    QString last;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const BaselineResult w = measureBaselines("matmul", {256, 256, 256}, 2, CacheState::Warm);
      const BaselineResult c = measureBaselines("matmul", {256, 256, 256}, 2, CacheState::Cold);
      const BaselineResult dw = measureBaselines("dense", {1, 1024, 1024}, 2, CacheState::Warm);
      const BaselineResult dm = measureBaselines("dense", {1, 1024, 1024}, 2, CacheState::Model);
      QVERIFY2(c.onednnSeconds && w.onednnSeconds, qPrintable(describe(c)));
      QVERIFY2(dm.onednnSeconds && dw.onednnSeconds, qPrintable(describe(dm)));
      QCOMPARE(c.repeats.at("onednn").size(), size_t(3));
      QCOMPARE(dm.repeats.at("onednn").size(), size_t(3));
      warm = std::min(warm, *w.onednnSeconds);
      cold = std::min(cold, *c.onednnSeconds);
      denseWarm = std::min(denseWarm, *dw.onednnSeconds);
      denseModel = std::min(denseModel, *dm.onednnSeconds);
      last = QString("cold %1 ms, warm %2 ms; dense under model %3 ms, warm %4 ms")
                 .arg(cold * 1e3)
                 .arg(warm * 1e3)
                 .arg(denseModel * 1e3)
                 .arg(denseWarm * 1e3);
      if (cold > 0.9 * warm && denseModel > 0.9 * denseWarm) {
        qInfo("%s", qPrintable(last));
        return;
      }
    }
    QFAIL(qPrintable("flushed timing faster than warm (best of three each): " + last));
  }

  // The verdict on a timing: steady repeats pass; spread repeats pass only
  // when a steady re-check agrees with them.
  void disturbedTimingsAreFlagged() {
    const std::vector<double> steady = {1.00, 1.02, 1.01}, spread = {1.0, 1.6, 2.1}, slower = {1.5, 1.52, 1.51};
    QVERIFY(disturbanceOf(steady, {}).empty());
    QVERIFY(!disturbanceOf(spread, steady).empty());                     // the re-check disagrees: 1.6 against 1.01
    QVERIFY(disturbanceOf({1.0, 1.3, 1.4}, {1.25, 1.3, 1.27}).empty());  // agrees, and is steady
    QVERIFY(!disturbanceOf(spread, spread).empty());
    QVERIFY(disturbanceOf(spread, slower).empty());  // a steady re-check that agrees with the median
    const std::string why = disturbanceOf(spread, {0.9, 2.0, 2.2});
    QVERIFY2(why.find("spread") != std::string::npos && why.find("ms") != std::string::npos, why.c_str());
  }

  void conv2dHasOnednnAndLibtorchAndAnOpenblasNote() {
    const BaselineResult r = measureBaselines("conv2d", {1, 16, 14, 14, 16, 3, 3, 1, 1}, 2);
    qInfo("conv2d 1,16,14,14,16,3,3,1,1: %s", qPrintable(describe(r)));
    QVERIFY(!r.openblasSeconds);
    QVERIFY(r.notes.count("openblas"));
    if (peerAvailable("openblas")) QCOMPARE(r.notes.at("openblas"), std::string("not applicable to conv2d"));
    if (peerAvailable("onednn")) QVERIFY2(r.onednnSeconds && *r.onednnSeconds > 0, qPrintable(describe(r)));
    if (peerAvailable("libtorch")) QVERIFY2(r.libtorchSeconds && *r.libtorchSeconds > 0, qPrintable(describe(r)));
    QVERIFY2(r.notes.size() == 1 || !peerAvailable("onednn") || !peerAvailable("libtorch"), qPrintable(describe(r)));
  }

  void everyOpIsMeasuredByOnednnAndLibtorch() {
    // Small shapes: this checks the plumbing (and that nothing throws), not the speed.
    const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
        {"batch_matmul", {2, 32, 32, 32}},
        {"dense", {16, 32, 64}},
        {"conv2d_bias_relu", {1, 8, 10, 10, 8, 3, 3, 1, 1}},
        {"depthwise_conv2d", {1, 8, 10, 10, 3, 3, 1, 1}},
        {"max_pool2d", {1, 8, 10, 10, 3, 2, 1}},
        {"avg_pool2d", {1, 8, 10, 10, 3, 2, 1}},
        {"global_avg_pool", {1, 8, 10, 10}},
        {"relu", {1024}},
        {"gelu", {32, 32}},
        {"add", {32, 32}},
        {"mul", {32, 32}},
        {"bias_add", {4, 16, 8}},
        {"softmax", {16, 128}},
        {"layernorm", {16, 128}},
    };
    for (const auto& [op, shape] : cases) {
      const BaselineResult r = measureBaselines(op, shape, 1);
      const QString what = QString::fromStdString(op) + ": " + describe(r);
      if (peerAvailable("onednn")) QVERIFY2(r.onednnSeconds && *r.onednnSeconds > 0, qPrintable(what));
      if (peerAvailable("libtorch")) QVERIFY2(r.libtorchSeconds && *r.libtorchSeconds > 0, qPrintable(what));
      QCOMPARE(bool(r.openblasSeconds), gemmLike(op) && peerAvailable("openblas"));
      QCOMPARE(r.notes.count("onednn"), size_t(peerAvailable("onednn") ? 0 : 1));
      QCOMPARE(r.notes.count("libtorch"), size_t(peerAvailable("libtorch") ? 0 : 1));
    }
  }

  void aFailingPeerBecomesANote() {
    // LibTorch refuses padding wider than half the window; oneDNN pools it.
    if (!peerAvailable("libtorch")) TESSEL_SKIP("libtorch", "this build lacks LibTorch");
    const BaselineResult r = measureBaselines("max_pool2d", {1, 2, 8, 8, 2, 1, 2}, 1);
    qInfo("max_pool2d with pad 2 on a 2x2 window: %s", qPrintable(describe(r)));
    QVERIFY(!r.libtorchSeconds);
    QVERIFY(r.notes.count("libtorch"));
    QVERIFY(!r.notes.at("libtorch").empty());
    QVERIFY(r.notes.count("openblas"));
  }

  void badRequestsThrow() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureBaselines("frobnicate", {1, 2, 3}, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureBaselines("matmul", {1, 2}, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureBaselines("matmul", {1, 0, 3}, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             measureBaselines("conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 1, 1, 3}, 1));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, baselineInputShapes("softmax", {}));
    const auto inputs = randomInputs("matmul", {4, 5, 6}, 1u);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runBaselineOnce("cublas", "matmul", {4, 5, 6}, inputs));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runBaselineOnce("onednn", "matmul", {4, 5, 7}, inputs));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runBaselineOnce("onednn", "matmul", {4, 5, 6}, {inputs[0]}));
  }

  // Figures for docs/results.md, not assertions.
  void printGflops() {
    const int threads = hardwareThreads();
    struct Case {
      std::string op;
      std::vector<int64_t> shape;
      double flops;
    };
    const std::vector<Case> cases = {
        {"matmul", {1024, 1024, 1024}, 2.0 * 1024 * 1024 * 1024},
        {"conv2d", {1, 64, 56, 56, 64, 3, 3, 1, 1}, 2.0 * 64 * 56 * 56 * 64 * 3 * 3},
    };
    for (const Case& c : cases) {
      const BaselineResult r = measureBaselines(c.op, c.shape, threads);
      QString line;
      auto add = [&](const char* peer, const std::optional<double>& t) {
        if (t)
          line +=
              QString("%1 %2 GFLOP/s (%3 ms)  ").arg(peer).arg(c.flops / *t * 1e-9, 0, 'f', 1).arg(*t * 1e3, 0, 'f', 3);
      };
      add("onednn", r.onednnSeconds);
      add("openblas", r.openblasSeconds);
      add("libtorch", r.libtorchSeconds);
      QString shape;
      for (int64_t d : c.shape)
        shape += (shape.isEmpty() ? "" : ",") + QString::number(d);
      qInfo("%s %s, %d threads: %s", c.op.c_str(), qPrintable(shape), threads, qPrintable(line));
      QVERIFY(r.onednnSeconds || r.libtorchSeconds || !peerAvailable("onednn"));
    }
  }
};

QTEST_APPLESS_MAIN(TestBaselines)
#include "test_baselines.moc"
