// The search-space summary the studio shows: the size is the product of the
// domains, tile domains match an independent count, the parameters are the
// decisions the annotation really takes, and the source of every sample
// compiles and computes what the naive program computes.
#include <dlfcn.h>

#include <QtTest>
#include <cmath>
#include <random>
#include <set>

#include "codegen/cpp_builder.h"
#include "kernel_harness.h"
#include "lower/loop_nest.h"
#include "measure/program_measurer.h"
#include "schedule/steps.h"
#include "search/space_summary.h"
#include "support/subprocess.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

// Brute force: n-tuples of lengths in [1, extent] whose product divides the
// extent, the last at most maxInnermost.
double bruteForceTiles(int64_t extent, size_t n, int64_t maxInnermost) {
  std::vector<int64_t> t(n, 1);
  double count = 0;
  while (true) {
    int64_t p = 1;
    for (int64_t x : t)
      p *= x;
    if (extent % p == 0 && t.back() <= maxInnermost) ++count;
    size_t k = 0;
    while (k < n && ++t[k] > extent)
      t[k++] = 1;
    if (k == n) return count;
  }
}

std::vector<int64_t> parseShape(const QString& s) {
  std::vector<int64_t> dims;
  for (const QString& x : s.split(','))
    dims.push_back(x.toLongLong());
  return dims;
}

}  // namespace

class TestSpaceSummary : public QObject {
  Q_OBJECT

 private slots:
  void tileCountsMatchBruteForce() {
    for (int64_t extent : {1, 2, 7, 12, 56, 64, 96})
      for (size_t n : {1u, 2u, 3u})
        for (int64_t maxInner : {int64_t(4), int64_t(64)})
          QCOMPARE(search::countTileLengths(extent, n, maxInner), bruteForceTiles(extent, n, maxInner));
    // 64 = 2^6 into 4 ordered factors: C(6 + 3, 3) = 84.
    QCOMPARE(search::countTileLengths(64, 3, 64), 84.0);
  }

  void matmulSpace() {
    task::SearchTask task = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    HardwareParams hw = schedule::hardwareParams(tessel::target::Target::host());
    search::SpaceSummary s = search::summarizeSpace(task, hw, 4, 3);
    QVERIFY(!s.sketches.empty());
    std::vector<Sketch> sketches = generateSketches(task.dag, hw);
    QCOMPARE(s.sketches.size(), sketches.size());
    double total = 0;
    bool sawTile64 = false;
    for (const search::SketchSummary& sk : s.sketches) {
      double product = 1;
      for (const search::ParameterSummary& p : sk.parameters) {
        QVERIFY2(p.choices >= 1, p.key.c_str());
        QVERIFY(!p.domain.empty());
        product *= p.choices;
      }
      QCOMPARE(sk.size, product);
      total += sk.size;
      // The parameters are the decisions an annotation takes.
      std::mt19937_64 rng(11);
      ProgramDecisions d;
      annotateSketch(sketches[sk.index], hw, rng, &d);
      for (const auto& [key, c] : d.choices) {
        auto it = std::find_if(sk.parameters.begin(), sk.parameters.end(),
                               [&, k = key](const search::ParameterSummary& p) { return p.key == k; });
        QVERIFY2(it != sk.parameters.end(), key.c_str());
        if (c.tile) {
          QCOMPARE(it->choices, bruteForceTiles(c.extent, c.value.size(), c.maxInnermost));
          if (c.extent == 64 && c.value.size() == 3) {
            sawTile64 = true;
            QCOMPARE(it->choices, 84.0);
          }
        } else {
          QVERIFY(it->choices >= double(c.hi - c.lo + 1));
        }
      }
      QVERIFY2(sk.loopNest.find("tile:") != std::string::npos, sk.loopNest.c_str());
      QVERIFY(sk.loopNest.find("for ") != std::string::npos);
      QVERIFY(!sk.rules.empty());
    }
    QVERIFY(sawTile64);
    QCOMPARE(s.size, total);
    QVERIFY(s.size > 1e6);

    QCOMPARE(int(s.samples.size()), 4);
    QCOMPARE(s.sampleDecisions.size(), s.samples.size());
    for (const std::string& json : s.sampleDecisions) {
      ProgramDecisions d = deserializeDecisions(json);
      QVERIFY(d.sketch < sketches.size());
      QVERIFY(!d.choices.empty());
      // The source is that of the program the decisions give.
      std::string src = search::programSource(task, json, hw);
      ProgramDecisions again = d;
      std::string kernel =
          measure::programSource(task.dag, materialize(sketches[d.sketch], again, hw), search::kernelSymbol(task));
      QVERIFY(src.find(kernel) != std::string::npos);
    }
    QVERIFY(s.samples[0].rfind("sketch ", 0) == 0);
  }

