// The cost models on real recorded programs: 300 random schedules of a
// 128^3 matmul measured on the build machine (tests/data, made with
// `build/bin/record_programs matmul 128,128,128 300 1`). Trained on the
// first 200, xgb must rank the other 100 better than chance and better than
// the random model.
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cost/cost_model_registry.h"
#include "cost/features.h"
#include "cost_test_support.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using cost_test::pairwiseAccuracy;
using cost_test::predictRows;
using cost_test::updateRows;

namespace {

struct Recorded {
  std::vector<cost::ProgramFeatures> features;
  std::vector<double> costs;
};

Recorded load(const std::string& path, const te::ComputeDAG& dag) {
  const cost_test::RecordedPrograms p = cost_test::loadRecordedPrograms(path);
  Recorded r{{}, p.costs};
  for (const auto& steps : p.programs)
    r.features.push_back(cost::extractProgramFeatures(dag, steps));
  return r;
}

}  // namespace

class TestRecorded : public QObject {
  Q_OBJECT

 private slots:
  void xgbRanksRecordedProgramsBetterThanRandom() {
#ifndef TESSEL_HAVE_XGBOOST
    TESSEL_SKIP("xgboost", "this build has no XGBoost (libxgboost-dev not found at configure time)");
#else
    te::ComputeDAG dag = te::makeOperator("matmul", {128, 128, 128});
    Recorded r = load(TESSEL_DATA_DIR "/matmul_128_random300.jsonl", dag);
    QVERIFY(r.costs.size() >= 250);
    size_t train = 200;
    std::vector<cost::ProgramFeatures> trainF(r.features.begin(), r.features.begin() + long(train)),
        testF(r.features.begin() + long(train), r.features.end());
    std::vector<double> trainC(r.costs.begin(), r.costs.begin() + long(train)),
        testC(r.costs.begin() + long(train), r.costs.end());
    double randomAcc = 0;
    {
      auto m = cost::makeCostModel("random", 1);
      updateRows(*m, trainF, trainC);
      randomAcc = pairwiseAccuracy(predictRows(*m, testF), testC);
    }
    for (const char* loss : {"throughput", "rank"}) {
      auto m = cost::makeXgbModel(loss, 1);
      updateRows(*m, trainF, trainC);
      double acc = pairwiseAccuracy(predictRows(*m, testF), testC);
      qInfo("xgb (%s) pairwise accuracy on held-out recorded programs: %.3f (random model %.3f)", loss, acc, randomAcc);
      QVERIFY2(acc > 0.6, loss);
      QVERIFY(acc > randomAcc + 0.1);
    }
#endif
  }
};

QTEST_APPLESS_MAIN(TestRecorded)
#include "test_recorded.moc"
