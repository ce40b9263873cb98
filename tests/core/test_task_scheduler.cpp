// Ansor's gradient task scheduler on synthetic tasks: it warms up round
// robin, then gives the trials to the task whose improvement lowers the
// end-to-end estimate most.
#include <QtTest>
#include <cmath>

#include "search/task_scheduler.h"
#include "tessel_test.h"

using namespace tessel::search;

class TestTaskScheduler : public QObject {
  Q_OBJECT

  // Runs `rounds` decisions; task i's best after its k-th round is curve(i, k).
  static std::vector<int> simulate(GradientTaskScheduler& s, int rounds,
                                   const std::function<double(size_t, int)>& curve) {
    std::vector<int> order;
    for (int r = 0; r < rounds; ++r) {
      int i = s.next();
      if (i < 0) break;
      order.push_back(i);
      s.report(size_t(i), curve(size_t(i), s.rounds()[size_t(i)] + 1));
    }
    return order;
  }

 private slots:
  void warmsUpRoundRobin() {
    GradientTaskScheduler s({1, 1, 1}, {1e9, 1e9, 1e9}, {"a", "b", "c"});
    std::vector<int> order = simulate(s, 3, [](size_t, int) { return 1e-3; });
    QCOMPARE(order, (std::vector<int>{0, 1, 2}));
  }

  void moreTrialsToTheTaskWithMostToGain() {
    // Task 0 starts at 20 ms and gains 1 ms a round down to 5 ms; task 1 is
    // stuck at 5 ms; same weights: the end-to-end estimate falls by tuning 0.
    GradientTaskScheduler s({1, 1}, {1e9, 1e9}, {"a", "b"}, {0.2, 2, 3, 0});
    simulate(s, 20, [](size_t i, int k) { return i == 0 ? std::max(5e-3, 20e-3 - 1e-3 * k) : 5e-3; });
    // (Round robin would give 10 and 10.)
    QVERIFY2(2 * s.rounds()[0] > 3 * s.rounds()[1],
             qPrintable(QString("rounds %1 vs %2").arg(s.rounds()[0]).arg(s.rounds()[1])));
  }

  void weightsCount() {
    // Two identical tasks, one appearing 10 times in the model.
    GradientTaskScheduler s({1, 10}, {1e9, 1e9}, {"a", "b"}, {0.2, 2, 3, 0});
    simulate(s, 30, [](size_t, int k) { return 10e-3 / std::sqrt(double(k)); });
    QVERIFY2(s.rounds()[1] > 2 * s.rounds()[0],
             qPrintable(QString("rounds %1 vs %2").arg(s.rounds()[0]).arg(s.rounds()[1])));
  }

  void similarTasksBoundEachOther() {
    // Tasks 0 and 1 are alike (tag "conv"); 0 already runs at 100 GFLOP/s, 1 at
    // 10: task 1 has far more to gain than its own flat history says.
    GradientTaskScheduler s({1, 1, 1}, {1e9, 1e9, 1e9}, {"conv", "conv", "other"}, {0.2, 2, 3, 0});
    simulate(s, 3, [](size_t i, int) { return i == 0 ? 10e-3 : i == 1 ? 100e-3 : 20e-3; });
    QCOMPARE(s.next(), 1);
  }

  void earlyStoppingEndsStalledTasks() {
    GradientTaskScheduler s({1, 1}, {1e9, 1e9}, {"a", "b"}, {0.2, 2, 3, 4});
    std::vector<int> order = simulate(s, 40, [](size_t, int) { return 1e-3; });
    QCOMPARE(s.next(), -1);           // both stalled
    QCOMPARE(int(order.size()), 10);  // 1 warm-up + 4 stalled rounds each
    QCOMPARE(s.objective(), 2e-3);
  }

  void tasksWithoutAValidProgramComeFirst() {
    GradientTaskScheduler s({1, 1}, {1e9, 1e9}, {"a", "b"});
    s.report(0, 1e-3);
    s.report(1, std::numeric_limits<double>::infinity());
    QCOMPARE(s.next(), 1);
    QVERIFY(std::isinf(s.objective()));
  }
};

QTEST_APPLESS_MAIN(TestTaskScheduler)
#include "test_task_scheduler.moc"
