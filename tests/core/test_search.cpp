// Mutation, crossover and the model-guided searches: every program they
// produce is valid and numerically right, and they never propose a program
// twice.
#include <QtTest>

#include "kernel_harness.h"
#include "search/mutation.h"
#include "search/search_policy.h"
#include "support/hash.h"
#include "task/search_task.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

class TestSearch : public QObject {
  Q_OBJECT

 private slots:
  // Workload keys are stored in users' databases: the hash under them never
  // changes. FNV-1a's published test vector, and a key recorded in
  // docs/results.md by an early version.
  void workloadKeysStayStable() {
    static_assert(support::fnv1a("") == support::kFnvOffsetBasis);
    static_assert(support::fnv1a("a") == 0xaf63dc4c8601ec8cull);
    QCOMPARE(task::makeOperatorTask("matmul", {512, 512, 512}, tessel::target::Target::host()).key,
             std::string("matmul_512_512_512_132fa37f"));
  }

  void mutatedProgramsAreRight_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QString>("shape");
    QTest::newRow("matmul") << "matmul"
                            << "48,36,40";
    QTest::newRow("conv2d_bias_relu") << "conv2d_bias_relu"
                                      << "1,8,10,10,8,3,3,1,1";
    QTest::newRow("softmax") << "softmax"
                             << "4,96";
    QTest::newRow("dense") << "dense"
                           << "8,24,40";
  }

  void mutatedProgramsAreRight() {
    QFETCH(QString, op);
    QFETCH(QString, shape);
    std::vector<int64_t> dims;
    for (const QString& s : shape.split(','))
      dims.push_back(s.toLongLong());
    te::ComputeDAG dag = te::makeOperator(op.toStdString(), dims);
    HardwareParams hw;
    std::vector<Sketch> sketches = generateSketches(dag, hw);
    std::vector<std::vector<Step>> programs;
    std::set<std::string> changed;
    for (uint64_t seed = 0; programs.size() < 16 && seed < 200; ++seed) {
      std::mt19937_64 rng(seed);
      ProgramDecisions d;
      d.sketch = seed % sketches.size();
      std::vector<Step> base;
      try {
        base = annotateSketch(sketches[d.sketch], hw, rng, &d);
      } catch (const ScheduleError&) {
        continue;
      }
      // Replaying the recorded decisions gives the same program.
      ProgramDecisions again = d;
      QCOMPARE(serializeSteps(materialize(sketches[d.sketch], again, hw)), serializeSteps(base));
      ProgramDecisions m = d;
      for (int k = 0; k < 3; ++k)
        search::mutateDecisions(m, rng);
      if (seed % 3 == 0) m = search::crossover(m, d, rng);
      try {
        std::vector<Step> mutated = materialize(sketches[m.sketch], m, hw);
        if (serializeSteps(mutated) != serializeSteps(base)) changed.insert(serializeSteps(mutated));
        programs.push_back(mutated);
      } catch (const ScheduleError&) {
      }
    }
    QVERIFY(programs.size() >= 12);
    QVERIFY(changed.size() >= 6);  // mutation really changes programs
    testing::KernelHarness h;
    auto res = h.check(dag, programs);
    for (size_t i = 0; i < res.size(); ++i)
      QVERIFY2(res[i].ok, qPrintable(QString::fromStdString(serializeSteps(programs[i]) + "\n" + res[i].message)));
  }

  void tileMutationKeepsTheProduct() {
    std::mt19937_64 rng(3);
    ProgramDecisions d;
    Choice c;
    c.tile = true;
    c.extent = 96;
    c.maxInnermost = 16;
    c.value = {2, 3, 4};
    d.choices["tile:0"] = c;
    for (int i = 0; i < 200; ++i) {
      QVERIFY(search::mutateDecisions(d, rng));
      const auto& v = d.choices["tile:0"].value;
      QCOMPARE(v.size(), size_t(3));
      QCOMPARE(96 % (v[0] * v[1] * v[2]), int64_t(0));
      QVERIFY(v[2] <= 16);
    }
  }

  void guidedSearchesNeverRepeatAProgram() {
    task::SearchTask task = task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    HardwareParams hw;
    for (const char* name : {"evolutionary", "anneal"}) {
      search::EvolutionParams p;
      p.population = 128;
      auto policy = search::makeSearchPolicy(name, task, hw, 7, "random", p);
      std::set<std::string> seen;
      for (int round = 0; round < 3; ++round) {
        std::vector<search::Program> batch = policy->nextBatch(16);
        QCOMPARE(batch.size(), size_t(16));
        std::vector<measure::MeasureResult> results(batch.size());
        for (size_t i = 0; i < batch.size(); ++i) {
          QVERIFY2(seen.insert(serializeSteps(batch[i])).second, name);
          results[i].costs = {1e-3 * double(i + 1)};  // any valid costs
        }
        policy->update(batch, results);
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestSearch)
#include "test_search.moc"
