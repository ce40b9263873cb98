// Ansor's per-store features on real lowered programs: layout, exact values
// on a naive matmul, annotations, buffer accesses, and extraction speed.
#include <QElapsedTimer>
#include <QtTest>
#include <cmath>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "codegen/cpp_codegen.h"
#include "cost/features.h"
#include "cost_test_support.h"
#include "lower/layout_rewrite.h"
#include "lower/loop_nest.h"
#include "schedule/sketch.h"
#include "schedule/steps.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;
using cost::ProgramFeatures;

namespace {

// Ansor's transform, recomputed here from the raw count.
float slog(double x) {
  return float(x < 0 ? -std::log2(-x + 1.0) : std::log2(x + 1.0));
}

size_t idx(const std::string& name) {
  const auto& names = cost::featureNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  qFatal("no feature named %s", name.c_str());
  return 0;
}

float at(const std::vector<float>& row, const std::string& name) {
  return row[idx(name)];
}

ProgramFeatures features(const te::ComputeDAG& dag, const std::vector<Step>& steps) {
  return cost::extractFeatures(lower::lowerState(replay(dag, steps)));
}

// The name of feature `f` of buffer-access block `b` (B0..B4).
std::string blockName(int b, const std::string& f) {
  std::string n(1, 'B');
  n += char('0' + b);
  n += '.';
  n += f;
  return n;
}

// The block (B0..B4) of the buffer access with this one-hot access type, or -1.
int blockWith(const std::vector<float>& row, const std::string& accType) {
  for (int b = 0; b < 5; ++b)
    if (at(row, blockName(b, "acc_type." + accType)) == 1.0f) return b;
  return -1;
}

bool allFinite(const ProgramFeatures& rows) {
  for (const auto& r : rows) {
    if (r.size() != cost::kNumFeatures) return false;
    for (float v : r)
      if (!std::isfinite(v)) return false;
  }
  return true;
}

using cost_test::samplePrograms;

// A register tile as the C++ shows it: vectors, lanes, the vectors loaded or
// broadcast in each step of its reduction loops, and the steps.
using TileSeen = std::tuple<int, int, int, long>;
TileSeen tileWritten(const std::string& code, size_t at, int vectors, int lanes) {
  const size_t stores = code.find("tessel_store", at);
  const size_t loops = code.find("for (", at);
  const std::string body = code.substr(loops, stores - loops);  // the reduction loops and their updates
  int loads = 0;
  for (const char* op : {"tessel_load", "tessel_splat"})
    for (size_t p = body.find(op); p != std::string::npos; p = body.find(op, p + 1))
      ++loads;
  long steps = 1;
  const std::regex loop("for \\(int \\w+ = 0; \\w+ < (\\d+);");
  for (std::sregex_iterator it(body.begin(), body.end(), loop), end; it != end; ++it)
    steps *= std::stol((*it)[1]);
  return {vectors, lanes, loads, steps};
}

}  // namespace

class TestFeatures : public QObject {
  Q_OBJECT

 private slots:
  void namesAreUnique() {
    const auto& names = cost::featureNames();
    QCOMPARE(names.size(), cost::kNumFeatures);
    QCOMPARE(std::set<std::string>(names.begin(), names.end()).size(), cost::kNumFeatures);
    QCOMPARE(names.front(), std::string("float_mad"));
    QCOMPARE(names[57], std::string("B0.acc_type.kRead"));
    QCOMPARE(names[163], std::string("auto_unroll_max_step"));  // the last of Ansor's 164
    QCOMPARE(names.back(), std::string("reg_tile_steps"));
  }

