// Every operator, under many random schedules and under hand-written ones
// that use every step, computes the same numbers as its naive program.
#include <QtTest>
#include <algorithm>

#include "attention_samples.h"
#include "gpu_samples.h"
#include "kernel_harness.h"
#include "schedule/sketch.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

void requireAllOk(const std::vector<testing::CheckOutcome>& res, const std::vector<std::vector<Step>>& programs) {
  for (size_t i = 0; i < res.size(); ++i)
    if (!res[i].ok)
      QFAIL(qPrintable(QString("program %1 %2 failed: %3")
                           .arg(i)
                           .arg(QString::fromStdString(serializeSteps(programs[i])))
                           .arg(QString::fromStdString(res[i].message))));
}

}  // namespace

class TestSchedules : public QObject {
  Q_OBJECT

 private slots:
  void randomSchedulesMatchNaive_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::newRow("matmul") << "matmul"
                            << "48,40,36";
    QTest::newRow("matmul_odd") << "matmul"
                                << "17,23,29";
    QTest::newRow("batch_matmul") << "batch_matmul"
                                  << "3,16,24,20";
    QTest::newRow("dense") << "dense"
                           << "16,40,32";
    QTest::newRow("conv2d") << "conv2d"
                            << "1,8,12,12,16,3,3,1,1";
    QTest::newRow("conv2d_strided") << "conv2d"
                                    << "2,4,11,11,8,3,3,2,1,1,1";
    QTest::newRow("conv2d_dilated") << "conv2d"
                                    << "1,4,12,12,4,3,3,1,2,2,1";
    QTest::newRow("conv2d_grouped") << "conv2d"
                                    << "1,8,10,10,8,3,3,1,1,1,2";
    QTest::newRow("depthwise_conv2d") << "depthwise_conv2d"
                                      << "1,8,12,12,3,3,1,1";
    QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                      << "1,8,10,10,8,3,3,1,1";
    // "@nhwc": the channels-last definition the CPU tunes by default.
    QTest::newRow("conv2d nhwc") << "conv2d@nhwc"
                                 << "1,8,12,12,16,3,3,1,1";
    QTest::newRow("conv2d nhwc strided grouped") << "conv2d@nhwc"
                                                 << "1,8,11,11,8,3,3,2,1,1,2";
    QTest::newRow("conv2d_bias_relu nhwc") << "conv2d_bias_relu@nhwc"
                                           << "1,8,10,10,16,3,3,1,1";
    QTest::newRow("depthwise_conv2d nhwc") << "depthwise_conv2d@nhwc"
                                           << "1,16,10,10,3,3,1,1";
    QTest::newRow("max_pool2d nhwc") << "max_pool2d@nhwc"
                                     << "1,8,12,12,3,2,1";
    QTest::newRow("max_pool2d") << "max_pool2d"
                                << "1,4,12,12,3,2,1";
    QTest::newRow("avg_pool2d") << "avg_pool2d"
                                << "1,4,12,12,3,2,1";
    QTest::newRow("global_avg_pool") << "global_avg_pool"
                                     << "2,8,7,7";
    QTest::newRow("relu") << "relu"
                          << "4,33";
    QTest::newRow("gelu") << "gelu"
                          << "3,5,7";
    QTest::newRow("add") << "add"
                         << "6,50";
    QTest::newRow("mul") << "mul"
                         << "64";
    QTest::newRow("bias_add") << "bias_add"
                              << "2,8,5,5";
    QTest::newRow("softmax") << "softmax"
                             << "6,100";
    QTest::newRow("softmax_small") << "softmax"
                                   << "2,1000";
    QTest::newRow("layernorm") << "layernorm"
                               << "5,64";
  }

  // Register tiles (explicit vector code for the innermost tile of a
  // reduction) compute what the naive program does, at every vector width,
  // with the broadcast x vector FMA of matmuls and convolutions and the max of
  // pooling; random schedules of these ops produce them.
  void registerTilesMatchNaive_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::addColumn<int>("lanes");
    for (int lanes : {16, 8, 4}) {
      const QByteArray w = QByteArray::number(lanes);
      QTest::newRow("matmul/" + w) << "matmul"
                                   << "48,64,40" << lanes;
      QTest::newRow("conv2d_bias_relu nhwc/" + w) << "conv2d_bias_relu@nhwc"
                                                  << "1,8,10,10,16,3,3,1,1" << lanes;
      QTest::newRow("conv2d nhwc/" + w) << "conv2d@nhwc"
                                        << "1,8,10,10,32,3,3,1,1" << lanes;
      QTest::newRow("batch_matmul/" + w) << "batch_matmul"
                                         << "2,16,32,24" << lanes;
    }
  }
  void registerTilesMatchNaive() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    QFETCH(int, lanes);
    std::vector<int64_t> dims;
    for (const QString& s : shape.split(','))
      dims.push_back(s.toLongLong());
    QStringList opLayout = op.split('@');
    te::Layout layout = opLayout.size() > 1 ? te::parseLayout(opLayout[1].toStdString()) : te::Layout::NCHW;
    te::ComputeDAG dag = te::makeOperator(opLayout[0].toStdString(), dims, layout);
    HardwareParams hw;
    std::vector<Sketch> sketches = generateSketches(dag, hw);
    std::mt19937_64 rng(5);
    std::vector<std::vector<Step>> programs;
    for (int i = 0; programs.size() < 40 && i < 1000; ++i) {
      try {
        programs.push_back(annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng));
      } catch (const ScheduleError&) {
      }
    }
    codegen::CppOptions cpp;
    cpp.isa = {"test", lanes, lanes == 16 ? 32 : 16};
    testing::KernelHarness h;
    requireAllOk(h.check(dag, programs, cpp), programs);
    int tiles = 0;
    for (const std::string& src : h.sources())
      tiles += src.find("register tile") != std::string::npos;
    QVERIFY2(tiles >= 3, qPrintable(QString("%1 of %2 programs have a register tile").arg(tiles).arg(programs.size())));
  }

  // Pooling with its channels innermost (reordered under the window) is a
  // max tile; checked against the naive program.
  void poolingMaxTile() {
    te::ComputeDAG dag = te::makeOperator("max_pool2d", {1, 32, 9, 9, 3, 2, 1}, te::Layout::NHWC);
    State s(dag);
    const int pool = s.stageIndex(s.outputs.at(0));
    QVERIFY(pool >= 0);
    QCOMPARE(s.stages[size_t(pool)].iters.size(), size_t(6));  // n, h, w, c, then the window r, s
    std::vector<Step> program = {ReorderStep{pool, {0, 1, 2, 4, 5, 3}}};
    testing::KernelHarness h;
    requireAllOk(h.check(dag, {program}), {program});
    QVERIFY2(h.sources().at(0).find("tessel_max") != std::string::npos, h.sources().at(0).c_str());

    // The sketch rule that builds such programs for pools, beside the plain sketch.
    HardwareParams hw;
    std::vector<Sketch> sketches = generateSketches(dag, hw);
    std::vector<std::vector<Step>> programs;
    std::mt19937_64 rng(3);
    bool plain = false;
    for (const Sketch& sk : sketches) {
      const bool tiled = std::find(sk.rules.begin(), sk.rules.end(), "innermost_spatial_tile") != sk.rules.end();
      plain |= !tiled;
      for (int i = 0; tiled && i < 12; ++i)
        programs.push_back(annotateSketch(sk, hw, rng));
    }
    QVERIFY(plain);
    QVERIFY2(!programs.empty(), "no innermost_spatial_tile sketch for max_pool2d");
    testing::KernelHarness h2;
    requireAllOk(h2.check(dag, programs), programs);
    int tiles = 0;
    for (const std::string& src : h2.sources())
      tiles += src.find("tessel_max") != std::string::npos;
    QVERIFY2(tiles >= 6,
             qPrintable(QString("%1 of %2 pooling programs have a max tile").arg(tiles).arg(programs.size())));
  }

  void randomSchedulesMatchNaive() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    std::vector<int64_t> dims;
    for (const QString& s : shape.split(','))
      dims.push_back(s.toLongLong());
    QStringList opLayout = op.split('@');
    te::Layout layout = opLayout.size() > 1 ? te::parseLayout(opLayout[1].toStdString()) : te::Layout::NCHW;
    te::ComputeDAG dag = te::makeOperator(opLayout[0].toStdString(), dims, layout);
    HardwareParams hw;
    std::vector<Sketch> sketches = generateSketches(dag, hw);
    QVERIFY(!sketches.empty());
    std::mt19937_64 rng(42);
    std::vector<std::vector<Step>> programs;
    // Every sketch at least twice, then random ones.
    for (int i = 0; programs.size() < std::max<size_t>(12, 2 * sketches.size()) && i < 500; ++i) {
      try {
        programs.push_back(annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng));
      } catch (const ScheduleError&) {
      }
    }
    QVERIFY(programs.size() >= 12);
    testing::KernelHarness h;
    requireAllOk(h.check(dag, programs), programs);
  }

  // A layer norm feeding a matmul (Swin's attention input): random programs
  // never inline the normalisation (a sqrt and a division) into the matmul's
  // reduction, nor attach the row statistics below a loop that does not
  // index them (each would recompute them per channel or per column), and
  // still compute what the naive program does.
  void costlyStagesAreNotRecomputed() {
    te::DagBuilder b;
    te::Tensor x = b.placeholder("x", {64, 96});
    te::Tensor gamma = b.placeholder("gamma", {96}), beta = b.placeholder("beta", {96});
    te::Tensor w = b.placeholder("w", {96, 128});
    te::Tensor y = te::matmul(b, te::layerNorm(b, x, gamma, beta), w, "C");
    te::ComputeDAG dag = b.build({y.name()});
    HardwareParams hw;
    std::vector<Sketch> sketches = generateSketches(dag, hw);
    std::mt19937_64 rng(7);
    std::vector<std::vector<Step>> programs;
    for (int i = 0; programs.size() < 40 && i < 400; ++i) {
      try {
        programs.push_back(annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng));
      } catch (const ScheduleError&) {
      }
    }
    QVERIFY(programs.size() >= 20);
    int attached = 0;
    for (const std::vector<Step>& program : programs) {
      State s(dag);
      for (const Step& step : program) {
        if (const auto* ci = std::get_if<ComputeInlineStep>(&step)) {
          const te::Op& op = s.stages[size_t(ci->stage)].op;
          QVERIFY2(!(op.hasReduce() || hasExpensiveOp(op.body)) || s.consumers(ci->stage).empty() ||
                       !s.stages[size_t(s.consumers(ci->stage)[0])].op.hasReduce(),
                   qPrintable(QString::fromStdString("inlined " + op.name + ": " + serializeSteps(program))));
        }
        if (const auto* ca = std::get_if<ComputeAtStep>(&step)) {
          const te::Op& op = s.stages[size_t(ca->stage)].op;
          const Stage& target = s.stages[size_t(ca->target)];
          if (op.hasReduce() || hasExpensiveOp(op.body)) {
            ++attached;
            // Every loop down to the attach point derives from an axis the target reads the stage with.
            std::vector<const te::ExprNode*> loads;
            te::collectLoads(target.op.body, &loads);
            std::vector<std::string> vars;
            for (const te::ExprNode* l : loads)
              if (l->name == op.name)
                for (const te::Expr& index : l->args)
                  te::collectVars(index, &vars);
            for (int k = 0; k <= ca->targetIter; ++k) {
              const std::string& loop = target.iters[size_t(k)].name;
              QVERIFY2(std::find(vars.begin(), vars.end(), loop.substr(0, loop.find('.'))) != vars.end(),
                       qPrintable(QString::fromStdString(op.name + " at " + loop + ": " + serializeSteps(program))));
            }
          }
        }
        applyStep(s, step);
      }
    }
    QVERIFY2(attached > 0, "no program attached a costly stage: the check above checked nothing");
    testing::KernelHarness h;
    requireAllOk(h.check(dag, programs), programs);
  }

  // AutoGTCO's softmax-into-batch-matmul rule fires on attention (a batch
  // matmul reading a softmax, directly or through an element-wise stage),
  // and on neither a plain batch matmul nor a plain softmax. It is the
  // GPU's: the CPU's list has it only where a test adds it.
  void softmaxFusionRuleFiresOnAttentionOnly() {
    auto fires = [](const te::ComputeDAG& dag, const HardwareParams& hw) {
      std::vector<Sketch> sketches = generateSketches(dag, hw);
      return std::count_if(sketches.begin(), sketches.end(),
                           [](const Sketch& sk) { return testing::hasRule(sk, testing::kSoftmaxFusionRule); });
    };
    QCOMPARE(fires(testing::attentionDag(), HardwareParams{}), 0);  // the CPU's list leaves it out
    testing::CpuSoftmaxFusionRule cpuRule;
    for (const char* target : {"cpu", "cuda"}) {
      HardwareParams hw;
      hw.target = tessel::target::parseTarget(target);
      QCOMPARE(fires(testing::attentionDag(), hw), 1);
      QCOMPARE(fires(testing::attentionDag({2, 16, 8, false, false, true}), hw), 1);
      QCOMPARE(fires(te::makeOperator("batch_matmul", {2, 16, 24, 20}), hw), 0);
      QCOMPARE(fires(te::makeOperator("softmax", {6, 100}), hw), 0);
      QCOMPARE(fires(te::makeOperator("matmul", {48, 40, 36}), hw), 0);
      // The rule's sketches stay beside the others.
      QVERIFY(generateSketches(testing::attentionDag(), hw).size() > 1);
    }
  }

  // In the rule's CPU sketch every softmax stage (and the scaling before it)
  // is computed at the matmul's level-1 row-tile loop, no column loop above
  // it; random programs of it
  // keep them there (parallel loops stop at it, so no program recomputes
  // the softmax per column tile), keep no whole-tensor temporary, and compute
  // what the naive program does.
  void softmaxFusedIntoBatchMatmulMatchesNaive_data() {
    QTest::addColumn<int>("variant");
    QTest::newRow("4-d, scaled (as bert's)") << 0;
    QTest::newRow("3-d, an element-wise stage between") << 1;
    QTest::newRow("4-d, softmax of the input") << 2;
  }
  void softmaxFusedIntoBatchMatmulMatchesNaive() {
    QFETCH(int, variant);
    const testing::AttentionShape shapes[] = {
        {2, 24, 16, true, true, false}, {3, 20, 12, false, true, true}, {2, 16, 8, true, false, false}};
    te::ComputeDAG dag = testing::attentionDag(shapes[variant]);
    testing::CpuSoftmaxFusionRule cpuRule;
    HardwareParams hw;
    std::vector<Sketch> sketches = generateSketches(dag, hw);
    auto sk = std::find_if(sketches.begin(), sketches.end(),
                           [](const Sketch& s) { return testing::hasRule(s, testing::kSoftmaxFusionRule); });
    QVERIFY(sk != sketches.end());
    const std::string out = sk->state.outputs.at(0);
    const Stage& mm = sk->state.stage(out);
    const std::string rowTile = mm.op.axes[mm.op.axes.size() - 2].name + ".1";
    int placed = 0;
    for (const Stage& st : sk->state.stages) {
      if (st.op.placeholder || st.op.name == out || st.location == ComputeLocation::Inlined) continue;
      QCOMPARE(int(st.location), int(ComputeLocation::At));
      QCOMPARE(QString::fromStdString(st.attachStage + ":" + st.attachIter),
               QString::fromStdString(out + ":" + rowTile));
      ++placed;
    }
    QCOMPARE(placed, shapes[variant].scaled ? 5 : 4);  // max, exp, sum, normalised (and the scaling)

    std::vector<std::vector<Step>> programs = testing::sampleRulePrograms(dag, hw, 24);
    QVERIFY(programs.size() >= 20);
    for (const std::vector<Step>& p : programs) {
      State s = replay(dag, p);
      const Stage& m = s.stage(out);
      for (const Stage& st : s.stages)
        if (!st.op.placeholder && st.op.name != out && st.location != ComputeLocation::Inlined) {
          QCOMPARE(QString::fromStdString(st.attachStage), QString::fromStdString(out));
          // Only batch and row loops down to the attach point: no column loop.
          for (const Iterator& it : m.iters) {
            QVERIFY2(it.name.find(m.op.axes.back().name + ".") == std::string::npos,
                     qPrintable(QString::fromStdString(it.name + " above " + st.op.name + ": " + serializeSteps(p))));
            if (it.name == st.attachIter) break;
          }
        }
      lower::LoweredFunc f = lower::lowerState(s);
      if (!f.temps.empty()) QFAIL(qPrintable(QString::fromStdString(f.temps[0].name + " is a whole tensor")));
    }
    testing::KernelHarness h;
    requireAllOk(h.check(dag, programs), programs);
  }

  // The NHWC definitions compute what the NCHW ones do, on transposed data.
  void nhwcComputesWhatNchwDoes_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::newRow("conv2d") << "conv2d"
                            << "2,6,9,9,8,3,3,1,1";
    QTest::newRow("conv2d strided dilated") << "conv2d"
                                            << "1,4,13,12,6,3,2,2,1,2,1";
    QTest::newRow("conv2d grouped") << "conv2d"
                                    << "1,8,8,8,12,3,3,1,1,1,4";
    QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                      << "1,4,7,7,8,1,1,1,0";
    QTest::newRow("depthwise_conv2d") << "depthwise_conv2d"
                                      << "1,8,9,9,3,3,2,1";
    QTest::newRow("max_pool2d") << "max_pool2d"
                                << "1,5,9,9,3,2,1";
    QTest::newRow("avg_pool2d") << "avg_pool2d"
                                << "2,3,8,8,2,2,0";
    QTest::newRow("global_avg_pool") << "global_avg_pool"
                                     << "1,6,5,5";
  }

  void nhwcComputesWhatNchwDoes() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    std::vector<int64_t> s;
    for (const QString& v : shape.split(','))
      s.push_back(v.toLongLong());
    const std::string name = op.toStdString();
    te::ComputeDAG nchw = te::makeOperator(name, s, te::Layout::NCHW);
    te::ComputeDAG nhwc = te::makeOperator(name, s, te::Layout::NHWC);
    // [a,b,c,d] -> [c,d,b,a] for weights (KCRS -> RSCK), [a,c,d,b] for images.
    auto permute = [](const std::vector<float>& in, const std::vector<int64_t>& d, bool weight) {
      std::vector<float> out(in.size());
      for (int64_t a = 0; a < d[0]; ++a)
        for (int64_t b = 0; b < d[1]; ++b)
          for (int64_t c = 0; c < d[2]; ++c)
            for (int64_t e = 0; e < d[3]; ++e) {
              size_t from = size_t(((a * d[1] + b) * d[2] + c) * d[3] + e);
              size_t to = weight ? size_t(((c * d[3] + e) * d[1] + b) * d[0] + a)
                                 : size_t(((a * d[2] + c) * d[3] + e) * d[1] + b);
              out[to] = in[from];
            }
      return out;
    };
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<std::vector<float>> inA, inB;
    for (const te::Op& o : nchw.ops()) {
      if (!o.placeholder) continue;
      std::vector<float> v(size_t(o.numElements()));
      for (float& x : v)
        x = u(rng);
      inA.push_back(v);
      inB.push_back(o.shape.size() == 4 ? permute(v, o.shape, o.name == "W") : v);
    }
    testing::KernelHarness h;
    std::vector<std::vector<float>> outA = h.runNaive(nchw, inA), outB = h.runNaive(nhwc, inB);
    QCOMPARE(outA.size(), size_t(1));
    QCOMPARE(outB.size(), size_t(1));
    const te::Op& outOp = nchw.ops().back();
    std::vector<float> want = permute(outA[0], outOp.shape, false);
    QCOMPARE(outB[0].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      QVERIFY2(std::fabs(outB[0][i] - want[i]) <= 1e-5f * (1 + std::fabs(want[i])),
               qPrintable(QString("element %1: %2 vs %3").arg(i).arg(outB[0][i]).arg(want[i])));
  }

  // GPU sketches (SSSRRSRS tiling, shared-memory caches, cross-thread
  // reduction, thread bindings) lower to loop nests that compute the right
  // numbers when run serially on the host.
  void gpuSketchesLowerCorrectly_data() { testing::addGpuSampleRows(); }

  void gpuSketchesLowerCorrectly() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    testing::GpuSample sample = testing::sampleGpuPrograms(op, shape);
    const te::ComputeDAG& dag = sample.dag;
    const std::vector<std::vector<Step>>& programs = sample.programs;
    QVERIFY(programs.size() >= 8);
    bool threads = false, blocks = false, shared = false;
    for (const auto& p : programs) {
      lower::LoweredFunc f = lower::lowerState(replay(dag, p));
      std::string text = lower::toString(f.body);
      // (Bindings of extent 1 are lowered away: a small op's program may have threads or blocks only.)
      threads |= text.find("threadIdx.x") != std::string::npos;
      blocks |= text.find("blockIdx.x") != std::string::npos;
      shared |= lower::sharedMemoryBytes(f) > 0;
    }
    QVERIFY(threads && blocks);
    if (op == "matmul" || op == "dense" || op == "conv2d_bias_relu") QVERIFY(shared);
    testing::KernelHarness h;
    requireAllOk(h.check(dag, programs), programs);
  }

  // Hand-written schedules that use every step, uneven splits included.
  void everyStepMatchesNaive() {
    te::ComputeDAG mm = te::makeOperator("matmul", {30, 20, 17});
    // stages: A(0) B(1) C(2)
    std::vector<std::vector<Step>> p = {
        // uneven split, reorder, fuse, parallel, vectorize, unroll, pragma
        {SplitStep{2, 0, {4}}, SplitStep{2, 2, {3, 2}}, ReorderStep{2, {0, 2, 5, 1, 3, 4}}, FuseStep{2, {0, 1}},
         AnnotationStep{2, 0, Annotation::Parallel}, AnnotationStep{2, 4, Annotation::Vectorize},
         AnnotationStep{2, 3, Annotation::Unroll}, PragmaStep{2, 0, 64}},
        // cache_write + tiling + compute_at
        {CacheWriteStep{2, Scope::Local}, SplitStep{3, 0, {8}}, SplitStep{3, 2, {8}}, ReorderStep{3, {0, 2, 1, 3}},
         ComputeAtStep{2, 3, 1}, SplitStep{2, 2, {4}}},
        // rfactor of the inner and of the outer part of k
        {SplitStep{2, 2, {4}}, RfactorStep{2, 3, 2}},
        {SplitStep{2, 2, {4}}, RfactorStep{2, 2, 0}, AnnotationStep{2, 0, Annotation::Parallel}},
        // cache_read into a local copy computed inside C's loops
        {CacheReadStep{0, Scope::Local, {2}}, SplitStep{3, 0, {5}}, ComputeAtStep{1, 3, 0}},
        // GPU-style bindings: blockIdx, vthread, threadIdx, shared caches
        {SplitStep{2, 0, {2, 5}}, SplitStep{2, 3, {2, 5}}, ReorderStep{2, {0, 3, 1, 4, 2, 5, 6}}, FuseStep{2, {0, 1}},
         AnnotationStep{2, 0, Annotation::BlockX}, AnnotationStep{2, 1, Annotation::VThread},
         AnnotationStep{2, 3, Annotation::ThreadX}, CacheReadStep{0, Scope::Shared, {2}},
         CacheReadStep{2, Scope::Shared, {3}}, ComputeAtStep{1, 4, 0}, ComputeAtStep{3, 4, 0}},
        // cross-thread reduction: a reduce iterator bound to threadIdx.x
        {SplitStep{2, 2, {8}}, AnnotationStep{2, 3, Annotation::ThreadX}, AnnotationStep{2, 0, Annotation::BlockX}},
        // compute_root after compute_at
        {CacheWriteStep{2, Scope::Local}, ComputeAtStep{2, 3, 0}, ComputeRootStep{2}},
    };
    testing::KernelHarness h;
    requireAllOk(h.check(mm, p), p);

    te::ComputeDAG conv = te::makeOperator("conv2d_bias_relu", {1, 4, 9, 9, 8, 3, 3, 1, 1});
    // stages: X(0) W(1) pad(2) conv(3) bias(4) bias_relu(5)
    std::vector<std::vector<Step>> c = {
        {ComputeInlineStep{2}},
        {ComputeAtStep{2, 3, 2}, ComputeAtStep{3, 5, 1}},
        {ComputeInlineStep{2}, SplitStep{5, 2, {3}}, ComputeAtStep{3, 5, 2},
         AnnotationStep{5, 0, Annotation::Parallel}},
        {SplitStep{3, 4, {2}}, ComputeAtStep{2, 3, 3}, AnnotationStep{3, 1, Annotation::Parallel}},
    };
    requireAllOk(h.check(conv, c), c);

    te::ComputeDAG sm = te::makeOperator("softmax", {5, 37});
    // stages: X(0) T_max(1) T_exp(2) T_sum(3) T_softmax(4)
    std::vector<std::vector<Step>> s = {
        {ComputeAtStep{1, 2, 0}},
        {SplitStep{3, 1, {8}}, RfactorStep{3, 2, 1}},
        {ComputeInlineStep{2}, AnnotationStep{4, 0, Annotation::Parallel}, AnnotationStep{4, 1, Annotation::Vectorize}},
    };
    requireAllOk(h.check(sm, s), s);
  }
};

QTEST_APPLESS_MAIN(TestSchedules)
#include "test_schedules.moc"
