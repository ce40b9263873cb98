// Step validity checks, serialisation round trips and exact replay.
#include <QtTest>
#include <algorithm>
#include <set>

#include "codegen/cpp_codegen.h"
#include "lower/loop_nest.h"
#include "schedule/sketch.h"
#include "schedule/step_words.h"
#include "search/space_summary.h"
#include "support/line_diff.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

// The error a step list raises, or "" if it applies.
QString errorOf(const te::ComputeDAG& dag, const std::vector<Step>& steps) {
  try {
    replay(dag, steps);
  } catch (const ScheduleError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

std::string codeOf(const te::ComputeDAG& dag, const std::vector<Step>& steps) {
  return codegen::emitCppKernel(lower::lowerState(replay(dag, steps)), "k");
}

}  // namespace

class TestSteps : public QObject {
  Q_OBJECT

 private slots:
  void invalidStepsAreRejectedWithAReason_data() {
    QTest::addColumn<QString>("steps");
    QTest::addColumn<QString>("reason");
    // matmul stages: A(0) B(1) C(2); C iterators i j r0
    QTest::newRow("zero length") << R"([["SP",2,0,[0]]])"
                                 << "length 0 is not positive";
    // Found by fuzz_steps: the product overflowed int64 (undefined behaviour).
    QTest::newRow("split overflow") << R"([["SP",2,0,[2,112,5,9,13,16,18,20,2,6,10,14,17,19,21,3,7,11,15]]])"
                                    << "lengths multiply to more than 2147483647";
    QTest::newRow("stage range") << R"([["SP",7,0,[2]]])"
                                 << "stage index 7 out of range";
    QTest::newRow("iter range") << R"([["SP",2,5,[2]]])"
                                << "iterator index 5 out of range";
    QTest::newRow("placeholder") << R"([["SP",0,0,[2]]])"
                                 << "is a placeholder";
    QTest::newRow("fuse gap") << R"([["FU",2,[0,2]]])"
                              << "consecutive";
    QTest::newRow("fuse kinds") << R"([["FU",2,[1,2]]])"
                                << "cannot fuse spatial and reduce";
    QTest::newRow("reorder") << R"([["RE",2,[0,0,1]]])"
                             << "not a permutation";
    QTest::newRow("parallel reduce") << R"([["AN",2,2,"parallel"]])"
                                     << "cannot mark reduce iterator";
    QTest::newRow("vectorize reduce") << R"([["AN",2,2,"vectorize"]])"
                                      << "cannot mark reduce iterator";
    QTest::newRow("annotate twice") << R"([["AN",2,0,"parallel"],["AN",2,0,"unroll"]])"
                                    << "already";
    QTest::newRow("split annotated") << R"([["AN",2,0,"parallel"],["SP",2,0,[2]]])"
                                     << "is annotated";
    QTest::newRow("inline reduce") << R"([["CI",2]])"
                                   << "has a reduction";
    QTest::newRow("compute_at output") << R"([["CHW",2,"local"],["CA",3,2,0]])"
                                       << "is an output";
    QTest::newRow("compute_at non-consumer") << R"([["CHW",2,"local"],["CHW",2,"local"],["CA",2,4,0]])"
                                             << "outside loop";
    QTest::newRow("cache global") << R"([["CHW",2,"global"]])"
                                  << "unknown scope";
    QTest::newRow("rfactor spatial") << R"([["RF",2,0,0]])"
                                     << "is not a reduce iterator";
    QTest::newRow("cache_read reader") << R"([["CHR",0,"shared",[1]]])"
                                       << "is a placeholder";
    QTest::newRow("unknown kind") << R"([["XX",2]])"
                                  << "unknown step kind";
    QTest::newRow("not json") << R"([["SP",2,)"
                              << "not valid JSON";
    QTest::newRow("bad field") << R"([["SP","two",0,[2]]])"
                               << "must be an integer";
    QTest::newRow("bad annotation") << R"([["AN",2,0,"fast"]])"
                                    << "unknown annotation";
  }

  void invalidStepsAreRejectedWithAReason() {
    QFETCH(QString, steps);
    QFETCH(QString, reason);
    te::ComputeDAG dag = te::makeOperator("matmul", {8, 8, 8});
    QString err;
    try {
      err = errorOf(dag, deserializeSteps(steps.toStdString()));
    } catch (const ScheduleError& e) {
      err = QString::fromStdString(e.what());
    }
    QVERIFY2(err.contains(reason), qPrintable("got: '" + err + "'"));
  }

  void serialisationRoundTripsAndReplaysToTheSameCode() {
    for (const char* op : {"matmul", "conv2d_bias_relu", "softmax", "layernorm"}) {
      std::vector<int64_t> shape = std::string(op) == "conv2d_bias_relu"
                                       ? std::vector<int64_t>{1, 8, 14, 14, 16, 3, 3, 1, 1}
                                       : std::vector<int64_t>{64, 96, 80};
      if (std::string(op) == "softmax" || std::string(op) == "layernorm") shape = {8, 128};
      te::ComputeDAG dag = te::makeOperator(op, shape);
      HardwareParams hw;
      std::vector<Sketch> sketches = generateSketches(dag, hw);
      std::mt19937_64 rng(5);
      for (int i = 0; i < 20; ++i) {
        std::vector<Step> steps;
        try {
          steps = annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng);
        } catch (const ScheduleError&) {
          continue;
        }
        std::string text = serializeSteps(steps);
        std::vector<Step> back = deserializeSteps(text);
        QCOMPARE(serializeSteps(back), text);
        QCOMPARE(codeOf(dag, back), codeOf(dag, steps));
        QCOMPARE(replay(dag, back).toString(), replay(dag, steps).toString());
      }
    }
  }

  void splitsKeepAttachmentsAndNames() {
    te::ComputeDAG dag = te::makeOperator("matmul", {16, 16, 16});
    State s = replay(dag, deserializeSteps(R"([["CHW",2,"local"],["CA",2,3,1],["SP",3,1,[4]]])"));
    // C.local was attached at C.j; j's split moves it to the innermost part.
    QCOMPARE(QString::fromStdString(s.stages[2].attachIter), QString("j.1"));
    QCOMPARE(s.stages[3].iters.size(), size_t(3));
    QCOMPARE(s.stages[3].iters[1].extent, int64_t(4));
    QCOMPARE(s.stages[3].iters[2].extent, int64_t(4));
  }

  void sketchesHaveTheExpectedStructure() {
    HardwareParams hw;
    // matmul: plain SSRSRS tiling plus cache-write sketches fused at two levels.
    std::vector<Sketch> mm = generateSketches(te::makeOperator("matmul", {64, 64, 64}), hw);
    QCOMPARE(mm.size(), size_t(3));
    int tiledOnly = 0, cached = 0;
    for (const Sketch& s : mm) {
      if (s.rules.front() == "add_cache_write") {
        ++cached;
        QCOMPARE(s.state.stages[2].op.name, std::string("C.local"));
        QCOMPARE(s.state.stages[2].location, ComputeLocation::At);
      } else {
        ++tiledOnly;
        // i j split in 4, k in 2: 10 loops, order S S R S R S.
        const Stage& c = s.state.stages[2];
        QCOMPARE(c.iters.size(), size_t(10));
        QString kinds;
        for (const Iterator& it : c.iters)
          kinds += it.kind == IterKind::Reduce ? 'R' : 'S';
        QCOMPARE(kinds, QString("SSSSRSSRSS"));
      }
    }
    QCOMPARE(cached, 2);
    QCOMPARE(tiledOnly, 1);
    // conv2d + bias + relu: the conv fuses into its consumer; where the
    // padding goes (inlined, at the root, inside the conv's tiles) is left
    // to the annotation, which tries all three.
    std::vector<Sketch> cv = generateSketches(te::makeOperator("conv2d_bias_relu", {1, 8, 14, 14, 16, 3, 3, 1, 1}), hw);
    std::set<ComputeLocation> padPlaces;
    std::mt19937_64 rng(1);
    for (const Sketch& s : cv) {
      QCOMPARE(s.state.stage("pad").location, ComputeLocation::Root);
      QCOMPARE(s.state.stage("conv").location, ComputeLocation::At);
      for (int i = 0; i < 30; ++i) {
        State st = s.initial;
        for (const Step& x : annotateSketch(s, hw, rng))
          applyStep(st, x);
        padPlaces.insert(st.stage("pad").location);
      }
    }
    QCOMPARE(padPlaces.size(), size_t(3));
    // softmax: no data reuse, so no tiling.
    for (const Sketch& s : generateSketches(te::makeOperator("softmax", {32, 128}), hw))
      QVERIFY(s.tiled.empty());
    // A long reduction over a tiny output gets rfactor sketches.
    bool rf = false;
    for (const Sketch& s : generateSketches(te::makeOperator("softmax", {1, 4096}), hw))
      rf |= std::find(s.rules.begin(), s.rules.end(), "add_rfactor") != s.rules.end();
    QVERIFY(rf);
  }

  void moreSketchStructures() {
    HardwareParams hw;
    // A plain conv2d has no consumer: cache-write sketches fuse its copy-out,
    // and the uncached one tiles it directly (SSRSRS over n,k,h,w | c,r,s).
    std::vector<Sketch> cv = generateSketches(te::makeOperator("conv2d", {1, 8, 14, 14, 16, 3, 3, 1, 1}), hw);
    QCOMPARE(cv.size(), size_t(3));
    for (const Sketch& s : cv) {
      if (s.rules.front() == "add_cache_write") {
        QCOMPARE(s.state.stage("conv.local").location, ComputeLocation::At);
      } else {
        QString kinds;
        for (const Iterator& it : s.state.stage("conv").iters)
          kinds += it.kind == IterKind::Reduce ? 'R' : 'S';
        QCOMPARE(kinds, QString("SSSSSSSSRRRSSSSRRRSSSS"));
      }
    }
    // GPU: SSSRRSRS tiling in a local cache, both inputs staged in shared memory.
    hw.target = tessel::target::Target::cuda();
    std::vector<Sketch> g = generateSketches(te::makeOperator("matmul", {64, 64, 64}), hw);
    QCOMPARE(g.size(), size_t(1));
    const State& st = g[0].state;
    QCOMPARE(st.stage("A.shared").scope, Scope::Shared);
    QCOMPARE(st.stage("B.shared").attachStage, std::string("C.local"));
    QString kinds;
    for (const Iterator& it : st.stage("C.local").iters)
      kinds += it.kind == IterKind::Reduce ? 'R' : 'S';
    QCOMPARE(kinds, QString("SSSSSSRRSSRSS"));
    QCOMPARE(g[0].threadGroups.at("C"), 2);
    // GPU softmax: the reductions become cross-thread reductions.
    std::vector<Sketch> sm = generateSketches(te::makeOperator("softmax", {4, 256}), hw);
    QVERIFY(sm[0].crossThread.count("T_max") && sm[0].crossThread.count("T_sum"));
  }

  // New rules join a kind's registry without touching the other kind's.
  void rulesCanBeRegistered() {
    struct TagRule : SketchRule {
      std::string tag;
      explicit TagRule(std::string t) : tag(std::move(t)) {}
      std::string name() const override { return tag; }
      Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
        return s.state.stages[size_t(stage)].op.hasReduce() ? Condition::Apply : Condition::Pass;
      }
      std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
        Sketch n = s;
        n.rules.push_back(tag);
        return {{n, stage - 1}};
      }
    };
    using Kind = tessel::target::Target::Kind;
    const size_t cudaRules = sketchRules(Kind::Cuda).size(), cpuRules = sketchRules(Kind::Cpu).size();
    const std::string firstCuda = sketchRules(Kind::Cuda).front()->name();
    registerSketchRule(Kind::Cuda, std::make_shared<TagRule>("second"), firstCuda);
    registerSketchRule(Kind::Cuda, std::make_shared<TagRule>("first"), "second");
    QCOMPARE(sketchRules(Kind::Cuda).size(), cudaRules + 2);
    QCOMPARE(sketchRules(Kind::Cuda)[0]->name(), std::string("first"));
    QCOMPARE(sketchRules(Kind::Cuda)[1]->name(), std::string("second"));
    QCOMPARE(sketchRules(Kind::Cpu).size(), cpuRules);  // untouched
    HardwareParams hw;
    hw.target = tessel::target::Target::cuda();
    // Both rules apply to the matmul stage (Apply, not skip-rest): a sketch
    // starts with each, and the kind's own rules still make theirs.
    auto startingWith = [](const std::vector<Sketch>& sketches, const std::string& rule) {
      return std::count_if(sketches.begin(), sketches.end(),
                           [&](const Sketch& k) { return !k.rules.empty() && k.rules.front() == rule; });
    };
    std::vector<Sketch> sk = generateSketches(te::makeOperator("matmul", {8, 8, 8}), hw);
    QVERIFY(startingWith(sk, "first") >= 1 && startingWith(sk, "second") >= 1);
    QVERIFY(startingWith(sk, "first") + startingWith(sk, "second") < long(sk.size()));
    // A rule taken out and put back (comparisons with and without it).
    std::shared_ptr<SketchRule> removed = removeSketchRule(Kind::Cuda, "first");
    QVERIFY(removed);
    QCOMPARE(sketchRules(Kind::Cuda).size(), cudaRules + 1);
    QVERIFY(!removeSketchRule(Kind::Cuda, "first"));
    registerSketchRule(Kind::Cuda, removed, "second");
    QCOMPARE(sketchRules(Kind::Cuda)[0]->name(), std::string("first"));
    // Both out again: the CUDA sketches are as they were.
    QVERIFY(removeSketchRule(Kind::Cuda, "first") && removeSketchRule(Kind::Cuda, "second"));
    QCOMPARE(sketchRules(Kind::Cuda).size(), cudaRules);
    QCOMPARE(startingWith(generateSketches(te::makeOperator("matmul", {8, 8, 8}), hw), "first"), 0);
  }

  void invalidAnnotationsAreRejectedWithAReason() {
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 64, 64});
    HardwareParams hw;
    hw.target = tessel::target::Target::cuda();
    auto reason = [&](const char* steps) {
      try {
        validateProgram(replay(dag, deserializeSteps(steps)), hw);
      } catch (const ScheduleError& e) {
        return QString::fromStdString(e.what());
      }
      return QString();
    };
    QVERIFY(reason(R"([["FU",2,[0,1]],["AN",2,0,"threadIdx.x"]])").contains("4096 threads per block (limit 1024)"));
    QVERIFY(reason(R"([["SP",2,0,[4]],["AN",2,0,"vthread"]])").contains("16 virtual threads (limit 8)"));
    QVERIFY(reason(R"([["FU",2,[0,1]],["SP",2,0,[128]],["AN",2,1,"vectorize"]])").contains("lanes"));
    QVERIFY(reason(R"([["SP",2,0,[16]],["AN",2,1,"threadIdx.x"]])").isEmpty());
  }

  void flopsAreCounted() {
    QCOMPARE(te::makeOperator("matmul", {256, 128, 64}).flops(), 2.0 * 256 * 128 * 64);
    // conv: 2 * N*K*OH*OW * C*R*S (the padding stage is free).
    QCOMPARE(te::makeOperator("conv2d", {1, 64, 56, 56, 64, 3, 3, 1, 1}).flops(), 2.0 * 64 * 56 * 56 * 64 * 9);
    // dense with bias: the bias adds one per output.
    QCOMPARE(te::makeOperator("dense", {4, 8, 16}).flops(), 2.0 * 4 * 8 * 16 + 4 * 8);
  }

  void badOperatorsAreNamed() {
    auto message = [](const std::string& op, std::vector<int64_t> shape) {
      try {
        te::makeOperator(op, shape);
      } catch (const std::invalid_argument& e) {
        return QString::fromStdString(e.what());
      }
      return QString();
    };
    QVERIFY(message("matmull", {1, 2, 3}).contains("unknown op 'matmull'"));
    QVERIFY(message("matmul", {1, 2}).contains("needs 3 values"));
    QVERIFY(message("conv2d", {1, 3, 8, 8, 4, 9, 9, 1, 0}).contains("does not fit"));
    QVERIFY(message("conv2d", {1, 3, 8, 8, 4, 3, 3, 1, 0, 1, 2}).contains("groups"));
  }

  // The inspector's words name each step by the loops it touches, as they
  // are when it applies; the loop nest follows the replayed state.
  void stepsAreDescribedInWords() {
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 48, 32});
    // C iterators i(64) j(48) r0(32): split i, tile j, reorder, parallel, vectorize, unroll pragma.
    const std::vector<Step> steps =
        deserializeSteps(R"([["SP",2,0,[8,4]],["SP",2,3,[16]],["RE",2,[0,3,1,2,4,5]],["FU",2,[0,1]],)"
                         R"(["AN",2,0,"parallel"],["AN",2,3,"vectorize"],["PR",2,0,64]])");
    const std::vector<std::string> words = stepsInWords(dag, steps);
    QCOMPARE(int(words.size()), int(steps.size()));
    QCOMPARE(QString::fromStdString(words[0]), QString("split C.i (extent 64) into 2 x 8 x 4"));
    QCOMPARE(QString::fromStdString(words[1]), QString("split C.j (extent 48) into 3 x 16"));
    QVERIFY2(QString::fromStdString(words[2]).startsWith("order C's loops as i.0, j.0, i.1"), words[2].c_str());
    QCOMPARE(QString::fromStdString(words[3]), QString("fuse C.i.0, C.j.0 into one loop (extent 6)"));
    QVERIFY2(QString::fromStdString(words[4]).startsWith("parallelize C.") &&
                 words[4].find("(extent 6)") != std::string::npos,
             words[4].c_str());
    QVERIFY2(QString::fromStdString(words[5]).startsWith("vectorize C."), words[5].c_str());
    QVERIFY2(words[6].find("up to 64 steps") != std::string::npos, words[6].c_str());
    // A step that does not apply is named by its place.
    try {
      stepsInWords(dag, deserializeSteps(R"([["SP",2,0,[8]],["SP",2,9,[2]]])"));
      QFAIL("a step out of range was described");
    } catch (const ScheduleError& e) {
      QVERIFY2(QString(e.what()).startsWith("step 2:"), e.what());
    }
    // The loop nest of the replayed state: one line per loop with its extent.
    const std::string nest = search::loopNestText(replay(dag, steps));
    QVERIFY2(nest.find("for i.0@j.0 < 6  parallel") != std::string::npos, nest.c_str());
    QVERIFY2(nest.find("vectorize") != std::string::npos, nest.c_str());
  }

  void linesDiffAsDiffDoes() {
    using support::DiffLine;
    const std::vector<std::string> a{"split", "fuse", "parallel", "vectorize"};
    const std::vector<std::string> b{"split", "reorder", "fuse", "unroll", "vectorize"};
    const std::vector<DiffLine> d = support::diffLines(a, b);
    QString shown;
    for (const DiffLine& l : d)
      shown += QChar(l.kind) + QString::fromStdString(l.text) + ";";
    QCOMPARE(shown, QString(" split;+reorder; fuse;-parallel;+unroll; vectorize;"));
    QCOMPARE(int(support::changedLines(d)), 3);
    QCOMPARE(int(support::changedLines(support::diffLines(a, a))), 0);
    QCOMPARE(int(support::diffLines({}, b).size()), int(b.size()));
    QCOMPARE(int(support::changedLines(support::diffLines(a, {}))), int(a.size()));
  }
};

QTEST_APPLESS_MAIN(TestSteps)
#include "test_steps.moc"
