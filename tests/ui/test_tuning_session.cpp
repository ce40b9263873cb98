// The studio's tuning adapter: a real tuning of a small model on its worker
// thread, signals arriving on the UI thread, which never blocks; pause,
// resume and stop; records in a real database.
#include <sqlite3.h>

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>

#include "tessel_test.h"
#include "ui/tuning_session.h"
#include "ui_thread_gaps.h"

using tessel::ui::TuningRequest;
using tessel::ui::TuningSession;
using tessel::ui::test::UiThreadGaps;

namespace {

TuningRequest smallRequest(const QString& db, int trials) {
  TuningRequest r;
  r.config.model = "tiny_cnn";
  r.database = db;
  r.config.search = "random";
  r.config.costModel = "random";
  r.config.trials = trials;
  r.config.batch = 4;
  r.config.workerPath = TESSEL_WORKER_PATH;
  return r;
}

// An integer a query on the database gives (-1 if it cannot be read).
int scalar(const QString& db, const char* sql) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_stmt* st = nullptr;
  int n = -1;
  if (sqlite3_prepare_v2(raw, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return n;
}

// The text a query on the database gives ("" if it cannot be read).
QString text(const QString& db, const char* sql) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return {};
  sqlite3_stmt* st = nullptr;
  QString out;
  if (sqlite3_prepare_v2(raw, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    out = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return out;
}

int records(const QString& db) {
  return scalar(db, "SELECT count(*) FROM records");
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
    UiThreadGaps gaps;  // how long the UI thread is ever kept from its events
    gaps.start();
    QVERIFY(session.start(smallRequest(db, 24)));
    QVERIFY(!session.start(smallRequest(db, 24)));  // one at a time
    QVERIFY(done.wait(240000));
    gaps.stop();
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(tasks.count(), 1);
    QCOMPARE(tasks.at(0).at(0).value<QVector<tessel::ui::TaskInfo>>().size(), 5);
    QVERIFY(rounds.count() >= 5);
    QVERIFY(programs.count() >= 5);
    QCOMPARE(rounds.last().at(4).toInt(), 24);
    QVERIFY(std::isfinite(rounds.last().at(3).toDouble()));  // every task has a valid program
    QCOMPARE(records(db), 24);
    qInfo("longest UI-thread gap: %lld ms (%lld ms by the wall clock)", gaps.worstMs(), gaps.worstWallMs());
    QVERIFY2(gaps.worstMs() < 100, qPrintable(QString("the UI thread was blocked for %1 ms").arg(gaps.worstMs())));
  }

  // The studio tunes through the same service as `tessel tune`: its session
  // carries the same config fields, the seed and population included.
  void studioAndCliSessionsHaveTheSameConfig() {
    QTemporaryDir dir;
    const QString db = dir.filePath("config.db");
    TuningSession session;
    QSignalSpy done(&session, &TuningSession::finished);
    QVERIFY(session.start(smallRequest(db, 5)));
    QVERIFY(done.wait(240000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QProcess cli;
    cli.start(TESSEL_CLI_PATH, {"tune", "tiny_cnn", "--trials", "5", "--batch", "1", "--search", "random",
                                "--cost-model", "random", "--db", db, "--json"});
    QVERIFY(cli.waitForFinished(240000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    const QJsonObject studio =
        QJsonDocument::fromJson(text(db, "SELECT config FROM sessions WHERE id = 1").toUtf8()).object();
    const QJsonObject tune =
        QJsonDocument::fromJson(text(db, "SELECT config FROM sessions WHERE id = 2").toUtf8()).object();
    QCOMPARE(studio["command"].toString(), QString("studio"));
    QCOMPARE(tune["command"].toString(), QString("tune"));
    QCOMPARE(studio.keys(), tune.keys());
    for (const char* field : {"seed", "population", "batch", "cache_flush"})
      QVERIFY2(studio.contains(field), field);
    QCOMPARE(text(db, "SELECT status FROM sessions WHERE id = 1"), QString("finished"));
  }

  // Pause, resume and stop from the UI thread in a tight loop, landing at
  // every moment of a round (search, compilers, the kernel being measured,
  // the wait between rounds): the tuning never hangs, a pause is never lost,
  // and a stop always ends it. Then aimed at the two windows a race needs:
  // a resume while the tuning thread is about to wait, a pause while it is
  // about to start a round.
  void pauseResumeStopInATightLoopNeverHang() {
    using Window = TuningSession::RaceWindow;
    QTemporaryDir dir;
    const QString db = dir.filePath("race.db");
    TuningSession session;
    std::atomic<int> beforeWait{0}, beforeGoingOn{0};
    std::atomic<bool> linger{false};
    session.setRaceWindowForTesting([&](Window w) {
      ++(w == Window::BeforeWait ? beforeWait : beforeGoingOn);
      if (linger) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
    // Spins the UI thread's event loop until `counter` passes `than`.
    auto waitPast = [](const std::atomic<int>& counter, int than) {
      QElapsedTimer t;
      t.start();
      while (counter <= than && t.elapsed() < 60000)
        QTest::qWait(1);
      return counter > than;
    };
    QSignalSpy rounds(&session, &TuningSession::roundFinished);
    QSignalSpy done(&session, &TuningSession::finished);
    QVERIFY(session.start(smallRequest(db, 100000)));
    QVERIFY(rounds.wait(120000));
    std::mt19937 rng(7);
    for (int i = 0; i < 600; ++i) {
      session.pause();
      if (rng() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
      session.resume();
      if (rng() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 3000));
      if (rng() % 4 == 0) QCoreApplication::processEvents();
    }
    QVERIFY2(rounds.wait(60000), "no round after the pause/resume loop");

    linger = true;
    // A resume while the tuning thread is about to wait is not lost.
    for (int i = 0; i < 10; ++i) {
      const int seen = beforeWait;
      session.pause();
      QVERIFY2(waitPast(beforeWait, seen), "the paused tuning never came to wait");
      session.resume();  // lands inside the window
    }
    QVERIFY2(rounds.wait(60000), "no round after resuming: a lost wake-up");
    // A pause while the tuning thread is about to start a round is not lost:
    // that round is abandoned, none ends while paused.
    for (int i = 0; i < 3; ++i) {
      const int seen = beforeGoingOn;
      QVERIFY2(waitPast(beforeGoingOn, seen), "no round started");
      session.pause();    // lands inside the window
      QTest::qWait(200);  // a round that ended before the pause may still be delivered
      const int atPause = rounds.count();
      QTest::qWait(3000);
      QVERIFY2(rounds.count() == atPause, "a round ended while paused: the pause was lost");
      session.resume();
    }
    linger = false;
    QVERIFY(rounds.wait(60000));
    session.stop();
    QVERIFY(done.wait(10000));
    QVERIFY(!session.isRunning());
    QVERIFY(done.at(0).at(1).toString().contains("stopped"));
  }

  // Start and stop (sometimes paused in between) hundreds of times: every
  // run ends, each session is marked stopped or finished, never left running.
  void startAndStopHundredsOfTimes() {
    QTemporaryDir dir;
    const QString db = dir.filePath("cycles.db");
    TuningSession session;
    QSignalSpy done(&session, &TuningSession::finished);
    std::mt19937 rng(11);
    constexpr int kCycles = 200;
    for (int i = 0; i < kCycles; ++i) {
      QVERIFY(session.start(smallRequest(db, 100000)));
      if (rng() % 2) QTest::qWait(int(rng() % 20));
      if (rng() % 3 == 0) session.pause();
      session.stop();
      QVERIFY2(done.wait(20000), qPrintable(QString("cycle %1 did not end").arg(i)));
      QVERIFY(!session.isRunning());
    }
    QCOMPARE(done.count(), kCycles);
    QCOMPARE(scalar(db, "SELECT count(*) FROM sessions WHERE status = 'running'"), 0);
  }

  // Pause and stop abandon the round in flight (compilers and the kernel
  // being measured are killed), so both take effect within a second, and
  // nothing of an abandoned round reaches the database.
  // A kernel that crashes its worker: the crash is logged, stored as a
  // runtime error record, and tuning goes on with a new worker.
  void aCrashingKernelIsLoggedAndTuningGoesOn() {
    QTemporaryDir dir;
    // The first worker reads the start of its first request and dies of
    // SIGSEGV, as a kernel that crashes does; the next ones are real.
    const QString script = dir.filePath("crashing-worker.sh");
    {
      QFile f(script);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QString("#!/bin/sh\n"
                      "if [ ! -e '%1' ]; then\n"
                      "  : > '%1'\n"
                      "  eval \"head -c 4 <&$2 >/dev/null\"\n"
                      "  kill -SEGV $$\n"
                      "fi\n"
                      "exec '%2' \"$@\"\n")
                  .arg(dir.filePath("crashed"), TESSEL_WORKER_PATH)
                  .toUtf8());
      f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    }
    const QString db = dir.filePath("crash.db");
    TuningRequest request = smallRequest(db, 12);
    request.config.workerPath = script.toStdString();
    TuningSession session;
    QSignalSpy log(&session, &TuningSession::logMessage);
    QSignalSpy done(&session, &TuningSession::finished);
    QVERIFY(session.start(request));
    QVERIFY(done.wait(240000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QVERIFY(QFile::exists(dir.filePath("crashed")));
    QStringList lines;
    for (const QList<QVariant>& m : log)
      lines << m.at(0).toString();
    const QString text = lines.join('\n');
    QVERIFY2(text.contains("kernel crashed the worker") && text.contains("SIGSEGV"), qPrintable(text));
    // One runtime error (code 4) stored; the other programs measured.
    QCOMPARE(scalar(db, "SELECT count(*) FROM records WHERE error_code = 4 AND error_msg LIKE '%SIGSEGV%'"), 1);
    QVERIFY(scalar(db, "SELECT count(cost) FROM records") >= 10);
    QVERIFY(records(db) >= 12);
  }

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
#if defined(__SANITIZE_THREAD__)
    const qint64 boundMs = 5000;  // TSan slows everything five- to fifteen-fold
#else
    const qint64 boundMs = 1000;
#endif
    QVERIFY2(stopMs < boundMs, qPrintable(QString("stop took %1 ms").arg(stopMs)));
    QVERIFY(done.at(0).at(1).toString().contains("stopped"));
    QCOMPARE(records(db), rounds.last().at(4).toInt());
    QVERIFY(records(db) < 400 && records(db) > 0);
    QVERIFY(!session.isRunning());
  }
};

QTEST_MAIN(TestTuningSession)
#include "test_tuning_session.moc"
