// Qt Test suite of the GPU baselines (baseline/cuda_baselines.h). Without a
// GPU (the build machines) it checks that every peer's note says why it has
// no time and that nothing throws or crashes, and that cuBLAS and cuDNN, where
// installed, have every entry point the peers call; with one, cuBLAS's GEMMs
// and cuDNN's convolutions against a naive CPU reference, and their times.
#include <QtTest>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "baseline/baselines.h"
#include "baseline/cuda_baselines.h"
#include "baseline/cuda_libraries.h"
#include "measure/cuda_driver.h"
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

// matmul A[M,K] B[K,N], batch_matmul A[b,M,K] B[b,K,N], dense X[M,K] W[N,K]^T + bias[N].
std::vector<double> gemmReference(const std::string& op, const std::vector<int64_t>& s,
                                  const std::vector<std::vector<float>>& in) {
  const bool batched = op == "batch_matmul", dense = op == "dense";
  const int64_t b = batched ? s[0] : 1, m = s[batched], n = s[batched + 1], k = s[batched + 2];
  std::vector<double> out(size_t(b * m * n));
  for (int64_t p = 0; p < b; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = dense ? double(in[2][size_t(j)]) : 0.0;
        for (int64_t r = 0; r < k; ++r) {
          const double w = dense ? in[1][size_t(j * k + r)] : in[1][size_t((p * k + r) * n + j)];
          acc += double(in[0][size_t((p * m + i) * k + r)]) * w;
        }
        out[size_t((p * m + i) * n + j)] = acc;
      }
  return out;
}

// conv2d / conv2d_bias_relu N,C,H,W,K,R,S,stride,pad[,dilation,groups];
// depthwise_conv2d N,C,H,W,R,S,stride,pad[,dilation]. NCHW, KCRS weights.
std::vector<double> convReference(const std::string& op, const std::vector<int64_t>& v,
                                  const std::vector<std::vector<float>>& in) {
  const bool depthwise = op == "depthwise_conv2d";
  const int64_t n = v[0], c = v[1], h = v[2], w = v[3];
  const int64_t k = depthwise ? c : v[4], r = v[depthwise ? 4 : 5], s = v[depthwise ? 5 : 6];
  const int64_t stride = v[depthwise ? 6 : 7], pad = v[depthwise ? 7 : 8];
  const size_t more = depthwise ? 8 : 9;
  const int64_t dilation = v.size() > more ? v[more] : 1;
  const int64_t groups = depthwise ? c : (v.size() > 10 ? v[10] : 1);
  const std::vector<int64_t> outShape = baselineOutputShape(op, v);
  const int64_t oh = outShape[2], ow = outShape[3], cg = c / groups, kg = k / groups;
  std::vector<double> out(size_t(count(outShape)));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < k; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          double acc = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t dy = 0; dy < r; ++dy)
              for (int64_t dx = 0; dx < s; ++dx) {
                const int64_t iy = y * stride + dy * dilation - pad, ix = x * stride + dx * dilation - pad;
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                const int64_t channel = (o / kg) * cg + ci;
                acc += double(in[0][size_t(((b * c + channel) * h + iy) * w + ix)]) *
                       double(in[1][size_t(((o * cg + ci) * r + dy) * s + dx)]);
              }
          if (op == "conv2d_bias_relu") acc = std::max(0.0, acc + double(in[2][size_t(o)]));
          out[size_t(((b * k + o) * oh + y) * ow + x)] = acc;
        }
  return out;
}

