// The studio's live plots: rank correlations and their intervals, the
// plots' contents, the scatter's normalisation, an untrained model's scores
// apart, rho per round and the worse-than-chance flag, batching of replots,
// task selection, and a 100k-point history.
#include <qcustomplot.h>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTabWidget>
#include <QtTest>
#include <cmath>
#include <random>
#include <vector>

#include "tessel_test.h"
#include "ui/model_quality.h"
#include "ui/model_quality_plot.h"
#include "ui/plots_panel.h"
#include "ui/rank_correlation.h"
#include "ui/roofline_view.h"

using namespace tessel::ui;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// O(n^2) tau-b straight from the definition, to check the O(n log n) one.
double bruteKendall(const std::vector<double>& x, const std::vector<double>& y) {
  double concordant = 0, discordant = 0, xOnly = 0, yOnly = 0;
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = i + 1; j < x.size(); ++j) {
      const double dx = x[i] - x[j], dy = y[i] - y[j];
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) {
        ++xOnly;
      } else if (dy == 0) {
        ++yOnly;
      } else if ((dx > 0) == (dy > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  return (concordant - discordant) / std::sqrt((concordant + discordant + xOnly) * (concordant + discordant + yOnly));
}

std::vector<double> values(const QCPGraph* graph, bool keys) {
  std::vector<double> out;
  for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
    out.push_back(keys ? it->key : it->value);
  return out;
}

}  // namespace

class TestPlotsPanel : public QObject {
  Q_OBJECT
 private slots:
  void spearmanKnownValues();
  void kendallKnownValues();
  void kendallMatchesBruteForce();
  void bestAndEstimatePlots();
  void scatterNormalisation();
  void scatterMinMaxForNonPositiveScores();
  void scatterSpreadsCrowdedScores();
  void rankCorrelationMatchesFunction();
  void selectTaskSwitchesData();
  void batchingCoalescesReplots();
  void steadyStreamStillRedraws();
  void setTasksClears();
  void logScaleToggle();
  void bulkHundredThousand();
  void spearmanIntervalKnownValues();
  void untrainedScoresAreApartAndOutOfRho();
  void worseThanChanceIsFlaggedOnce();
  void rooflineDrawsTasksUnderTheirRoofs();
};

