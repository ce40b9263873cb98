// Ansor's layout rewrite (lower/layout_rewrite.h): which inputs a kernel reads
// packed, in which order, and that packed kernels compute what the naive
// program does.
#include <QtTest>
#include <set>

#include "kernel_harness.h"
#include "lower/layout_rewrite.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

// NHWC conv, 3x3, 64 -> 64 channels on 8x8: stages X, W, pad, conv.
te::ComputeDAG conv() {
  return te::makeOperator("conv2d", {1, 64, 8, 8, 64, 3, 3, 1, 1}, te::Layout::NHWC);
}

// Output channels in three parts, the outer one outermost, the two inner ones
// inside the reduction (ry, rx, rc): the shape of Ansor's CPU conv tiles.
std::vector<Step> tiledConv(std::vector<int64_t> channelFactors) {
  const int64_t parts = int64_t(channelFactors.size()) + 1;
  std::vector<int> order = {3, 0, 1, 2};
  for (int r = 0; r < 3; ++r)
    order.push_back(int(3 + parts + r));  // ry, rx, rc
  for (int p = 1; p < parts; ++p)
    order.push_back(3 + p);
  return {ComputeInlineStep{2}, SplitStep{3, 3, std::move(channelFactors)}, ReorderStep{3, std::move(order)}};
}

lower::LoweredFunc lowerPacked(const te::ComputeDAG& dag, const std::vector<Step>& steps) {
  lower::LoweredFunc f = lower::lowerState(replay(dag, steps));
  lower::rewriteLayouts(&f);
  return f;
}

void requireAllOk(const std::vector<testing::CheckOutcome>& res) {
  for (size_t i = 0; i < res.size(); ++i)
    QVERIFY2(res[i].ok, qPrintable(QString("program %1: %2").arg(i).arg(QString::fromStdString(res[i].message))));
}

}  // namespace

class TestLayoutRewrite : public QObject {
  Q_OBJECT

 private slots:
  void convWeightsFollowTheLoops() {
    lower::LoweredFunc f = lowerPacked(conv(), tiledConv({2, 16}));
    QCOMPARE(f.packed.size(), size_t(1));
    const lower::PackedLayout& p = f.packed[0];
    QCOMPARE(f.args[p.arg].name, std::string("W"));
    // W is RSCK [3][3][64][64]; the loops walk ff.0, ry, rx, rc, ff.1, ff.2.
    std::vector<int64_t> extents, strides;
    for (const auto& d : p.dims)
      extents.push_back(d.extent), strides.push_back(d.plainStride);
    QCOMPARE(extents, (std::vector<int64_t>{2, 3, 3, 64, 2, 16}));
    QCOMPARE(strides, (std::vector<int64_t>{32, 3 * 64 * 64, 64 * 64, 64, 16, 1}));
    QCOMPARE(p.size(), p.plainSize);
    QCOMPARE(f.args[p.arg].size, p.plainSize);
  }

  void evenPackingIsAPermutation() {
    lower::LoweredFunc f = lowerPacked(conv(), tiledConv({2, 16}));
    const lower::PackedLayout& p = f.packed.at(0);
    std::set<int64_t> seen;
    for (int64_t i = 0; i < p.size(); ++i) {
      const int64_t plain = lower::plainIndex(p, i);
      QVERIFY(plain >= 0);
      QVERIFY2(seen.insert(plain).second, "a plain element packed twice");
    }
    QCOMPARE(int64_t(seen.size()), p.plainSize);
  }

  void unevenSplitsPad() {
    // 64 channels in parts of 5: 13 x 5 = 65 per (ry, rx, rc), one of them padding.
    lower::LoweredFunc f = lowerPacked(conv(), tiledConv({5}));
    QCOMPARE(f.packed.size(), size_t(1));
    const lower::PackedLayout& p = f.packed[0];
    QCOMPARE(p.size(), int64_t(13 * 3 * 3 * 64 * 5));
    QCOMPARE(f.args[p.arg].size, p.size());
  }

  void packedKernelsMatchNaive() {
    std::vector<std::vector<Step>> programs = {tiledConv({2, 16}), tiledConv({5}), tiledConv({4}), tiledConv({3, 7})};
    testing::KernelHarness h;
    requireAllOk(h.check(conv(), programs));
    for (const std::string& src : h.sources())
      QVERIFY2(src.find("_pack(float* const* plain") != std::string::npos, "every program packs its weights");
  }

  void denseWeightsPackedAndChecked() {
    te::ComputeDAG dag = te::makeOperator("dense", {8, 48, 40});  // X[8][40], W[48][40]
    // Output features split, the inner part innermost: W walked k-major per 16-feature block.
    std::vector<Step> steps = {SplitStep{3, 1, {16}}, ReorderStep{3, {1, 0, 3, 2}}};
    lower::LoweredFunc f = lowerPacked(dag, steps);
    QCOMPARE(f.packed.size(), size_t(1));
    QCOMPARE(f.args[f.packed[0].arg].name, std::string("W"));
    testing::KernelHarness h;
    requireAllOk(h.check(dag, {steps}));
  }

  void plainOrderAndActivationsStayPlain() {
    // The naive dense walks W[j][k] in its own order: nothing to pack.
    QVERIFY(lowerPacked(te::makeOperator("dense", {8, 48, 40}), {}).packed.empty());
    // matmul's operands are activations, never packed, however the loops walk them.
    te::ComputeDAG mm = te::makeOperator("matmul", {32, 48, 40});
    QVERIFY(lowerPacked(mm, {SplitStep{2, 1, {16}}, ReorderStep{2, {1, 0, 3, 2}}}).packed.empty());
  }

  void disabledRewriteKeepsKernelsPlain() {
    codegen::CppOptions cpp;
    cpp.layoutRewrite = false;
    testing::KernelHarness h;
    requireAllOk(h.check(conv(), {tiledConv({2, 16})}, cpp));
    QVERIFY(h.sources().at(0).find("_pack(") == std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestLayoutRewrite)
#include "test_layout_rewrite.moc"