// Largest |got - want| / (1 + |want|), or +inf on a size mismatch; NaN counts as the worst.
double maxRelativeError(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(double(got[i]) - want[i]) / (1.0 + std::abs(want[i]));
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

QString describe(const CudaBaselineResult& r) {
  QString text = QString("gpu=%1 ").arg(QString::fromStdString(r.gpu.empty() ? "-" : r.gpu));
  auto slot = [&](const char* name, const std::optional<double>& t) {
    text += QString("%1=%2 ").arg(name, t ? QString::number(*t * 1e3, 'g', 4) + " ms" : QString("-"));
  };
  slot("cublas", r.cublasSeconds);
  slot("cudnn", r.cudnnSeconds);
  for (const auto& [peer, note] : r.notes)
    text += QString("[%1: %2] ").arg(QString::fromStdString(peer), QString::fromStdString(note));
  return text;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

// Skips a GPU check where there is no driver, saying what it checks and
// where it runs; fails instead under TESSEL_REQUIRE=gpu (scripts/gpu-check.sh).
#define REQUIRE_GPU(what)                                                                   \
  do {                                                                                      \
    if (const std::string why = tessel::measure::cuda::unavailableReason(); !why.empty()) { \
      TESSEL_SKIP("gpu", what                                                               \
                  ": needs an NVIDIA GPU and its driver, which the build machines lack "    \
                  "(scripts/gpu-check.sh runs it on one)");                                 \
    }                                                                                       \
  } while (false)

class TestCudaBaselines : public QObject {
  Q_OBJECT

 private slots:
  // No driver: each peer's note names it, no peer has a time, nothing throws.
  void withoutADriverEveryPeerSaysWhy() {
    const std::string why = tessel::measure::cuda::unavailableReason();
    if (why.empty())
      QSKIP("checks the notes where there is no driver; this machine has one (the GPU checks run instead)");
    QVERIFY2(contains(why, "NVIDIA driver"), why.c_str());
    for (CacheState state : {CacheState::Warm, CacheState::Cold, CacheState::Model}) {
      const CudaBaselineResult mm = measureCudaBaselines("matmul", {64, 64, 64}, state);
      QVERIFY2(!mm.cublasSeconds && !mm.cudnnSeconds, qPrintable(describe(mm)));
      QCOMPARE(mm.notes.at("cublas"), why);
      QCOMPARE(mm.notes.at("cudnn"), std::string("not applicable to matmul"));
      QVERIFY(mm.repeats.empty() && mm.gpu.empty());
      const CudaBaselineResult conv = measureCudaBaselines("conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 1}, state);
      QVERIFY2(!conv.cublasSeconds && !conv.cudnnSeconds, qPrintable(describe(conv)));
      QCOMPARE(conv.notes.at("cudnn"), why);
      QCOMPARE(conv.notes.at("cublas"), std::string("not applicable to conv2d"));
    }
    for (const std::string& peer : cudaPeerNames())
      QCOMPARE(cudaPeerUnavailableReason(peer), why);
    try {
      const std::vector<int64_t> shape = {4, 5, 6};
      runCudaBaselineOnce("cublas", "matmul", shape, randomInputs("matmul", shape, 1u));
      QFAIL("cuBLAS ran without a driver");
    } catch (const std::runtime_error& e) {
      QCOMPARE(std::string(e.what()), why);
    }
  }

  // Ops a peer does not implement are notes, with or without a GPU.
  void notApplicableOpsAreNotes() {
    for (const auto& [op, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {"relu", {1024}}, {"softmax", {16, 128}}, {"max_pool2d", {1, 8, 10, 10, 3, 2, 1}}}) {
      const CudaBaselineResult r = measureCudaBaselines(op, shape);
      QVERIFY2(!r.cublasSeconds && !r.cudnnSeconds && r.repeats.empty(), qPrintable(describe(r)));
      for (const std::string& peer : cudaPeerNames()) {
        QCOMPARE(r.notes.at(peer), "not applicable to " + op);
        QVERIFY(!cudaPeerApplies(peer, op));
      }
    }
    QVERIFY(cudaPeerApplies("cublas", "dense") && !cudaPeerApplies("cublas", "conv2d"));
    QVERIFY(cudaPeerApplies("cudnn", "depthwise_conv2d") && !cudaPeerApplies("cudnn", "batch_matmul"));
    QVERIFY(!cudaPeerApplies("cutlass", "matmul"));
    QVERIFY(contains(cudaPeerUnavailableReason("cutlass"), "unknown GPU peer"));
  }

  // Where cuBLAS and cuDNN are installed (the toolkit is, on the build
  // machines), every entry point the peers call is there; where not, the
  // reason names the library and its file.
  void librariesLoadOrSayWhich() {
    namespace gpu = tessel::baseline::detail::gpu;
    const std::string blas = gpu::cublasUnavailableReason(), dnn = gpu::cudnnUnavailableReason();
    qInfo("cuBLAS: %s; cuDNN: %s", blas.empty() ? "loaded" : blas.c_str(), dnn.empty() ? "loaded" : dnn.c_str());
    QVERIFY2(blas.empty() || blas.rfind("cuBLAS: libcublas.so.13 ", 0) == 0, blas.c_str());
    QVERIFY2(dnn.empty() || dnn.rfind("cuDNN: libcudnn.so.9 ", 0) == 0, dnn.c_str());
    QVERIFY2(!contains(blas, " lacks "), blas.c_str());
    QVERIFY2(!contains(dnn, " lacks "), dnn.c_str());
  }

  void badRequestsThrow() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureCudaBaselines("frobnicate", {1, 2, 3}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureCudaBaselines("matmul", {1, 2}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, measureCudaBaselines("matmul", {1, 0, 3}));
    const std::vector<int64_t> shape = {4, 5, 6};
    const auto inputs = randomInputs("matmul", shape, 2u);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runCudaBaselineOnce("cutlass", "matmul", shape, inputs));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runCudaBaselineOnce("cublas", "matmul", shape, {inputs[0]}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                             runCudaBaselineOnce("cublas", "matmul", shape, {inputs[0], inputs[0]}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, runCudaBaselineOnce("cudnn", "matmul", shape, inputs));
  }

  void peersMatchACpuReferenceOnTheGpu_data() {
    QTest::addColumn<QString>("peer");
    QTest::addColumn<QString>("op");
    QTest::addColumn<std::vector<int64_t>>("shape");
    auto row = [](const char* name, const char* peer, const char* op, std::vector<int64_t> shape) {
      QTest::newRow(name) << QString(peer) << QString(op) << shape;
    };
    row("matmul", "cublas", "matmul", {17, 23, 29});
    row("matmul 130x70x150", "cublas", "matmul", {130, 70, 150});
    row("batch_matmul", "cublas", "batch_matmul", {3, 17, 23, 29});
    row("dense", "cublas", "dense", {17, 23, 29});
    row("dense one row", "cublas", "dense", {1, 96, 64});
    row("conv2d", "cudnn", "conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 1});
    row("conv2d stride 2", "cudnn", "conv2d", {1, 8, 12, 12, 16, 3, 3, 2, 1});
    row("conv2d batch 2, no pad", "cudnn", "conv2d", {2, 8, 12, 12, 16, 3, 3, 1, 0});
    row("conv2d dilation 2", "cudnn", "conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 2, 2});
    row("conv2d groups 4", "cudnn", "conv2d", {1, 8, 12, 12, 16, 3, 3, 1, 1, 1, 4});
    row("conv2d 3x5 on 12x11", "cudnn", "conv2d", {1, 8, 12, 11, 16, 3, 5, 1, 2});
    row("conv2d 1x1", "cudnn", "conv2d", {1, 8, 12, 12, 16, 1, 1, 1, 0});
    row("conv2d_bias_relu", "cudnn", "conv2d_bias_relu", {1, 8, 12, 12, 16, 3, 3, 1, 1});
    row("conv2d_bias_relu stride 2 groups 2", "cudnn", "conv2d_bias_relu", {1, 8, 12, 12, 16, 3, 3, 2, 1, 1, 2});
    row("depthwise_conv2d", "cudnn", "depthwise_conv2d", {1, 8, 12, 12, 3, 3, 1, 1});
    row("depthwise_conv2d stride 2 dilation 2", "cudnn", "depthwise_conv2d", {1, 8, 12, 12, 3, 3, 2, 2, 2});
  }

  // With a GPU: each peer's output against plain loops in double precision.
  void peersMatchACpuReferenceOnTheGpu() {
    REQUIRE_GPU("checks cuBLAS's GEMMs and cuDNN's convolutions against a CPU reference");
    QFETCH(QString, peer);
    QFETCH(QString, op);
    QFETCH(std::vector<int64_t>, shape);
    const std::string p = peer.toStdString(), name = op.toStdString();
    const auto inputs = randomInputs(name, shape, 7u + unsigned(shape.size()));
    const std::vector<double> want =
        p == "cublas" ? gemmReference(name, shape, inputs) : convReference(name, shape, inputs);
    const std::vector<float> got = runCudaBaselineOnce(p, name, shape, inputs);
    const double err = maxRelativeError(got, want);
    QVERIFY2(err <= 1e-4, (p + " " + name + ": relative error " + std::to_string(err)).c_str());
  }

  // With a GPU: every applicable op has a positive, finite time of three
  // repeats under every cache state, and its only note is the other peer's.
  void gpuTimesArePositiveAndFinite() {
    REQUIRE_GPU("checks cuBLAS's and cuDNN's timings");
    const std::vector<std::pair<std::string, std::vector<int64_t>>> cases = {
        {"matmul", {256, 256, 256}},
        {"batch_matmul", {2, 32, 32, 32}},
        {"dense", {16, 32, 64}},
        {"conv2d", {1, 16, 14, 14, 16, 3, 3, 1, 1}},
        {"conv2d_bias_relu", {1, 8, 10, 10, 8, 3, 3, 1, 1}},
        {"depthwise_conv2d", {1, 8, 10, 10, 3, 3, 1, 1}},
    };
    for (CacheState state : {CacheState::Warm, CacheState::Cold, CacheState::Model})
      for (const auto& [op, shape] : cases) {
        const CudaBaselineResult r = measureCudaBaselines(op, shape, state);
        const QString what = QString::fromStdString(op) + ": " + describe(r);
        qInfo("%s", qPrintable(what));
        QVERIFY2(!r.gpu.empty(), qPrintable(what));
        const std::string timed = cudaPeerApplies("cublas", op) ? "cublas" : "cudnn";
        const std::optional<double>& t = timed == "cublas" ? r.cublasSeconds : r.cudnnSeconds;
        QVERIFY2(t && std::isfinite(*t) && *t > 0 && *t < 1.0, qPrintable(what));
        QCOMPARE(r.repeats.at(timed).size(), size_t(3));
        for (double repeat : r.repeats.at(timed))
          QVERIFY2(std::isfinite(repeat) && repeat > 0, qPrintable(what));
        QCOMPARE(r.notes.size(), size_t(1));
        QCOMPARE(r.notes.count(timed), size_t(0));
      }
  }
};

QTEST_GUILESS_MAIN(TestCudaBaselines)
#include "test_cuda_baselines.moc"
