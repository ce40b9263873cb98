// A session's history rebuilt from a real database: rounds, the end-to-end
// estimate, the programs of the scatter, each task's best, the objective
// curve that sessions are compared by, two sessions compared task by task,
// and stored timestamps.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "store/database.h"
#include "store/program_listing.h"
#include "store/record_store.h"
#include "store/session_comparison.h"
#include "store/session_history.h"
#include "store/session_store.h"
#include "tessel_test.h"

using namespace tessel;
using store::Database;

namespace {

store::TaskRow taskNamed(const std::string& key) {
  store::TaskRow t;
  t.key = key;
  t.op = "fused_" + key;
  t.shape = {4};
  t.compute = "out[i] = in[i]";
  t.flops = 1e6;
  return t;
}

// A record of `seconds` (NaN: a failed one) with a distinct program.
store::RecordRow record(int64_t task, int64_t session, double seconds, double predicted) {
  static int program = 0;
  store::RecordRow r;
  r.taskId = task;
  r.sessionId = session;
  r.steps = "[[\"SP\",0,0,[" + std::to_string(++program) + "]]]";
  r.decisions = "{\"sketch\":0,\"choices\":{\"p\":" + std::to_string(program) + "}}";
  if (std::isfinite(seconds)) {
    r.costs = {seconds};
  } else {
    r.errorCode = 4;
    r.errorMessage = "runtime error";
  }
  r.predicted = predicted;
  r.costModel = "xgb";
  return r;
}

bool same(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max(1.0, std::fabs(b));
}

}  // namespace

class TestSessionHistory : public QObject {
  Q_OBJECT

 private slots:
  void modelSessionReplaysRoundsAndEstimate() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t a = db->ensureTask(taskNamed("a")), b = db->ensureTask(taskNamed("b"));
    const int64_t model = db->ensureModel("m", "m");
    db->setModelTask(model, a, 2);
    db->setModelTask(model, b, 1);
    const int64_t s = db->sessions().start("model", 0, model, R"({"command":"tune","fusion":"rule"})", 6);
    const double nan = std::nan("");
    // Batches as a task scheduler stores them: a, b, a, b.
    db->records().add({record(a, s, 3e-3, 0.1), record(a, s, nan, 0.2), record(a, s, 2e-3, 0.3)});
    db->records().add({record(b, s, 5e-3, 0.4)});
    db->records().add({record(a, s, 1e-3, 0.9)});
    db->records().add({record(b, s, nan, nan)});
    // Another session's records are not this one's.
    const int64_t other = db->sessions().start("model", 0, model, "{}", 1);
    db->records().add({record(a, other, 1e-6, 1)});

    const store::SessionHistory h = store::loadSessionHistory(*db, s);
    QCOMPARE(h.session.id, s);
    QCOMPARE(h.fusion, std::string("rule"));
    QCOMPARE(h.tasks.size(), size_t(2));
    QCOMPARE(h.tasks[0].task.key, std::string("a"));
    QCOMPARE(h.tasks[0].weight, 2.0);
    QCOMPARE(h.tasks[1].weight, 1.0);
    QCOMPARE(h.tasks[0].trials, 4);
    QCOMPARE(h.tasks[1].trials, 2);
    QVERIFY(h.tasks[0].best && same(h.tasks[0].best->medianCost(), 1e-3));
    QVERIFY(h.tasks[1].best && same(h.tasks[1].best->medianCost(), 5e-3));
    QCOMPARE(h.taskIndex("b"), 1);
    QCOMPARE(h.taskIndex("c"), -1);

    QCOMPARE(h.rounds.size(), size_t(4));
    const int taskOf[] = {0, 1, 0, 1}, taskTrials[] = {3, 1, 4, 2}, total[] = {3, 4, 5, 6};
    const double bestOf[] = {2e-3, 5e-3, 1e-3, 5e-3};
    for (size_t i = 0; i < 4; ++i) {
      QCOMPARE(int(h.rounds[i].task), taskOf[i]);
      QCOMPARE(h.rounds[i].taskTrials, taskTrials[i]);
      QCOMPARE(h.rounds[i].totalTrials, total[i]);
      QVERIFY(same(h.rounds[i].bestSeconds, bestOf[i]));
      QVERIFY(h.rounds[i].elapsedSeconds >= 0 && h.rounds[i].elapsedSeconds < 60);
      if (i) QVERIFY(h.rounds[i].elapsedSeconds >= h.rounds[i - 1].elapsedSeconds);
    }
    // No estimate until every task has a valid program; then 2 x a + b.
    QVERIFY(std::isnan(h.rounds[0].estimateSeconds));
    QVERIFY(same(h.rounds[1].estimateSeconds, 2 * 2e-3 + 5e-3));
    QVERIFY(same(h.rounds[2].estimateSeconds, 2 * 1e-3 + 5e-3));
    QVERIFY(same(h.rounds[3].estimateSeconds, 2 * 1e-3 + 5e-3));

