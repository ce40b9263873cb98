// Cost models: the factory, the random baseline and XGBoost (both losses) on
// synthetic programs whose true cost is a known function of their features.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QtTest>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "cost/cost_model_eval.h"
#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "cost/ensemble_model.h"
#include "cost_test_support.h"
#include "tessel_test.h"

using namespace tessel::cost;
using tessel::cost_test::pairwiseAccuracy;
using tessel::cost_test::predictRows;
using tessel::cost_test::updateRows;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Dataset {
  std::vector<ProgramFeatures> programs;
  std::vector<double> costs;
};

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  double uniform() { return static_cast<double>(g_() >> 11) * 0x1.0p-53; }
  size_t below(size_t n) { return static_cast<size_t>(g_() % n); }

 private:
  std::mt19937_64 g_;
};

// The true cost of one store: monotone in the first four features, the others
// are noise.
double rowCost(const std::vector<float>& x) {
  return std::exp(2.0 * x[0]) * (1.0 + x[1]) / (0.5 + x[2]) + 0.5 * x[3];
}

// Programs of `minRows`..`maxRows` rows of `width` features in [0, 1); the
// cost is the sum of the rows' costs with +-2.5 % noise. A program whose
// first row has x[4] > failAbove fails (cost = inf).
// The last feature of every row tells the program's number of rows, as real
// features tell the loop nest of a store: Ansor's pack-sum (a program scores
// the sum of its rows) cannot learn "more stores = slower" from rows that
// look the same whatever program they belong to.
Dataset makeData(size_t n, uint64_t seed, size_t width = 16, size_t minRows = 1, size_t maxRows = 3,
                 double failAbove = 2.0) {
  Rng rng(seed);
  Dataset d;
  for (size_t i = 0; i < n; ++i) {
    ProgramFeatures p(minRows + rng.below(maxRows - minRows + 1), std::vector<float>(width));
    double cost = 0;
    for (auto& row : p) {
      for (auto& v : row)
        v = static_cast<float>(rng.uniform());
      row.back() = static_cast<float>(p.size()) / 4.0f;
      cost += rowCost(row);
    }
    cost *= 1.0 + 0.05 * (rng.uniform() - 0.5);
    if (p[0][4] > failAbove) cost = kInf;
    d.programs.push_back(std::move(p));
    d.costs.push_back(cost);
  }
  return d;
}

bool haveXgb() {
#ifdef TESSEL_HAVE_XGBOOST
  return true;
#else
  return false;
#endif
}