void TestPlotsPanel::spearmanKnownValues() {
  QCOMPARE(spearmanRankCorrelation({1, 2, 3, 4, 5}, {10, 20, 25, 100, 1000}), 1.0);
  QCOMPARE(spearmanRankCorrelation({1, 2, 3, 4, 5}, {5, 4, 3, 2, 1}), -1.0);
  // No ties: 1 - 6 * sum(d^2) / (n (n^2 - 1)) = 1 - 6 * 4 / 120.
  QVERIFY(std::abs(spearmanRankCorrelation({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) - 0.8) < 1e-12);
  // Ties: ranks x = 1, 2.5, 2.5, 4 and y = 1, 3, 2, 4; Pearson of the
  // ranks = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10).
  QVERIFY(std::abs(spearmanRankCorrelation({1, 2, 2, 3}, {1, 3, 2, 4}) - 3 / std::sqrt(10.0)) < 1e-12);
  const std::vector<double> ranks = averageRanks({7, 3, 7, 7, 1});
  QCOMPARE(ranks, (std::vector<double>{4, 2, 4, 4, 1}));
  // Fewer than 2 points, a constant side, different lengths: NaN.
  QVERIFY(std::isnan(spearmanRankCorrelation({}, {})));
  QVERIFY(std::isnan(spearmanRankCorrelation({1}, {2})));
  QVERIFY(std::isnan(spearmanRankCorrelation({1, 2, 3}, {4, 4, 4})));
  QVERIFY(std::isnan(spearmanRankCorrelation({1, 2, 3}, {1, 2})));
  // Non-finite pairs are left out: what remains is perfectly monotone.
  QCOMPARE(spearmanRankCorrelation({1, kNaN, 3, 4}, {1, 2, kNaN, 8}), 1.0);
  QVERIFY(std::isnan(spearmanRankCorrelation({1, kNaN}, {1, 2})));
}

void TestPlotsPanel::kendallKnownValues() {
  QCOMPARE(kendallTau({1, 2, 3, 4}, {1, 4, 9, 16}), 1.0);
  QCOMPARE(kendallTau({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // 10 pairs, 2 discordant (1-2 and 3-4 swapped): (8 - 2) / 10.
  QVERIFY(std::abs(kendallTau({1, 2, 3, 4, 5}, {2, 1, 4, 3, 5}) - 0.6) < 1e-12);
  QVERIFY(std::isnan(kendallTau({1}, {1})));
  QVERIFY(std::isnan(kendallTau({2, 2, 2}, {1, 2, 3})));
}

void TestPlotsPanel::kendallMatchesBruteForce() {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> small(0, 5);  // many ties on both sides
  for (int round = 0; round < 50; ++round) {
    const int n = 2 + round * 3;
    std::vector<double> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = small(rng);
      y[i] = x[i] + small(rng);
    }
    const double expected = bruteKendall(x, y);
    const double got = kendallTau(x, y);
    if (std::isnan(expected)) {
      QVERIFY(std::isnan(got));
    } else {
      QVERIFY2(std::abs(got - expected) < 1e-12,
               qPrintable(QStringLiteral("n=%1 %2 vs %3").arg(n).arg(got).arg(expected)));
    }
  }
}

void TestPlotsPanel::bestAndEstimatePlots() {
  PlotsPanel panel;
  panel.setTasks({"conv", "dense"});
  panel.addRound(0, 10, 2e-3, kNaN, 1.0);
  panel.addRound(1, 8, 5e-3, 9e-3, 1.5);
  panel.addRound(0, 20, 1.5e-3, 7e-3, 2.0);
  panel.addRound(1, 16, kNaN, 6.5e-3, 2.5);  // no best yet: not plotted
  panel.addRound(1, 24, 4e-3, 5.5e-3, 3.0);
  panel.selectTask(0);
  panel.replotNow();

  QCOMPARE(panel.bestPlot()->graphCount(), 1);
  const QCPGraph* best = panel.bestPlot()->graph(0);
  QCOMPARE(best->name(), QStringLiteral("conv"));
  QCOMPARE(values(best, true), (std::vector<double>{10, 20}));
  const std::vector<double> ms = values(best, false);
  QCOMPARE(ms.size(), size_t{2});
  QVERIFY(std::abs(ms[0] - 2.0) < 1e-12 && std::abs(ms[1] - 1.5) < 1e-12);
  QCOMPARE(best->lineStyle(), QCPGraph::lsStepLeft);
  // Both values are inside the visible range.
  QVERIFY(panel.bestPlot()->yAxis->range().contains(1.5) && panel.bestPlot()->yAxis->range().contains(2.0));

  // One estimate point per round with a finite estimate, in ms.
  QCOMPARE(panel.estimatePlot()->graphCount(), 1);
  const QCPGraph* estimate = panel.estimatePlot()->graph(0);
  QCOMPARE(values(estimate, true), (std::vector<double>{1.5, 2.0, 2.5, 3.0}));
  const std::vector<double> est = values(estimate, false);
  const std::vector<double> expected{9.0, 7.0, 6.5, 5.5};
  QCOMPARE(est.size(), expected.size());
  for (size_t i = 0; i < est.size(); ++i)
    QVERIFY(std::abs(est[i] - expected[i]) < 1e-12);

  // All tasks: one step line per task with data.
  panel.selectTask(-1);
  panel.replotNow();
  QCOMPARE(panel.bestPlot()->graphCount(), 2);
  QCOMPARE(panel.bestPlot()->graph(1)->dataCount(), 2);
  QVERIFY(panel.bestPlot()->legend->visible());
}

void TestPlotsPanel::scatterNormalisation() {
  PlotsPanel panel;
  panel.setTasks({"a", "b"});
  panel.addPrograms(0, {1, 2, 4, 3}, {4e-3, 2e-3, 1e-3, kNaN});  // the failed one is left out
  panel.replotNow();
  QCOMPARE(panel.scatterPointCount(), 3);
  QCOMPARE(panel.scatterGraph()->dataCount(), 3);
  // Ranks within the task as fractions: x of the predicted scores 1, 2, 4;
  // y of the throughputs (4, 2, 1 ms: slowest to fastest).
  QCOMPARE(values(panel.scatterGraph(), true), (std::vector<double>{0, 0.5, 1.0}));
  QCOMPARE(values(panel.scatterGraph(), false), (std::vector<double>{0, 0.5, 1.0}));
  QCOMPARE(panel.rankCorrelation(), 1.0);
  QCOMPARE(panel.scatterSummary(), QStringLiteral("Spearman ρ = 1.00 (n = 3)"));
  // The diagonal is there, from (0, 0) to (1, 1).
  QCOMPARE(panel.scatterPlot()->graphCount(), 3);  // the diagonal, the trained and the untrained model's
  QCOMPARE(values(panel.scatterPlot()->graph(0), true), (std::vector<double>{0, 1}));
  QCOMPARE(values(panel.scatterPlot()->graph(0), false), (std::vector<double>{0, 1}));
  QCOMPARE(panel.scatterGraph()->lineStyle(), QCPGraph::lsNone);
  QVERIFY(!panel.scatterGraph()->antialiasedScatters());

  // A round's best does not move the points: they are ranks.
  panel.addRound(0, 4, 0.5e-3, kNaN, 1);
  panel.replotNow();
  QCOMPARE(values(panel.scatterGraph(), false), (std::vector<double>{0, 0.5, 1.0}));

  // Another task is ranked among its own programs.
  panel.addPrograms(1, {10, 20}, {8e-3, 4e-3});
  panel.replotNow();
  QCOMPARE(panel.scatterPointCount(), 5);
  QCOMPARE(values(panel.scatterGraph(), true), (std::vector<double>{0, 0, 0.5, 1.0, 1.0}));
  QCOMPARE(values(panel.scatterGraph(), false), (std::vector<double>{0, 0, 0.5, 1.0, 1.0}));
}

// Scores that crowd together (0.97 to 1.0, as a trained model's can) still
// spread over the x axis: on a ratio scale they would all sit at x ~ 1.
void TestPlotsPanel::scatterSpreadsCrowdedScores() {
  PlotsPanel panel;
  panel.setTasks({"a"});
  QVector<double> predicted, measured;
  for (int i = 0; i < 31; ++i) {
    predicted.append(0.97 + 0.001 * i);
    measured.append(1e-3 * (40 - i));
  }
  panel.addPrograms(0, predicted, measured);
  panel.replotNow();
  const std::vector<double> xs = values(panel.scatterGraph(), true);
  QCOMPARE(xs.size(), size_t(31));
  QCOMPARE(xs.front(), 0.0);
  QCOMPARE(xs.back(), 1.0);
  const auto below = std::count_if(xs.begin(), xs.end(), [](double x) { return x < 0.5; });
  QCOMPARE(below, 15);  // evenly spread
  QCOMPARE(panel.rankCorrelation(), 1.0);
}

void TestPlotsPanel::scatterMinMaxForNonPositiveScores() {
  PlotsPanel panel;
  panel.setTasks({"a"});
  panel.addPrograms(0, {-1, 0, 1}, {3e-3, 2e-3, 1e-3});
  panel.replotNow();
  QCOMPARE(values(panel.scatterGraph(), true), (std::vector<double>{0, 0.5, 1}));
  QCOMPARE(panel.rankCorrelation(), 1.0);
}

void TestPlotsPanel::rankCorrelationMatchesFunction() {
  PlotsPanel panel;
  panel.setTasks({"t"});
  std::mt19937 rng(3);
  std::lognormal_distribution<double> seconds(-6, 1);
  std::normal_distribution<double> noise(0, 0.5);
  QVector<double> predicted, measured;
  for (int i = 0; i < 300; ++i) {
    const double s = seconds(rng);
    measured.append(i % 17 == 0 ? kNaN : s);
    predicted.append(std::exp(-std::log(s) + noise(rng)));
  }
  panel.addPrograms(0, predicted, measured);
  panel.replotNow();

  // The same x and y computed here from the definition.
  double best = 1e9, maxPredicted = 0;
  for (int i = 0; i < measured.size(); ++i) {
    if (std::isnan(measured[i])) continue;
    best = std::min(best, measured[i]);
    maxPredicted = std::max(maxPredicted, predicted[i]);
  }
  std::vector<double> x, y;
  for (int i = 0; i < measured.size(); ++i) {
    if (std::isnan(measured[i])) continue;
    x.push_back(predicted[i] / maxPredicted);
    y.push_back(best / measured[i]);
  }
  QCOMPARE(panel.scatterPointCount(), static_cast<int>(x.size()));
  const double rho = spearmanRankCorrelation(x, y);
  QVERIFY(rho > 0.3 && rho < 1);
  QVERIFY(std::abs(panel.rankCorrelation() - rho) < 1e-12);
  QVERIFY(panel.scatterSummary().startsWith(QStringLiteral("Spearman ρ = %1").arg(rho, 0, 'f', 2)));
  const std::vector<double> ys = values(panel.scatterGraph(), false);
  QCOMPARE(*std::max_element(ys.begin(), ys.end()), 1.0);
}

void TestPlotsPanel::selectTaskSwitchesData() {
  PlotsPanel panel;
  panel.setTasks({"a", "b", "c"});
  panel.addRound(0, 5, 3e-3, kNaN, 0.5);
  panel.addRound(1, 5, 8e-3, kNaN, 1.0);
  panel.addRound(1, 10, 6e-3, kNaN, 1.5);
  panel.addPrograms(0, {1, 2}, {3e-3, 4e-3});
  panel.addPrograms(1, {1, 2, 3}, {9e-3, 8e-3, 6e-3});
  panel.replotNow();
  QCOMPARE(panel.selectedTask(), -1);
  QCOMPARE(panel.scatterPointCount(), 5);

  QSignalSpy userPicks(&panel, &PlotsPanel::taskSelected);
  panel.selectTask(1);
  QCOMPARE(panel.selectedTask(), 1);
  QCOMPARE(panel.scatterPointCount(), 3);  // current before any replot
  // The switch is drawn at the next turn of the event loop.
  QTRY_COMPARE_WITH_TIMEOUT(panel.bestPlot()->graph(0)->name(), QStringLiteral("b"), 200);
  QCOMPARE(values(panel.bestPlot()->graph(0), false), (std::vector<double>{8, 6}));
  QCOMPARE(panel.scatterGraph()->dataCount(), 3);
  QCOMPARE(userPicks.count(), 0);  // programmatic selection is not the user's

  panel.selectTask(0);
  panel.replotNow();
  QCOMPARE(values(panel.bestPlot()->graph(0), false), (std::vector<double>{3}));
  QCOMPARE(panel.scatterGraph()->dataCount(), 2);

  // Out of range selects all tasks.
  panel.selectTask(7);
  QCOMPARE(panel.selectedTask(), -1);
}

void TestPlotsPanel::batchingCoalescesReplots() {
  PlotsPanel panel;
  panel.resize(900, 300);
  panel.show();
  panel.setTasks({"a", "b"});
  panel.selectTask(1);
  panel.replotNow();
  QTest::qWait(50);  // let the initial queued work pass

  int drawn = 0;  // QCustomPlot's own replots, all three plots
  for (QCustomPlot* plot : {panel.bestPlot(), panel.estimatePlot(), panel.scatterPlot()})
    connect(plot, &QCustomPlot::afterReplot, this, [&drawn] { ++drawn; });
  const int before = panel.replotCount();

  int roundsOfB = 0, programsOfB = 0;
  for (int i = 0; i < 200; ++i) {
    const int task = i % 2;
    const double best = 1e-3 * (1 + 100.0 / (i + 1));
    panel.addRound(task, i + 1, best, 2 * best, 0.01 * i);
    panel.addPrograms(task, {1.0 + i, 2.0 + i}, {best * 1.5, best * 2});
    if (task == 1) {
      ++roundsOfB;
      programsOfB += 2;
    }
  }
  // Data calls never replot by themselves.
  QCOMPARE(panel.replotCount(), before);
  QCOMPARE(drawn, 0);

  QTest::qWait(600);
  const int cycles = panel.replotCount() - before;
  QVERIFY2(cycles >= 1 && cycles <= 5, qPrintable(QString::number(cycles)));
  QVERIFY2(drawn >= 3 && drawn <= 3 * 5, qPrintable(QString::number(drawn)));

  // The last state is drawn.
  QCOMPARE(panel.bestPlot()->graph(0)->dataCount(), roundsOfB);
  QCOMPARE(panel.bestPlot()->graph(0)->data()->at(roundsOfB - 1)->key, 200.0);
  QCOMPARE(panel.estimatePlot()->graph(0)->dataCount(), 200);
  QCOMPARE(panel.scatterGraph()->dataCount(), programsOfB);
  QCOMPARE(panel.scatterPlot()->plotLayout()->elementCount() > 0, true);
  auto* title = qobject_cast<QCPTextElement*>(panel.scatterPlot()->plotLayout()->element(0, 0));
  QVERIFY(title);
  QCOMPARE(title->text(), panel.scatterSummary());
}

void TestPlotsPanel::steadyStreamStillRedraws() {
  // Updates every 50 ms for ~1 s: a debounce restarted by each call would
  // never fire; the panel must redraw about every 250 ms.
  PlotsPanel panel;
  panel.setTasks({"a"});
  panel.replotNow();
  const int before = panel.replotCount();
  QElapsedTimer clock;
  clock.start();
  for (int i = 0; i < 20; ++i) {
    panel.addRound(0, i + 1, 1e-3, 1e-3, 0.05 * i);
    QTest::qWait(50);
  }
  const int cycles = panel.replotCount() - before;
  // At most one cycle per interval, however slow a loaded machine is.
  const int most = static_cast<int>(clock.elapsed() / PlotsPanel::kReplotIntervalMs) + 1;
  QVERIFY2(cycles >= 2 && cycles <= most, qPrintable(QStringLiteral("%1 of at most %2").arg(cycles).arg(most)));
}

void TestPlotsPanel::setTasksClears() {
  PlotsPanel panel;
  panel.setTasks({"a"});
  panel.addRound(0, 1, 1e-3, 2e-3, 0.1);
  panel.addPrograms(0, {1, 2}, {2e-3, 1e-3});
  panel.selectTask(0);
  panel.replotNow();
  QCOMPARE(panel.scatterPointCount(), 2);

  panel.setTasks({"x", "y"});
  QCOMPARE(panel.selectedTask(), -1);
  QCOMPARE(panel.scatterPointCount(), 0);
  QVERIFY(std::isnan(panel.rankCorrelation()));
  QCOMPARE(panel.scatterSummary(), QStringLiteral("Spearman ρ = – (n = 0)"));
  panel.replotNow();
  QCOMPARE(panel.bestPlot()->graphCount(), 0);
  QCOMPARE(panel.estimatePlot()->graph(0)->dataCount(), 0);
  QCOMPARE(panel.scatterGraph()->dataCount(), 0);

  // clear() keeps the tasks; invalid task indices are ignored.
  panel.addPrograms(1, {1}, {1e-3});
  panel.addPrograms(5, {1}, {1e-3});
  panel.addRound(-1, 1, 1e-3, kNaN, 0);
  QCOMPARE(panel.scatterPointCount(), 1);
  panel.clear();
  QCOMPARE(panel.tasks(), (QStringList{"x", "y"}));
  QCOMPARE(panel.scatterPointCount(), 0);
}

void TestPlotsPanel::logScaleToggle() {
  PlotsPanel panel;
  panel.setTasks({"a"});
  QVERIFY(panel.bestLogScale());
  QCOMPARE(panel.bestPlot()->yAxis->scaleType(), QCPAxis::stLogarithmic);
  panel.addRound(0, 1, 20e-3, kNaN, 0);
  panel.addRound(0, 50, 0.3e-3, kNaN, 0);
  panel.replotNow();
  const QCPRange logRange = panel.bestPlot()->yAxis->range();
  QVERIFY(logRange.lower > 0 && logRange.contains(0.3) && logRange.contains(20));
  panel.setBestLogScale(false);
  panel.replotNow();
  QCOMPARE(panel.bestPlot()->yAxis->scaleType(), QCPAxis::stLinear);
  QCOMPARE(panel.bestPlot()->yAxis->range().lower, 0.0);
  QVERIFY(panel.bestPlot()->yAxis->range().contains(20));
}

void TestPlotsPanel::bulkHundredThousand() {
  PlotsPanel panel;
  panel.resize(1200, 400);
  panel.show();
  const int tasks = 8, n = 100000;
  QStringList names;
  for (int t = 0; t < tasks; ++t)
    names << QStringLiteral("task%1").arg(t);
  panel.setTasks(names);
  std::mt19937 rng(11);
  std::lognormal_distribution<double> seconds(-7, 0.8);
  std::normal_distribution<double> noise(0, 0.3);
  QVector<int> task(n);
  QVector<double> predicted(n), measured(n);
  int ofTask3 = 0;
  for (int i = 0; i < n; ++i) {
    task[i] = i % tasks;
    measured[i] = seconds(rng);
    predicted[i] = std::exp(-std::log(measured[i]) + noise(rng));
    ofTask3 += task[i] == 3;
  }
  QElapsedTimer timer;
  timer.start();
  panel.addProgramsBulk(task, predicted, measured);
  panel.replotNow();
  qInfo("100k bulk insert + update cycle: %lld ms", static_cast<long long>(timer.elapsed()));
  QCOMPARE(panel.scatterPointCount(), n);
  QCOMPARE(panel.scatterGraph()->dataCount(), n);
  QVERIFY(panel.rankCorrelation() > 0.5 && panel.rankCorrelation() < 1);
  // The points fill the unit square, each task's from its worst (0) to its best (1).
  bool found = false;
  const QCPRange keys = panel.scatterGraph()->getKeyRange(found);
  const QCPRange ys = panel.scatterGraph()->getValueRange(found);
  QVERIFY(found && keys.lower == 0.0 && keys.upper == 1.0 && ys.lower == 0.0 && ys.upper == 1.0);

  panel.selectTask(3);
  panel.replotNow();
  QCOMPARE(panel.scatterPointCount(), ofTask3);
  QCOMPARE(panel.scatterGraph()->dataCount(), ofTask3);
}

void TestPlotsPanel::spearmanIntervalKnownValues() {
  // rho 0.5 over 28 pairs: z = atanh(0.5) = 0.5493, se = sqrt(1.125 / 25) = 0.2121.
  const Interval i = spearmanInterval(0.5, 28);
  QVERIFY(std::abs(i.low - 0.1327) < 1e-3);
  QVERIFY(std::abs(i.high - 0.7463) < 1e-3);
  QVERIFY(std::isnan(spearmanInterval(0.5, 3).low));  // too few pairs
  QVERIFY(std::isnan(spearmanInterval(kNaN, 100).high));
  const Interval perfect = spearmanInterval(1.0, 10);
  QVERIFY(perfect.high <= 1.0 && perfect.low > 0.9);
}

void TestPlotsPanel::untrainedScoresAreApartAndOutOfRho() {
  PlotsPanel panel;
  panel.setTasks({"a"});
  // A cold start's first round: an untrained model, its scores backwards
  // (the highest score, predicted fastest, on the slowest program).
  panel.addPrograms(0, {1, 2, 3, 4, 5}, {1e-3, 2e-3, 3e-3, 4e-3, 5e-3}, true);
  // Then a trained model, ranking six programs right.
  panel.addPrograms(0, {1, 2, 3, 4, 5, 6}, {6e-3, 5e-3, 4e-3, 3e-3, 2e-3, 1e-3});
  panel.replotNow();
  QCOMPARE(panel.scatterPointCount(), 6);
  QCOMPARE(panel.untrainedPointCount(), 5);
  QCOMPARE(panel.rankCorrelation(), 1.0);
  const QString summary = panel.scatterSummary();
  QVERIFY2(summary.startsWith("Spearman ρ = 1.00 [") && summary.contains("(n = 6)") &&
               summary.contains("5 untrained scores grey, not counted"),
           qPrintable(summary));
  // The rounds plot: one trained round (rho 1), one untrained (rho -1, grey).
  QCOMPARE(panel.roundsPlot()->trainedPointCount(), 1);
  QCOMPARE(panel.roundsPlot()->untrainedPointCount(), 1);
  const std::vector<ScoredProgram> none;
  QCOMPARE(rhoPerRound(none).size(), size_t(0));
  // Reopened from the database: the same rounds and states, in bulk.
  PlotsPanel reopened;
  reopened.setTasks({"a"});
  reopened.addProgramsBulk({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 6},
                           {1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 5e-3, 4e-3, 3e-3, 2e-3, 1e-3},
                           {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1},
                           {true, true, true, true, true, false, false, false, false, false, false});
  reopened.replotNow();
  QCOMPARE(reopened.scatterSummary(), summary);
  QCOMPARE(reopened.roundsPlot()->trainedPointCount(), 1);
}

void TestPlotsPanel::worseThanChanceIsFlaggedOnce() {
  PlotsPanel panel;
  panel.setTasks({"a", "b"});
  QSignalSpy flagged(&panel, &PlotsPanel::modelFlagged);
  const QVector<double> backwards = {1, 2, 3, 4, 5, 6, 7, 8};  // the slowest predicted fastest
  const QVector<double> seconds = {1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3, 8e-3};
  // Untrained rounds never count, however bad.
  for (int i = 0; i < 3; ++i)
    panel.addPrograms(0, backwards, seconds, true);
  QCOMPARE(flagged.count(), 0);
  panel.addPrograms(0, backwards, seconds);
  panel.addPrograms(1, backwards, seconds);  // another task's round between
  panel.addPrograms(0, backwards, seconds);
  QCOMPARE(flagged.count(), 0);  // two trained rounds are not enough
  panel.addPrograms(0, backwards, seconds);
  QCOMPARE(flagged.count(), 1);
  QCOMPARE(flagged.at(0).at(0).toInt(), 0);
  QVERIFY2(flagged.at(0).at(1).toString().contains("worse than chance over its last 3 rounds"),
           qPrintable(flagged.at(0).at(1).toString()));
  QCOMPARE(panel.flaggedTasks(), QList<int>{0});
  panel.addPrograms(0, backwards, seconds);
  QCOMPARE(flagged.count(), 1);  // said once
  panel.replotNow();
  QVERIFY(panel.roundsPlot()->flagText().contains("a: the trained model ranks"));
  QVERIFY(panel.costModelTabs()->tabText(1).contains("worse than chance"));
  // A round that ranks well: no longer flagged.
  const QVector<double> forwards = {8, 7, 6, 5, 4, 3, 2, 1};
  panel.addPrograms(0, forwards, seconds);
  QVERIFY(panel.flaggedTasks().isEmpty());
  panel.replotNow();
  QVERIFY(panel.roundsPlot()->flagText().isEmpty());
  QCOMPARE(panel.costModelTabs()->tabText(1), QString("ρ per round"));
  // Rounds with a rho just below zero are not enough: the pooled interval must lie below it.
  PlotsPanel noisy;
  noisy.setTasks({"a"});
  QSignalSpy noisyFlag(&noisy, &PlotsPanel::modelFlagged);
  for (int i = 0; i < 3; ++i)
    noisy.addPrograms(0, {1, 2, 3, 4, 5, 6, 7, 8}, {8e-3, 4e-3, 2e-3, 1e-3, 3e-3, 5e-3, 6e-3, 7e-3});  // rho -0.17
  QVERIFY(noisyFlag.isEmpty());
}

void TestPlotsPanel::rooflineDrawsTasksUnderTheirRoofs() {
  RooflineView view;
  // 200 FLOP/byte over 10 MB; 0.125 FLOP/byte over 8 MB; one of unknown traffic.
  view.setTasks({{"conv", 2e9, 1e7}, {"relu", 1e6, 8e6}, {"odd", 1e6, 0}});
  QVERIFY(view.attainable().isEmpty());  // no ceilings yet
  QVERIFY(view.summary().contains("Measuring"));
  tessel::measure::MachineCeilings c;
  c.cpu = "test CPU";
  c.threads = 2;
  c.fmaLanesPerCycle = 32;
  c.clockGHz = 2.5;
  c.peakGflops = 160;
  c.dramGBps = 20;
  c.llcGBps = 100;
  c.llcBytes = 32u << 20;
  view.setCeilings(c);
  const QVector<double> roof = view.attainable();
  QCOMPARE(roof.size(), 3);
  QCOMPARE(roof[0], 160.0);  // compute-bound: the peak
  QCOMPARE(roof[1], 12.5);   // 8 MB fit in the 32 MiB cache: its roof, 0.125 x 100
  QVERIFY(std::isnan(roof[2]));
  view.addPrograms(0, {0.1, 0.05, kNaN});  // 20 and 40 GFLOP/s; a failed one
  view.addPrograms(1, {1e-3});
  QCOMPARE(view.bestGflops(0), 40.0);
  QCOMPARE(view.intensity(0), 200.0);
  QCOMPARE(view.bestPointCount(), 2);
  QCOMPARE(view.programPointCount(), 0);  // none selected
  view.selectTask(0);
  QCOMPARE(view.programPointCount(), 2);
  QCOMPARE(view.bestPointCount(), 2);
  QVERIFY2(view.summary().contains("conv: 40.0 GFLOP/s at 200.00 FLOP/byte, 25.0 % of its roof (160.0 GFLOP/s)"),
           qPrintable(view.summary()));
  QVERIFY(view.summary().startsWith("test CPU, 2 threads: peak 160 GFLOP/s"));
  // The roofs: memory's bends at the ridge (8 FLOP/byte) into the peak.
  const QCPGraph* memory = view.plot()->graph(0);
  QCOMPARE(memory->dataCount(), 3);
  QCOMPARE((memory->data()->constBegin() + 1)->key, 8.0);
  QCOMPARE((memory->data()->constBegin() + 1)->value, 160.0);
  view.clearPrograms();
  QCOMPARE(view.bestPointCount(), 0);
  view.setUnavailable("The roofline is drawn for CPU targets");
  QCOMPARE(view.summary(), QString("The roofline is drawn for CPU targets"));
  QCOMPARE(view.plot()->graph(0)->dataCount(), 0);
}

QTEST_MAIN(TestPlotsPanel)
#include "test_plots_panel.moc"