  // Every sample's source, as the code view shows it, builds and agrees
  // with the naive program.
  void samplesCompileAndAreRight_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::newRow("matmul") << "matmul"
                            << "32,24,40";
    QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                      << "1,8,10,10,8,3,3,1,1";
    QTest::newRow("softmax") << "softmax"
                             << "4,96";
    QTest::newRow("dense") << "dense"
                           << "2,16,256";
  }

  void samplesCompileAndAreRight() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    task::SearchTask task = task::makeOperatorTask(op.toStdString(), parseShape(shape), tessel::target::Target::host());
    search::SpaceSummary s = search::summarizeSpace(task, 4, 5);
    QVERIFY(!s.sampleDecisions.empty());
    std::string symbol = search::kernelSymbol(task);
    std::vector<codegen::BuildCandidate> cands = {{search::naiveProgramSource(task), symbol}};
    for (const std::string& json : s.sampleDecisions)
      cands.push_back({search::programSource(task, json), symbol});
    for (const auto& c : cands) {
      QVERIFY(c.code.find(symbol) != std::string::npos);
      QVERIFY(c.code.find("for (") != std::string::npos);
    }
    // The sources above are those of these programs (see the test before):
    // build and check them against the naive program.
    HardwareParams hw = schedule::hardwareParams(tessel::target::Target::host());
    std::vector<Sketch> sketches = generateSketches(task.dag, hw);
    std::vector<std::vector<Step>> programs;
    for (const std::string& json : s.sampleDecisions) {
      ProgramDecisions d = deserializeDecisions(json);
      programs.push_back(materialize(sketches[d.sketch], d, hw));
    }
    testing::KernelHarness harness;
    std::vector<testing::CheckOutcome> outcomes = harness.check(task.dag, programs);
    for (size_t i = 0; i < outcomes.size(); ++i)
      QVERIFY2(outcomes[i].ok, (s.samples[i] + ": " + outcomes[i].message).c_str());
  }

  // A stored program (its serialised steps) gives the same kernel as the
  // decisions it came from; garbage steps are an error, not a crash.
  void storedProgramsReplayTheirSteps() {
    task::SearchTask task = task::makeOperatorTask("matmul", {32, 24, 40}, tessel::target::Target::host());
    HardwareParams hw = schedule::hardwareParams(tessel::target::Target::host());
    std::vector<Sketch> sketches = generateSketches(task.dag, hw);
    search::SpaceSummary s = search::summarizeSpace(task, hw, 3, 7);
    QVERIFY(!s.sampleDecisions.empty());
    for (const std::string& json : s.sampleDecisions) {
      ProgramDecisions d = deserializeDecisions(json);
      const std::string steps = serializeSteps(materialize(sketches[d.sketch], d, hw));
      const std::string stored = search::storedProgramSource(task, steps);
      const std::string fromDecisions = search::programSource(task, json, hw);
      // Equal but for the first line, which says where the program came from.
      QCOMPARE(stored.substr(stored.find('\n')), fromDecisions.substr(fromDecisions.find('\n')));
    }
    QVERIFY_THROWS_EXCEPTION(std::exception, search::storedProgramSource(task, "[[\"XX\"]]"));
    QVERIFY_THROWS_EXCEPTION(std::exception, search::storedProgramSource(task, "not json"));
  }

  // A GPU task's programs show as CUDA C (what the studio's code view and
  // `db show --code` print): kernels with their launch dimensions and the
  // host function, from stored steps and from decisions alike.
  void gpuProgramsShowAsCuda() {
    task::SearchTask task = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::cuda("sm_80"));
    HardwareParams hw = schedule::hardwareParams(task.target);
    std::vector<Sketch> sketches = generateSketches(task.dag, hw);
    search::SpaceSummary s = search::summarizeSpace(task, hw, 2, 3);
    QVERIFY(!s.sampleDecisions.empty());
    for (const std::string& json : s.sampleDecisions) {
      ProgramDecisions d = deserializeDecisions(json);
      const std::string steps = serializeSteps(materialize(sketches[d.sketch], d, hw));
      const std::string stored = search::storedProgramSource(task, steps);
      QVERIFY2(stored.find("__global__ void") != std::string::npos, stored.c_str());
      QVERIFY2(stored.find("// grid (") != std::string::npos, stored.c_str());
      QVERIFY2(stored.find("threadIdx.") != std::string::npos, stored.c_str());
      QVERIFY2(stored.find(search::kernelSymbol(task)) != std::string::npos, stored.c_str());
      const std::string fromDecisions = search::programSource(task, json, hw);
      QCOMPARE(stored.substr(stored.find('\n')), fromDecisions.substr(fromDecisions.find('\n')));
    }
  }

  void loopNestNamesFusedTiles() {
    task::SearchTask task =
        task::makeOperatorTask("conv2d_bias_relu", {1, 8, 10, 10, 8, 3, 3, 1, 1}, tessel::target::Target::host());
    search::SpaceSummary s = search::summarizeSpace(task, 1, 1);
    bool follows = false;
    for (const search::SketchSummary& sk : s.sketches)
      follows |= sk.loopNest.find("prod(tile:") != std::string::npos && sk.loopNest.find("..])") != std::string::npos;
    QVERIFY(follows);  // the fused consumer follows its producer's tiles
  }

  void badDecisionsThrow() {
    task::SearchTask task = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    try {
      search::programSource(task, "{not json");
      QFAIL("garbage decisions accepted");
    } catch (const std::exception& e) {
      QVERIFY(std::string(e.what()).find("malformed decisions") != std::string::npos);
    }
    try {
      search::programSource(task, R"({"sketch": 99, "choices": {}})");
      QFAIL("a sketch out of range accepted");
    } catch (const std::exception& e) {
      QVERIFY2(std::string(e.what()).find("sketch 99") != std::string::npos, e.what());
    }
    std::string naive = search::naiveProgramSource(task);
    QVERIFY(naive.find(search::kernelSymbol(task)) != std::string::npos);
    QVERIFY(naive.find("for (") != std::string::npos);
  }
};

QTEST_GUILESS_MAIN(TestSpaceSummary)
#include "test_space_summary.moc"
