// The task tuner's rounds with real builds and the real worker: a round never
// measures past the budget, and a space that runs dry ends the task at once.
#include <QtTest>

#include "search/tuner.h"
#include "small_tuning.h"
#include "task/search_task.h"
#include "tessel_test.h"

using namespace tessel;
using testing::smallTuning;

class TestTuner : public QObject {
  Q_OBJECT

 private slots:
  // ReLU over 1x4 floats has one program (nothing to tile): the first round
  // comes back short, and that alone says the space is used up, so the model
  // tuner never has to offer the task a round it cannot fill.
  void aShortRoundMeansExhausted() {
    task::SearchTask task = task::makeOperatorTask("relu", {1, 4}, tessel::target::Target::host());
    search::TaskTuner tuner(task, smallTuning(500, 16));
    const int measured = tuner.runRound();
    QVERIFY2(measured >= 1 && measured < 16, qPrintable(QString::number(measured)));
    QVERIFY(tuner.exhausted());
    QVERIFY(tuner.done());
    QVERIFY(tuner.result().exhausted);
    QCOMPARE(tuner.runRound(), 0);
    QCOMPARE(tuner.result().trials, measured);
  }

  void aFullRoundIsNot() {
    task::SearchTask task = task::makeOperatorTask("matmul", {32, 24, 16}, tessel::target::Target::host());
    search::TaskTuner tuner(task, smallTuning(12, 8));
    QCOMPARE(tuner.runRound(), 8);
    QVERIFY(!tuner.exhausted());
    QCOMPARE(tuner.runRound(), 4);  // the budget's remainder, not a short space
    QVERIFY(!tuner.exhausted());
    QVERIFY(tuner.done());
    QCOMPARE(tuner.result().trials, 12);
  }
};

QTEST_GUILESS_MAIN(TestTuner)
#include "test_tuner.moc"