// The message of the exception `f` throws as E, or "" (and a failure) if none.
template <typename E, typename F>
QString messageOf(F f) {
  try {
    f();
  } catch (const E& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestCostModels : public QObject {
  Q_OBJECT

 private slots:
  void factoryBuildsModelsByName() {
    QCOMPARE(makeCostModel("random", 1)->name(), std::string("random"));
    if (haveXgb()) {
      QCOMPARE(makeCostModel("xgb", 1)->name(), std::string("xgb"));
    } else {
      const QString msg = messageOf<std::runtime_error>([] { makeCostModel("xgb", 1); });
      QVERIFY2(msg.contains("XGBoost"), qPrintable(msg));
    }
  }

  void factoryRejectsUnknownNames() {
    const QString msg = messageOf<std::invalid_argument>([] { makeCostModel("nope", 1); });
    QVERIFY2(msg.contains("'nope'"), qPrintable(msg));
    QVERIFY2(msg.contains("random") && msg.contains("xgb"), qPrintable(msg));
  }

  void randomModelIsSeededAndUninformed() {
    const Dataset test = makeData(300, 7);
    auto a = makeRandomModel(42), b = makeRandomModel(42), c = makeRandomModel(43);
    const auto sa = predictRows(*a, test.programs);
    QCOMPARE(sa, predictRows(*b, test.programs));
    QVERIFY(sa != predictRows(*c, test.programs));
    for (double s : sa)
      QVERIFY(s >= 0.0 && s < 1.0);
    const double acc = pairwiseAccuracy(sa, test.costs);
    qInfo("random: pairwise accuracy %.3f", acc);
    QVERIFY2(acc > 0.4 && acc < 0.6, qPrintable(QString::number(acc)));
    QCOMPARE(a->trainedOn(), size_t(0));
    updateRows(*a, test.programs, test.costs);
    QCOMPARE(a->trainedOn(), size_t(300));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, updateRows(*a, test.programs, {1.0}));
  }

  void emptyProgramsScoreLowest_data() { lossColumns(true); }
  void emptyProgramsScoreLowest() {
    QFETCH(QString, model);
    if (model != "random" && !haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    auto m = create(model, 3);
    const Dataset train = makeData(100, 11);
    std::vector<ProgramFeatures> withEmpty = train.programs;
    withEmpty.push_back({});
    std::vector<double> costs = train.costs;
    costs.push_back(kInf);
    updateRows(*m, withEmpty, costs);  // an empty program in training is harmless
    const auto scores = predictRows(*m, withEmpty);
    QCOMPARE(scores.size(), withEmpty.size());
    for (size_t i = 0; i + 1 < scores.size(); ++i) {
      QVERIFY(std::isfinite(scores[i]));
      QVERIFY(scores.back() < scores[i] - 1e6);
    }
  }

  // An ensemble's score is the mean of its members' scores standardised per
  // call; invalid programs stay lowest; its bytes load back as an ensemble.
  void ensembleAveragesStandardisedScores() {
    const Dataset test = makeData(50, 3);
    std::vector<ProgramFeatureSet> sets = fromStoreRows(test.programs);
    sets[7].valid = false;
    auto ensemble = makeEnsemble("random", 3, 5);
    QCOMPARE(ensemble->name(), std::string("random"));
    const std::vector<double> got = ensemble->predictFeatures("task", sets);
    std::vector<double> want(sets.size(), 0.0);
    for (uint64_t seed : {5, 6, 7}) {
      const std::vector<double> s = makeRandomModel(seed)->predictFeatures("task", sets);
      double mean = 0, sq = 0;
      for (size_t i = 0; i < s.size(); ++i)
        if (i != 7) mean += s[i] / 49.0;
      for (size_t i = 0; i < s.size(); ++i)
        if (i != 7) sq += (s[i] - mean) * (s[i] - mean) / 49.0;
      for (size_t i = 0; i < s.size(); ++i)
        want[i] += (s[i] - mean) / std::sqrt(sq) / 3.0;
    }
    for (size_t i = 0; i < sets.size(); ++i)
      if (i != 7) QVERIFY2(std::fabs(got[i] - want[i]) < 1e-12, qPrintable(QString::number(i)));
    QCOMPARE(got[7], kInvalidScore);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeEnsemble("random", 1, 5));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeEnsemble("no-such-model", 3, 5));
    QCOMPARE(ensembleMembers("tessel-ensemble 3\n"), 3);
    QCOMPARE(ensembleMembers("tessel-cost-model 3 mlp\n"), 0);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "the save and load of trained members need XGBoost, absent from this build");
    const Dataset train = makeData(200, 1);
    auto trained = makeEnsemble("xgb", 2, 5);
    updateRows(*trained, train.programs, train.costs);
    const QString file = QDir::temp().filePath("tessel-ensemble-test.tcm");
    saveCostModelFile(file.toStdString(), *trained);
    auto loaded = loadCostModelFile(file.toStdString());
    QFile::remove(file);
    const std::vector<double> before = trained->predictFeatures("task", sets);
    const std::vector<double> after = loaded->predictFeatures("task", sets);
    for (size_t i = 0; i < sets.size(); ++i)
      QCOMPARE(after[i], before[i]);
    QVERIFY(pairwiseAccuracy(predictRows(*loaded, test.programs), test.costs) > 0.75);
  }

  void xgbRanksHeldOutPrograms_data() { lossColumns(false); }
  void xgbRanksHeldOutPrograms() {
    QFETCH(QString, model);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    const Dataset train = makeData(200, 1), test = makeData(100, 2);
    auto m = create(model, 5);
    updateRows(*m, train.programs, train.costs);
    const double acc = pairwiseAccuracy(predictRows(*m, test.programs), test.costs);
    const double rnd = pairwiseAccuracy(predictRows(*makeRandomModel(5), test.programs), test.costs);
    qInfo("%s: pairwise accuracy %.3f on 100 held-out programs (random %.3f)", qPrintable(model), acc, rnd);
    QVERIFY2(acc >= 0.8, qPrintable(QString::number(acc)));
    QVERIFY(acc > rnd + 0.2);
  }

  void xgbLearnsAcrossUpdates_data() { lossColumns(false); }
  void xgbLearnsAcrossUpdates() {
    QFETCH(QString, model);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    // Two tasks' worth of records, each normalised on its own; the second
    // update retrains on both.
    const Dataset a = makeData(100, 21), b = makeData(100, 22), test = makeData(100, 23);
    auto m = create(model, 5);
    updateRows(*m, a.programs, a.costs);
    const double first = pairwiseAccuracy(predictRows(*m, test.programs), test.costs);
    updateRows(*m, b.programs, b.costs);
    QCOMPARE(m->trainedOn(), size_t(200));
    const double both = pairwiseAccuracy(predictRows(*m, test.programs), test.costs);
    qInfo("%s: accuracy %.3f after 100 programs, %.3f after 200", qPrintable(model), first, both);
    QVERIFY2(both >= 0.8, qPrintable(QString::number(both)));
    QVERIFY(both >= first - 0.03);
  }

  void xgbIsDeterministic_data() { lossColumns(false); }
  void xgbIsDeterministic() {
    QFETCH(QString, model);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    const Dataset train = makeData(150, 31), test = makeData(50, 32);
    auto a = create(model, 9), b = create(model, 9);
    // Before training: small seeded noise, the same for the same seed.
    const auto untrained = predictRows(*a, test.programs);
    QCOMPARE(untrained, predictRows(*b, test.programs));
    for (double s : untrained)
      QVERIFY(s >= 0.0 && s < 1e-3);
    updateRows(*a, train.programs, train.costs);
    updateRows(*b, train.programs, train.costs);
    const auto sa = predictRows(*a, test.programs);
    QCOMPARE(sa, predictRows(*b, test.programs));
    QCOMPARE(sa, predictRows(*a, test.programs));  // prediction has no state
  }

  void xgbTrainsWithFailedPrograms_data() { lossColumns(false); }
  void xgbTrainsWithFailedPrograms() {
    QFETCH(QString, model);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    // About 30 % of the programs fail (first row's x[4] > 0.7).
    const Dataset train = makeData(200, 41, 16, 1, 3, 0.7), all = makeData(150, 42, 16, 1, 3, 0.7);
    size_t failed = 0;
    for (double c : train.costs)
      failed += std::isinf(c) ? 1 : 0;
    QVERIFY(failed > 30);
    auto m = create(model, 5);
    updateRows(*m, train.programs, train.costs);
    QCOMPARE(m->trainedOn(), size_t(200));
    const auto scores = predictRows(*m, all.programs);
    for (double s : scores)
      QVERIFY(std::isfinite(s));
    // Ranked among the held-out programs that run, ...
    std::vector<double> okScores, okCosts;
    double failedScore = 0, okScore = 0;
    for (size_t i = 0; i < scores.size(); ++i) {
      if (std::isinf(all.costs[i])) {
        failedScore += scores[i];
      } else {
        okScores.push_back(scores[i]);
        okCosts.push_back(all.costs[i]);
        okScore += scores[i];
      }
    }
    const size_t nFailed = scores.size() - okScores.size();
    const double acc = pairwiseAccuracy(okScores, okCosts);
    qInfo("%s: accuracy %.3f with %zu failed training programs", qPrintable(model), acc, failed);
    // (a bit below the clean 0.8: a failure's label 0 says nothing about its
    // cost, and rank's mean row blurs which row made it fail)
    QVERIFY2(acc >= 0.75, qPrintable(QString::number(acc)));
    // ... and the ones that would fail score lower on average.
    QVERIFY(nFailed > 20);
    QVERIFY(failedScore / static_cast<double>(nFailed) < okScore / static_cast<double>(okScores.size()));
  }

  void xgbThroughputIsPackSum() {
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    const Dataset train = makeData(100, 81, 16, 2, 2);
    auto m = makeXgbModel("throughput", 5);
    updateRows(*m, train.programs, train.costs);
    // A program scores the sum of its rows' scores.
    const ProgramFeatures& p = train.programs[0];
    const auto s = predictRows(*m, {p, {p[0]}, {p[1]}});
    QVERIFY(std::abs(s[0] - (s[1] + s[2])) <= 1e-6 * (1.0 + std::abs(s[0])));
  }

  void xgbNeedsTwoMeasuredPrograms_data() { lossColumns(false); }
  void xgbNeedsTwoMeasuredPrograms() {
    QFETCH(QString, model);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    const Dataset d = makeData(20, 51);
    auto m = create(model, 5);
    // All failed, then a single measured one: nothing to learn yet.
    updateRows(*m, d.programs, std::vector<double>(d.programs.size(), kInf));
    updateRows(*m, {d.programs[0]}, {1e-3});
    QCOMPARE(m->trainedOn(), size_t(21));
    for (double s : predictRows(*m, d.programs))
      QVERIFY(s >= 0.0 && s < 1e-3);
    // A second measured one: now it trains (scores are no longer tiny noise).
    updateRows(*m, {d.programs[1]}, {2e-3});
    bool trained = false;
    for (double s : predictRows(*m, d.programs))
      trained = trained || s < 0.0 || s >= 1e-3;
    QVERIFY(trained);
  }

  void xgbRejectsBadInput() {
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, makeXgbModel("mse", 1));
    auto m = makeXgbModel("throughput", 1);
    const Dataset d = makeData(10, 61);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, updateRows(*m, d.programs, {1.0, 2.0}));
    updateRows(*m, d.programs, d.costs);
    const ProgramFeatures wrongWidth(2, std::vector<float>(15, 0.5f));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, predictRows(*m, {wrongWidth}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, updateRows(*m, {wrongWidth}, {1.0}));
    QCOMPARE(m->trainedOn(), size_t(10));
    // Its own training's trees do not make it pre-trained; a caller's load does.
    QVERIFY(!m->pretrained());
    // A model loaded from a file saved for other rows (an older Tessel's
    // feature set) says so, and to train it again.
    auto loaded = makeXgbModel("throughput", 1);
    QVERIFY(!loaded->pretrained());
    loaded->load(m->save());
    QVERIFY(loaded->pretrained());
    QCOMPARE(loaded->trainedOn(), size_t(0));
    try {
      predictRows(*loaded, {wrongWidth});
      QFAIL("predicted from rows of the wrong width");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(std::string(e.what()).find("saved for rows of 16 features") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("train it again") != std::string::npos, e.what());
    }
  }

  void xgbPredictionSpeed_data() { lossColumns(false); }
  void xgbPredictionSpeed() {
    QFETCH(QString, model);
    if (!haveXgb()) TESSEL_SKIP("xgboost", "no XGBoost in this build");
    // Ansor-sized rows: 164 features, 2..6 (about 4) stores per program.
    const Dataset train = makeData(1000, 71, 164, 2, 6), test = makeData(2000, 72, 164, 2, 6);
    auto m = create(model, 5);
    QElapsedTimer timer;
    timer.start();
    updateRows(*m, train.programs, train.costs);
    const qint64 trainMs = timer.elapsed();
    predictRows(*m, test.programs);  // warm-up
    constexpr int kReps = 5;
    timer.restart();
    for (int i = 0; i < kReps; ++i)
      predictRows(*m, test.programs);
    const double seconds = static_cast<double>(timer.nsecsElapsed()) * 1e-9;
    const double perSecond = kReps * 2000.0 / seconds;
    qInfo("%s: %.0f predictions/s (2000 programs x ~4 rows x 164 features); training on 1000 programs: %lld ms",
          qPrintable(model), perSecond, static_cast<long long>(trainMs));
    // The target is > 20,000/s on 2 cores; the floor leaves room for
    // sanitizer and loaded-machine runs.
    QVERIFY2(perSecond > 5000, qPrintable(QString::number(perSecond)));
  }

  // TenSet's metrics on numbers worked out by hand.
  void rankingMetrics() {
    // Task a (weight 2): the model's favourite costs 2, the best 1. Task b:
    // its favourite is the best, 3.
    const std::vector<EvalTask> tasks = {{"m", "a", 2, {1, 2, 4}, {0.1, 0.9, 0.5}}, {"m", "b", 1, {3, 6}, {1, 0}}};
    const EvalMetrics e = evaluateRanking(tasks);
    QCOMPARE(e.top1, (2 * 1.0 + 3) / (2 * 2.0 + 3));
    QCOMPARE(e.top5, 1.0);
    QCOMPARE(e.pairwiseAccuracy, 2.0 / 4);  // a: (1,2) right, (0,1) (0,2) wrong; b: right
    QCOMPARE(e.tasks, size_t(2));
    QCOMPARE(e.programs, size_t(5));
    // Scores an affine map of best/cost: R2 = 1; constant scores: 0.
    const std::vector<double> costs = {1, 2, 4, 5};
    std::vector<double> affine;
    for (double c : costs)
      affine.push_back(3 * (1 / c) + 7);
    QVERIFY(std::abs(evaluateRanking({{"m", "a", 1, costs, affine}}).r2 - 1) < 1e-12);
    QCOMPARE(evaluateRanking({{"m", "a", 1, costs, {1, 1, 1, 1}}}).r2, 0.0);
    // A task whose programs all failed is left out; a failed pick is far off.
    QCOMPARE(evaluateRanking({{"m", "x", 1, {INFINITY, INFINITY}, {1, 0}}}).tasks, size_t(0));
    QVERIFY(topKScore({{"m", "a", 1, {INFINITY, 1}, {1, 0}}}, 1) < 0.01);
  }

 private:
  static void lossColumns(bool withRandom) {
    QTest::addColumn<QString>("model");
    if (withRandom) QTest::newRow("random") << QString("random");
    QTest::newRow("throughput") << QString("throughput");
    QTest::newRow("rank") << QString("rank");
  }
  static std::unique_ptr<CostModel> create(const QString& model, uint64_t seed) {
    if (model == "random") return makeRandomModel(seed);
    return makeXgbModel(model.toStdString(), seed);
  }
};

QTEST_APPLESS_MAIN(TestCostModels)
#include "test_cost_models.moc"