    QCOMPARE(h.programs.size(), size_t(6));
    QVERIFY(std::isnan(h.programs[1].seconds));
    QVERIFY(same(h.programs[4].seconds, 1e-3));
    QCOMPARE(h.programs[4].predicted, 0.9);
    QVERIFY(std::isnan(h.programs[5].predicted));

    const auto curve = h.objectiveCurve();
    QCOMPARE(curve.size(), size_t(2));
    QCOMPARE(curve[0].first, 4);
    QVERIFY(same(curve[0].second, 9e-3));
    QCOMPARE(curve[1].first, 5);
    QVERIFY(same(curve[1].second, 7e-3));
  }

  void taskSessionCurveIsItsBest() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t t = db->ensureTask(taskNamed("t"));
    const int64_t s = db->sessions().start("task", t, 0, "{}", 3);
    db->records().add({record(t, s, 4e-3, 1), record(t, s, 6e-3, 1)});
    db->records().add({record(t, s, 3e-3, 1)});
    const store::SessionHistory h = store::loadSessionHistory(*db, s);
    QCOMPARE(h.session.subject, std::string("t"));
    QCOMPARE(h.tasks.size(), size_t(1));
    QCOMPARE(h.tasks[0].weight, 1.0);
    // Consecutive records of one task are one round, whatever the batches.
    QCOMPARE(h.rounds.size(), size_t(1));
    QCOMPARE(h.rounds[0].taskTrials, 3);
    const auto curve = h.objectiveCurve();
    QCOMPARE(curve.size(), size_t(1));
    QCOMPARE(curve[0].first, 3);
    QVERIFY(same(curve[0].second, 3e-3));
  }

  // A session that records its model's task count has no estimate while a
  // task of the model has no program, even if every task it measured has.
  void estimateWaitsForEveryTaskOfTheModel() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t a = db->ensureTask(taskNamed("a")), b = db->ensureTask(taskNamed("b"));
    const int64_t model = db->ensureModel("m", "m");
    db->setModelTask(model, a, 1);
    db->setModelTask(model, b, 1);
    const int64_t s = db->sessions().start("model", 0, model, R"({"tasks":3})", 4);
    db->records().add({record(a, s, 1e-3, 1)});
    db->records().add({record(b, s, 2e-3, 1)});
    const store::SessionHistory h = store::loadSessionHistory(*db, s);
    QCOMPARE(h.modelTasks, size_t(3));
    QCOMPARE(h.rounds.size(), size_t(2));
    for (const store::SessionRound& r : h.rounds)
      QVERIFY(std::isnan(r.estimateSeconds));
    QVERIFY(h.objectiveCurve().empty());
  }

  void emptyAndMissingSessions() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t t = db->ensureTask(taskNamed("t"));
    const int64_t s = db->sessions().start("task", t, 0, "not json", 3);
    const store::SessionHistory h = store::loadSessionHistory(*db, s);
    QVERIFY(h.tasks.empty() && h.rounds.empty() && h.objectiveCurve().empty());
    QVERIFY(std::isnan(h.session.bestCost));
    try {
      store::loadSessionHistory(*db, 999);
      QFAIL("a missing session must throw");
    } catch (const store::StoreError& e) {
      QVERIFY2(std::string(e.what()).find("no session 999") != std::string::npos, e.what());
    }
  }

  // Two sessions of one model, task by task: the task where B costs the
  // model most comes first, a task one session never measured last.
  void sessionsCompareTaskByTask() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t a = db->ensureTask(taskNamed("a")), b = db->ensureTask(taskNamed("b"));
    const int64_t c = db->ensureTask(taskNamed("c"));
    const int64_t model = db->ensureModel("m", "m");
    db->setModelTask(model, a, 4);
    db->setModelTask(model, b, 1);
    db->setModelTask(model, c, 1);
    const int64_t first = db->sessions().start("model", 0, model, "{}", 3);
    db->records().add({record(a, first, 2e-3, 1)});
    db->records().add({record(b, first, 4e-3, 1)});
    db->records().add({record(c, first, 1e-3, 1)});
    const int64_t second = db->sessions().start("model", 0, model, "{}", 3);
    db->records().add({record(a, second, 1e-3, 1), record(a, second, 3e-3, 1)});
    db->records().add({record(b, second, 6e-3, 1)});

    const store::SessionComparison cmp =
        store::compareSessions(store::loadSessionHistory(*db, first), store::loadSessionHistory(*db, second));
    QCOMPARE(cmp.tasks.size(), size_t(3));
    // a: 4 x (1 - 2) ms = -4 ms; b: 1 x (6 - 4) ms = +2 ms; c: only in the first.
    QCOMPARE(cmp.tasks[0].task.key, std::string("a"));
    QVERIFY(same(cmp.tasks[0].weightedDifference(), -4e-3));
    QVERIFY(same(cmp.tasks[0].ratio(), 0.5));
    QCOMPARE(cmp.tasks[0].trialsA, 1);
    QCOMPARE(cmp.tasks[0].trialsB, 2);
    QCOMPARE(cmp.tasks[1].task.key, std::string("b"));
    QVERIFY(same(cmp.tasks[1].ratio(), 1.5));
    QCOMPARE(cmp.tasks[2].task.key, std::string("c"));
    QVERIFY(std::isnan(cmp.tasks[2].secondsB) && std::isnan(cmp.tasks[2].ratio()));
    QCOMPARE(cmp.tasks[2].trialsB, 0);
    // The heat: each task's share of what the differences cost.
    QVERIFY(same(cmp.differenceShare("a"), 4.0 / 6));
    QVERIFY(same(cmp.differenceShare("b"), 2.0 / 6));
    QVERIFY(std::isnan(cmp.differenceShare("c")));
    // The objectives: each estimate over the tasks it measured (no task count recorded).
    QVERIFY(same(cmp.objectiveA, 4 * 2e-3 + 4e-3 + 1e-3));
    QVERIFY(same(cmp.objectiveB, 4 * 1e-3 + 6e-3));
  }

  // The inspector's listing: one session's programs of one task, numbered
  // as measured (failed ones too), ranked by score and by time.
  void programsAreListedWithTheirRanks() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t a = db->ensureTask(taskNamed("a")), b = db->ensureTask(taskNamed("b"));
    const int64_t model = db->ensureModel("m", "m");
    const int64_t other = db->sessions().start("model", 0, model, "{}", 1);
    db->records().add({record(a, other, 1e-4, 9)});
    const int64_t s = db->sessions().start("model", 0, model, "{}", 5);
    const double nan = std::nan("");
    db->records().add({record(a, s, 3e-3, 0.5), record(b, s, 1e-3, 1), record(a, s, nan, 0.9)});
    db->records().add({record(a, s, 1e-3, 0.7), record(a, s, 2e-3, nan), record(a, s, 1e-3, 0.7)});
    const store::ProgramListing l = store::listPrograms(*db, "a", "cpu", s);
    QCOMPARE(l.task.id, a);
    QCOMPARE(l.programs.size(), size_t(5));  // not b's, not the other session's
    QCOMPARE(l.measured, 4);
    QCOMPARE(l.scored, 4);
    QCOMPARE(l.fastest, 2);  // 1 ms twice: the older
    const int scoreRank[] = {4, 1, 2, 0, 2}, timeRank[] = {4, 0, 1, 3, 1};
    for (int i = 0; i < 5; ++i) {
      QCOMPARE(l.programs[size_t(i)].ordinal, i);
      QCOMPARE(l.programs[size_t(i)].scoreRank, scoreRank[i]);
      QCOMPARE(l.programs[size_t(i)].timeRank, timeRank[i]);
    }
    QCOMPARE(l.programs[1].record.errorMessage, std::string("runtime error"));
    try {
      store::listPrograms(*db, "nope", "cpu", s);
      QFAIL("an unknown task was listed");
    } catch (const store::StoreError& e) {
      QVERIFY2(QString(e.what()).contains("no task nope"), e.what());
    }
  }

  // Scoring rounds follow the task and the model's state; an untrained
  // model's scores are said to be so.
  void programsKnowTheirScoringRound() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("h.db").toStdString(), store::OpenMode::ReadWrite);
    const int64_t a = db->ensureTask(taskNamed("a")), b = db->ensureTask(taskNamed("b"));
    const int64_t s = db->sessions().start("model", 0, db->ensureModel("m", "m"), "{}", 6);
    std::vector<store::RecordRow> rows = {record(a, s, 1e-3, 1), record(a, s, 2e-3, 2), record(a, s, 3e-3, 3),
                                          record(a, s, 4e-3, 4), record(b, s, 5e-3, 5), record(b, s, 6e-3, 6)};
    const int64_t trainedOn[] = {0, 0, 2, 2, 4, 4};
    for (size_t i = 0; i < rows.size(); ++i)
      rows[i].modelTrainedOn = trainedOn[i];
    db->records().add(rows);
    const store::SessionHistory h = store::loadSessionHistory(*db, s);
    QCOMPARE(h.programs.size(), size_t(6));
    const int round[] = {0, 0, 1, 1, 2, 2};
    for (size_t i = 0; i < 6; ++i) {
      QCOMPARE(h.programs[i].scoringRound, round[i]);
      QCOMPARE(h.programs[i].untrained, i < 2);
    }
    QCOMPARE(h.rounds.size(), size_t(2));  // the task rounds: a, then b
  }

  void storedTimestampsAreRead() {
    QCOMPARE(store::secondsBetween("2026-11-23T18:00:00.000Z", "2026-11-23T18:01:30.500Z"), 90.5);
    QCOMPARE(store::secondsBetween("2026-12-31T23:59:59.000Z", "2027-01-01T00:00:01.250Z"), 2.25);
    QVERIFY(std::isnan(store::secondsBetween("yesterday", "2026-11-23T18:00:00.000Z")));
  }
};

QTEST_GUILESS_MAIN(TestSessionHistory)
#include "test_session_history.moc"
