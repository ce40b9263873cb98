// The studio's tuning adapter: a real tuning of a small model on its worker
// thread, signals arriving on the UI thread, which never blocks; pause,
// resume and stop; records in a real database.
#include <sqlite3.h>

#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include "ui/tuning_session.h"

using tessel::ui::TuningRequest;
using tessel::ui::TuningSession;

namespace {

TuningRequest smallRequest(const QString& db, int trials) {
  TuningRequest r;
  r.model = "tiny_cnn";
  r.database = db;
  r.search = "random";
  r.costModel = "random";
  r.trials = trials;
  r.batch = 4;
  r.workerPath = TESSEL_WORKER_PATH;
  return r;
}

int records(const QString& db) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_stmt* st = nullptr;
  int n = -1;
  if (sqlite3_prepare_v2(raw, "SELECT count(*) FROM records", -1, &st, nullptr) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return n;
}

}  // namespace

class TestTuningSession : public QObject {
  Q_OBJECT

 private slots:
  void tunesOnAWorkerThreadWithoutBlockingTheUi() {
    QTemporaryDir dir;
    const QString db = dir.filePath("studio.db");
    TuningSession session;
    QSignalSpy tasks(&session, &TuningSession::tasksReady);
    QSignalSpy rounds(&session, &TuningSession::roundFinished);
    QSignalSpy programs(&session, &TuningSession::programsMeasured);
    QSignalSpy done(&session, &TuningSession::finished);
    // A 10 ms timer on the UI thread: the longest gap between its ticks is how
    // long the UI thread was ever blocked.
    QElapsedTimer clock;
    qint64 last = 0, worst = 0;
    QTimer tick;
    QObject::connect(&tick, &QTimer::timeout, [&] {
      qint64 now = clock.elapsed();
      worst = std::max(worst, now - last);
      last = now;
    });
    clock.start();
    tick.start(10);
    QVERIFY(session.start(smallRequest(db, 24)));
    QVERIFY(!session.start(smallRequest(db, 24)));  // one at a time
    QVERIFY(done.wait(240000));
    tick.stop();
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(tasks.count(), 1);
    QCOMPARE(tasks.at(0).at(0).value<QVector<tessel::ui::TaskInfo>>().size(), 5);
    QVERIFY(rounds.count() >= 5);
    QVERIFY(programs.count() >= 5);
    QCOMPARE(rounds.last().at(4).toInt(), 24);
    QVERIFY(std::isfinite(rounds.last().at(3).toDouble()));  // every task has a valid program
    QCOMPARE(records(db), 24);
    qInfo("longest UI-thread gap: %lld ms", worst);
    QVERIFY2(worst < 100, qPrintable(QString("the UI thread was blocked for %1 ms").arg(worst)));
  }

  // Pause and stop abandon the round in flight (compilers and the kernel
  // being measured are killed), so both take effect within a second, and
  // nothing of an abandoned round reaches the database.
  void pauseResumeAndStop() {
    QTemporaryDir dir;
    const QString db = dir.filePath("control.db");
    TuningSession session;
    QSignalSpy rounds(&session, &TuningSession::roundFinished);
    QSignalSpy done(&session, &TuningSession::finished);
    QVERIFY(session.start(smallRequest(db, 400)));
    QVERIFY(rounds.wait(120000));
    QTest::qWait(300);  // the next round is now being searched or built
    session.pause();
    QVERIFY(session.isPaused());
    QTest::qWait(1000);
    const int atPause = rounds.count();
    const int recordsAtPause = records(db);
    QTest::qWait(3000);
    QCOMPARE(rounds.count(), atPause);  // paused: no new round
    QCOMPARE(records(db), recordsAtPause);
    QCOMPARE(records(db), rounds.last().at(4).toInt());  // only whole rounds are stored

    session.resume();
    QVERIFY(rounds.wait(120000));
    QTest::qWait(300);
    QElapsedTimer t;
    t.start();
    session.stop();
    QVERIFY(done.wait(20000));
    const qint64 stopMs = t.elapsed();
    qInfo("stopped %lld ms after stop()", stopMs);
    QVERIFY2(stopMs < 1000, qPrintable(QString("stop took %1 ms").arg(stopMs)));
    QVERIFY(done.at(0).at(1).toString().contains("stopped"));
    QCOMPARE(records(db), rounds.last().at(4).toInt());
    QVERIFY(records(db) < 400 && records(db) > 0);
    QVERIFY(!session.isRunning());
  }
};

QTEST_MAIN(TestTuningSession)
#include "test_tuning_session.moc"
