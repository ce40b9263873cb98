// The task tuner's rounds with real builds and the real worker: a round never
// measures past the budget, a space that runs dry ends the task at once, and
// each record says what the scoring model knew.
#include <QtTest>

#include "search/search_registry.h"
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

  // Each record says what state the scoring model was in: the first round's
  // scores came from a model that had learned nothing, the next from one
  // that had learned the first round; random search scores nothing.
  void recordsSayWhatTheModelKnewWhenItScored() {
    task::SearchTask task = task::makeOperatorTask("matmul", {32, 24, 16}, tessel::target::Target::host());
    search::TuneOptions o = smallTuning(16, 8);
    o.search = search::defaultSearch();
    search::TaskTuner guided(task, o);
    QCOMPARE(guided.runRound(), 8);
    QCOMPARE(guided.runRound(), 8);
    const std::vector<search::TuneRecord>& r = guided.result().records;
    QCOMPARE(r.size(), size_t(16));
    for (size_t i = 0; i < r.size(); ++i) {
      QVERIFY(std::isfinite(r[i].predicted));
      QCOMPARE(r[i].modelTrainedOn, int64_t(i < 8 ? 0 : 8));
      QVERIFY(!r[i].modelPretrained);
    }
    search::TaskTuner random(task, smallTuning(4, 4));
    QCOMPARE(random.runRound(), 4);
    for (const search::TuneRecord& rec : random.result().records)
      QCOMPARE(rec.modelTrainedOn, int64_t(-1));
  }
};

QTEST_GUILESS_MAIN(TestTuner)
#include "test_tuner.moc"