  void naiveMatmulCounts() {
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 32, 16});  // M, N, K
    ProgramFeatures rows = features(dag, {});
    QCOMPARE(rows.size(), size_t(2));  // init and update of C
    QVERIFY(allFinite(rows));
    const auto& init = rows[0];
    const auto& update = rows[1];
    // init: C[i, j] = 0 under two loops, no arithmetic.
    QCOMPARE(at(init, "float_mad"), 0.0f);
    QCOMPARE(at(init, "float_addsub"), 0.0f);
    QCOMPARE(at(init, "num_loops"), slog(2));
    QCOMPARE(at(init, "outer_prod"), slog(64 * 32));
    // update: C += A * B, one multiply-add per iteration of i, j, k.
    QCOMPARE(at(update, "float_mad"), slog(64.0 * 32 * 16));
    QCOMPARE(at(update, "float_addsub"), 0.0f);
    QCOMPARE(at(update, "float_mul"), 0.0f);
    QCOMPARE(at(update, "float_divmod"), 0.0f);
    QCOMPARE(at(update, "num_loops"), slog(3));
    QCOMPARE(at(update, "outer_prod"), slog(64.0 * 32 * 16));
    QVERIFY(at(update, "int_mad") > 0.0f);  // flat index arithmetic of the loads
    // No annotations, no GPU.
    for (const char* n : {"vec_num", "unroll_num", "parallel_num", "is_gpu", "auto_unroll_max_step", "alloc_size"})
      QCOMPARE(at(update, n), 0.0f);
    QCOMPARE(at(update, "vec_type.kPosNone"), 1.0f);
    QCOMPARE(at(update, "parallel_type.kPosNone"), 1.0f);
    QCOMPARE(at(update, "blockIdx_x_len"), slog(1));
    // The arithmetic intensity curve rises with the loop levels.
    QVERIFY(at(update, "arith_intensity_curve_9") > 0.0f);
    QVERIFY(at(update, "arith_intensity_curve_9") >= at(update, "arith_intensity_curve_0"));
    QCOMPARE(at(init, "arith_intensity_curve_0"), 0.0f);  // no FLOPs
  }

  void naiveMatmulBufferAccess() {
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 32, 16});
    ProgramFeatures rows = features(dag, {});
    const auto& init = rows[0];
    const auto& update = rows[1];
    const double iters = 64.0 * 32 * 16;

    // init writes C only.
    int w = blockWith(init, "kWrite");
    QVERIFY(w >= 0);
    QCOMPARE(blockWith(init, "kRead"), -1);
    QCOMPARE(at(init, blockName(w, "bytes")), slog(64.0 * 32 * 4));
    QCOMPARE(at(init, blockName(w, "stride")), slog(1));
    QCOMPARE(at(init, "B1.bytes"), 0.0f);  // padding

    // update: C read and written, A and B read; nothing else.
    int c = blockWith(update, "kReadWrite");
    QVERIFY(c >= 0);
    QCOMPARE(blockWith(update, "kWrite"), -1);
    int reads = 0;
    for (int b = 0; b < 5; ++b)
      reads += at(update, blockName(b, "acc_type.kRead")) == 1.0f;
    QCOMPARE(reads, 2);
    QCOMPARE(at(update, "B3.bytes"), 0.0f);
    QCOMPARE(at(update, blockName(c, "bytes")), slog(iters * 4));
    QCOMPARE(at(update, blockName(c, "unique_bytes")), slog(64.0 * 32 * 4));
    QCOMPARE(at(update, blockName(c, "stride")), 0.0f);  // k is innermost and not in C's index
    // C is reused across k (not in its index) and written by init before.
    QCOMPARE(at(update, blockName(c, "reuse_type.kLoopMultipleRead")), 1.0f);
    QCOMPARE(at(update, blockName(c, "reuse_ct")), slog(16));
    // Sorted by touched cache lines: B (stride N along k) first, then A, then C.
    QCOMPARE(at(update, "B0.stride"), slog(32));
    QCOMPARE(at(update, "B0.lines"), slog(iters));
    QCOMPARE(at(update, "B1.stride"), slog(1));
    QCOMPARE(at(update, "B1.lines"), slog(iters / 16));
    QCOMPARE(at(update, "B1.unique_bytes"), slog(64.0 * 16 * 4));
    QCOMPARE(at(update, "B1.unique_lines"), slog(64.0 * 16 * 4 / 64));
    // A[i, k] is reused across j after 16 iterations of k.
    QCOMPARE(at(update, "B1.reuse_type.kLoopMultipleRead"), 1.0f);
    QCOMPARE(at(update, "B1.reuse_ct"), slog(32));
    QCOMPARE(at(update, "B1.reuse_dis_iter"), slog(16));
    QCOMPARE(c, 2);
  }

  void parallelAndVectorize() {
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 64, 64});
    // stages: A(0) B(1) C(2); iters i, j, k.
    // j -> j.0, j.1 (8); loops i, j.0, k, j.1; parallel i, vectorize j.1.
    std::vector<Step> steps = {SplitStep{2, 1, {8}}, ReorderStep{2, {0, 1, 3, 2}},
                               AnnotationStep{2, 0, Annotation::Parallel}, AnnotationStep{2, 3, Annotation::Vectorize}};
    ProgramFeatures rows = features(dag, steps);
    QCOMPARE(rows.size(), size_t(2));
    QVERIFY(allFinite(rows));
    for (const auto& row : rows) {
      QCOMPARE(at(row, "parallel_num"), slog(1));
      QCOMPARE(at(row, "parallel_len"), slog(64));
      QCOMPARE(at(row, "parallel_prod"), slog(64));
      QCOMPARE(at(row, "parallel_type.kPosOuterSpatial"), 1.0f);
      QCOMPARE(at(row, "parallel_type.kPosNone"), 0.0f);
      QCOMPARE(at(row, "vec_num"), slog(1));
      QCOMPARE(at(row, "vec_len"), slog(8));
      QCOMPARE(at(row, "vec_type.kPosInnerSpatial"), 1.0f);
      QCOMPARE(at(row, "unroll_num"), 0.0f);
    }
    // The vectorized store walks C and B contiguously.
    const auto& update = rows[1];
    int c = blockWith(update, "kReadWrite");
    QCOMPARE(at(update, blockName(c, "stride")), slog(1));

    // Parallel on a fused loop of i and j: mixed position.
    std::vector<Step> fused = {FuseStep{2, {0, 1}}, AnnotationStep{2, 0, Annotation::Parallel}, PragmaStep{2, 0, 64}};
    ProgramFeatures f = features(dag, fused);
    QCOMPARE(f.size(), size_t(2));
    QCOMPARE(at(f[1], "parallel_len"), slog(64 * 64));
    QCOMPARE(at(f[1], "parallel_type.kPosMixed"), 1.0f);
    QCOMPARE(at(f[1], blockName(blockWith(f[1], "kReadWrite"), "unique_bytes")), slog(64.0 * 64 * 4));
    // auto_unroll_max_step 64 unrolls k (64 iterations) under the update.
    QCOMPARE(at(f[1], "auto_unroll_max_step"), slog(64));
    QCOMPARE(at(f[1], "unroll_type.kPosInnerReduce"), 1.0f);
  }

  void cacheWriteAllocation() {
    te::ComputeDAG dag = te::makeOperator("matmul", {32, 32, 16});
    // C.local computed at C's second tile loop: a local 8x8 buffer.
    std::vector<Step> steps = {CacheWriteStep{2, Scope::Local}, SplitStep{3, 0, {8}}, SplitStep{3, 2, {8}},
                               ReorderStep{3, {0, 2, 1, 3}}, ComputeAtStep{2, 3, 1}};
    ProgramFeatures rows = features(dag, steps);
    QCOMPARE(rows.size(), size_t(3));  // C.local init, update; C copy
    QVERIFY(allFinite(rows));
    for (size_t r = 0; r < 2; ++r) {
      QCOMPARE(at(rows[r], "alloc_size"), slog(64 * 4));
      QCOMPARE(at(rows[r], "alloc_outer_prod"), slog(16));  // 4 x 4 tiles outside
      QCOMPARE(at(rows[r], "alloc_prod"), slog(64 * 16));
    }
    QCOMPARE(at(rows[1], "alloc_inner_prod"), slog(64 * 16));  // 8 x 8 x k inside
    QCOMPARE(at(rows[2], "alloc_size"), 0.0f);                 // C is an output
    QCOMPARE(at(rows[1], "float_mad"), slog(32.0 * 32 * 16));
  }

  void differentSchedulesDiffer() {
    te::ComputeDAG dag = te::makeOperator("matmul", {128, 128, 128});
    HardwareParams hw;
    std::vector<std::vector<Step>> programs = samplePrograms(dag, hw, 30, 7);
    QVERIFY(programs.size() >= 20);
    std::set<ProgramFeatures> distinct;
    for (const auto& p : programs) {
      ProgramFeatures f = cost::extractProgramFeatures(dag, p);
      QVERIFY(!f.empty());
      QVERIFY(allFinite(f));
      distinct.insert(f);
    }
    QVERIFY2(distinct.size() >= programs.size() * 3 / 4,
             qPrintable(QString("%1 distinct of %2").arg(distinct.size()).arg(programs.size())));
    QVERIFY(features(dag, {}) != features(dag, programs[0]));
  }

  void manyOpsAreFinite_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("target");
    QTest::newRow("conv2d") << "conv2d"
                            << "1,8,12,12,16,3,3,1,1"
                            << "cpu";
    QTest::newRow("depthwise") << "depthwise_conv2d"
                               << "1,8,12,12,3,3,1,1"
                               << "cpu";
    QTest::newRow("softmax") << "softmax"
                             << "6,100"
                             << "cpu";
    QTest::newRow("layernorm") << "layernorm"
                               << "5,64"
                               << "cpu";
    QTest::newRow("gelu") << "gelu"
                          << "3,5,7"
                          << "cpu";
    QTest::newRow("max_pool") << "max_pool2d"
                              << "1,4,12,12,3,2,1"
                              << "cpu";
  }

  void manyOpsAreFinite() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    QFETCH(QString, target);
    std::vector<int64_t> dims;
    for (const QString& s : shape.split(','))
      dims.push_back(s.toLongLong());
    te::ComputeDAG dag = te::makeOperator(op.toStdString(), dims);
    HardwareParams hw;
    hw.target = tessel::target::parseTarget(target.toStdString());
    std::vector<std::vector<Step>> programs = samplePrograms(dag, hw, 20, 3);
    QVERIFY(!programs.empty());
    programs.push_back({});
    for (const auto& p : programs) {
      ProgramFeatures f = cost::extractProgramFeatures(dag, p);
      QVERIFY(!f.empty());
      QVERIFY(allFinite(f));
      for (const auto& row : f)
        QCOMPARE(at(row, "is_gpu"), 0.0f);
    }
  }

  void gpuBindings() {
    te::ComputeDAG dag = te::makeOperator("matmul", {30, 20, 17});
    // i -> 3 x 2 x 5, j -> 2 x 2 x 5; blockIdx.x over the fused outer tiles
    // (6), vthread over i.1 (2), threadIdx.x over i.2 (5); shared copies.
    std::vector<Step> steps = {SplitStep{2, 0, {2, 5}},
                               SplitStep{2, 3, {2, 5}},
                               ReorderStep{2, {0, 3, 1, 4, 2, 5, 6}},
                               FuseStep{2, {0, 1}},
                               AnnotationStep{2, 0, Annotation::BlockX},
                               AnnotationStep{2, 1, Annotation::VThread},
                               AnnotationStep{2, 3, Annotation::ThreadX},
                               CacheReadStep{0, Scope::Shared, {2}},
                               CacheReadStep{2, Scope::Shared, {3}},
                               ComputeAtStep{1, 4, 0},
                               ComputeAtStep{3, 4, 0}};
    ProgramFeatures rows = features(dag, steps);
    QCOMPARE(rows.size(), size_t(4));  // two shared copies, init, update
    QVERIFY(allFinite(rows));
    for (const auto& row : rows) {
      QCOMPARE(at(row, "is_gpu"), 1.0f);
      QCOMPARE(at(row, "blockIdx_x_len"), slog(6));
      QCOMPARE(at(row, "blockIdx_y_len"), slog(1));
    }
    const auto& update = rows.back();
    QCOMPARE(at(update, "vthread_len"), slog(2));
    QCOMPARE(at(update, "threadIdx_x_len"), slog(5));
    QCOMPARE(at(update, "float_mad"), slog(30.0 * 20 * 17));
    // The shared copies are allocated inside the block loop.
    QCOMPARE(at(rows[0], "alloc_outer_prod"), slog(6));
    QVERIFY(at(rows[0], "alloc_size") > 0.0f);
  }

  // The register-tile features say what the code generator writes: for
  // random schedules of a convolution and a matmul, on AVX-512 (16 lanes, 32
  // registers) and AVX2 (8 lanes, 16 registers), the rows marked reg_tile
  // are the kernel's register tiles, with their vectors, lanes, the loads
  // and broadcasts of each reduction step per FMA and the steps; a tile too
  // large for the registers is marked spilled instead. CUDA: none.
  void registerTilesAsTheCodeGeneratorWritesThem() {
    const std::regex tileComment("register tile of [^\\n]*\\): (\\d+) vectors of (\\d+) floats");
    int tiled = 0, spilled = 0;
    for (const char* targetText : {"cpu -arch=x86-64-v4", "cpu -arch=x86-64-v3"}) {
      const target::Target target = target::parseTarget(targetText);
      for (const te::ComputeDAG& dag : {te::makeOperator("conv2d", {1, 16, 14, 14, 32, 3, 3, 1, 1}, te::Layout::NHWC),
                                        te::makeOperator("matmul", {64, 64, 64})}) {
        HardwareParams hw;
        for (const auto& p : samplePrograms(dag, hw, 40, 11)) {
          lower::LoweredFunc f = lower::lowerState(replay(dag, p));
          lower::rewriteLayouts(&f);
          const std::string code = codegen::emitCppKernel(f, "k", codegen::CppOptions(target));
          std::multiset<TileSeen> written, marked;
          for (std::sregex_iterator it(code.begin(), code.end(), tileComment), end; it != end; ++it)
            written.insert(tileWritten(code, size_t(it->position()), std::stoi((*it)[1]), std::stoi((*it)[2])));
          for (const auto& row : cost::extractFeatures(f, target)) {
            QVERIFY(at(row, "reg_tile") == 0.0f || at(row, "reg_tile_spilled") == 0.0f);
            if (at(row, "reg_tile") == 1.0f) {
              const int vectors = int(std::lround(std::exp2(at(row, "reg_tile_vectors")) - 1));
              marked.insert({vectors, int(std::lround(std::exp2(at(row, "reg_tile_lanes")) - 1)),
                             int(std::lround(at(row, "reg_tile_loads_per_fma") * float(vectors))),
                             std::lround(std::exp2(at(row, "reg_tile_steps")) - 1)});
            }
            if (at(row, "reg_tile_spilled") == 1.0f) {
              ++spilled;
              QVERIFY(at(row, "reg_tile_vectors") > 0.0f);
            }
          }
          QCOMPARE(marked, written);
          tiled += int(written.size());
        }
      }
    }
    QVERIFY2(tiled >= 20 && spilled >= 5, qPrintable(QString("%1 tiles, %2 spilled").arg(tiled).arg(spilled)));
    // The same program for CUDA: no register tiles.
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 64, 64});
    HardwareParams hw;
    for (const auto& p : samplePrograms(dag, hw, 10, 11))
      for (const auto& row : cost::extractProgramFeatures(dag, p, target::parseTarget("cuda")))
        for (const char* name : {"reg_tile", "reg_tile_vectors", "reg_tile_lanes", "reg_tile_spilled",
                                 "reg_tile_loads_per_fma", "reg_tile_steps"})
          QCOMPARE(at(row, name), 0.0f);
  }

  void invalidProgramGivesEmpty() {
    te::ComputeDAG dag = te::makeOperator("matmul", {16, 16, 16});
    QVERIFY(cost::extractProgramFeatures(dag, {SplitStep{7, 0, {4}}}).empty());
    QVERIFY(cost::extractProgramFeatures(dag, {ComputeAtStep{2, 2, 0}}).empty());
  }

  void extractionSpeed() {
    te::ComputeDAG dag = te::makeOperator("matmul", {256, 256, 256});
    HardwareParams hw;
    std::vector<std::vector<Step>> programs = samplePrograms(dag, hw, 200, 11);
    QVERIFY(programs.size() >= 100);
    std::vector<lower::LoweredFunc> lowered;
    for (const auto& p : programs)
      lowered.push_back(lower::lowerState(replay(dag, p)));

    QElapsedTimer t;
    t.start();
    size_t rows = 0;
    for (const auto& p : programs)
      rows += cost::extractProgramFeatures(dag, p).size();
    double full = double(t.nsecsElapsed()) * 1e-9;

    t.restart();
    const int reps = 5;
    for (int r = 0; r < reps; ++r)
      for (const auto& f : lowered)
        rows += cost::extractFeatures(f).size();
    double only = double(t.nsecsElapsed()) * 1e-9 / reps;
    QVERIFY(rows > 0);
    qInfo(
        "features of %zu annotated 256-matmul programs: %.0f programs/s with replay + lowering, "
        "%.0f programs/s extraction alone",
        programs.size(), double(programs.size()) / full, double(programs.size()) / only);
  }
};

QTEST_APPLESS_MAIN(TestFeatures)
#include "test_features.moc"
