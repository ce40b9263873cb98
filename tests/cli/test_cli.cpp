// The tessel CLI as a user runs it: a real process, its exit code, stderr
// messages and the JSON it prints.
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "commands.h"
#include "cost/cost_model_registry.h"
#include "cost/learned/learned_models.h"
#include "graph/zoo.h"
#include "measure/cuda_driver.h"
#include "runtime/numpy_files.h"
#include "target/target.h"

namespace {

struct Run {
  int code;
  QString out, err;
};

// Runs without --db write here, never into the user's own database.
QTemporaryDir& scratch() {
  static QTemporaryDir dir;
  return dir;
}

// tmpdir: the child's TMPDIR (default: the system's).
void isolate(QProcess& p, const QString& tmpdir = {}) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("TESSEL_DB", scratch().filePath("default.db"));
  if (!tmpdir.isEmpty()) env.insert("TMPDIR", tmpdir);
  p.setProcessEnvironment(env);
}

Run runCli(const QStringList& args, int timeoutMs = 120000) {
  QProcess p;
  isolate(p);
  p.start(TESSEL_CLI_PATH, args);
  if (!p.waitForFinished(timeoutMs)) {
    p.kill();
    p.waitForFinished();
    return {-1, {}, "timed out"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

// The first column of the first row a query gives ("" if none or unreadable).
QString query(const QString& db, const char* sql) {
  sqlite3* raw = nullptr;
  QString out;
  if (sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_busy_timeout(raw, 2000);
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(raw, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      out = QString::fromUtf8(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
  }
  sqlite3_close(raw);
  return out;
}

// A process as /proc/PID/stat tells it.
struct ProcStat {
  QString comm;
  char state = 0;
  int ppid = 0, pgrp = 0;
};
std::map<int, ProcStat> processes() {
  std::map<int, ProcStat> out;
  for (const QString& name : QDir("/proc").entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool isPid = false;
    const int pid = name.toInt(&isPid);
    QFile f("/proc/" + name + "/stat");
    if (!isPid || !f.open(QIODevice::ReadOnly)) continue;
    const QByteArray line = f.readAll();
    const int open = line.indexOf('('), close = line.lastIndexOf(')');
    const QList<QByteArray> rest = line.mid(close + 2).split(' ');
    if (open < 0 || close < 0 || rest.size() < 3) continue;
    out[pid] = {QString::fromUtf8(line.mid(open + 1, close - open - 1)), rest[0].at(0), rest[1].toInt(),
                rest[2].toInt()};
  }
  return out;
}

// Starts a tuning, waits until it has stored `records`, sends `signal`, and
// returns how it ended.
Run interrupted(const QStringList& args, const QString& db, int records, int signal, const QString& tmpdir = {}) {
  QProcess p;
  isolate(p, tmpdir);
  p.start(TESSEL_CLI_PATH, args);
  if (!p.waitForStarted()) return {-1, {}, "did not start"};
  QElapsedTimer t;
  t.start();
  while (query(db, "SELECT count(*) FROM records").toInt() < records && t.elapsed() < 120000 &&
         p.state() == QProcess::Running)
    QTest::qWait(50);
  ::kill(pid_t(p.processId()), signal);
  if (!p.waitForFinished(30000)) {
    p.kill();
    p.waitForFinished();
    return {-1, {}, "did not end after the signal"};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT

 private slots:
  // As the tessel binary does: help texts built here list the same models.
  void initTestCase() { tessel::cost::registerLearnedCostModels(); }

  // One version string: the project's, in every executable.
  void versionIsTheProjects() {
    Run cli = runCli({"--version"});
    QCOMPARE(cli.code, 0);
    QCOMPARE(cli.out.trimmed(), QString("tessel " TESSEL_PROJECT_VERSION));
    QProcess worker;
    worker.start(TESSEL_WORKER_PATH, {"--version"});
    QVERIFY(worker.waitForFinished(30000));
    QCOMPARE(QString::fromUtf8(worker.readAllStandardOutput()).trimmed(),
             QString("tessel-worker " TESSEL_PROJECT_VERSION));
  }

  void badInputFailsWithAMessage_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown op") << QStringList{"tune-op", "matmull", "--shape", "8,8,8"} << "unknown op 'matmull'";
    QTest::newRow("malformed shape") << QStringList{"tune-op", "matmul", "--shape", "8,x,8"} << "'x' is not an integer";
    QTest::newRow("empty part") << QStringList{"tune-op", "matmul", "--shape", "8,,8"} << "'' is not an integer";
    QTest::newRow("negative shape") << QStringList{"tune-op", "matmul", "--shape", "8,-8,8"} << "is negative";
    QTest::newRow("zero shape") << QStringList{"tune-op", "matmul", "--shape", "8,0,8"}
                                << "matmul: N (value 2) must be positive, got 0";
    // Zero is a legal padding, and nothing else is (stride, dilation, kernel).
    QTest::newRow("zero stride") << QStringList{"tune-op", "conv2d", "--shape", "1,4,8,8,4,3,3,0,1"}
                                 << "conv2d: stride (value 8) must be positive, got 0";
    QTest::newRow("zero dilation") << QStringList{"tune-op", "depthwise_conv2d", "--shape", "1,4,8,8,3,3,1,0,0"}
                                   << "depthwise_conv2d: dilation (value 9) must be positive, got 0";
    QTest::newRow("zero pool kernel") << QStringList{"tune-op", "max_pool2d", "--shape", "1,4,8,8,0,1,0"}
                                      << "max_pool2d: kernel (value 5) must be positive, got 0";
    QTest::newRow("arity") << QStringList{"tune-op", "matmul", "--shape", "8,8"} << "needs 3 values";
    QTest::newRow("unknown flag") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--bogus"}
                                  << "unknown option --bogus";
    QTest::newRow("missing value") << QStringList{"tune-op", "matmul", "--shape"} << "--shape needs a value";
    QTest::newRow("missing shape") << QStringList{"tune-op", "matmul"} << "missing --shape";
    QTest::newRow("missing op") << QStringList{"tune-op", "--shape", "8,8,8"} << "missing OP";
    QTest::newRow("bad trials") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--trials", "ten"}
                                << "--trials needs an integer";
    QTest::newRow("zero trials") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--trials", "0"}
                                 << "must be between 1";
    QTest::newRow("unknown search") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--search", "genetic"}
                                    << "--search genetic";
    QTest::newRow("unknown target") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--target", "tpu"}
                                    << "--target: unknown target kind 'tpu' (known: cpu, cuda)";
    QTest::newRow("bad target arch") << QStringList{"tune-op", "matmul",   "--shape",
                                                    "8,8,8",   "--target", "cpu -arch=haswell"}
                                     << "unknown cpu arch 'haswell' (known: native, x86-64, x86-64-v2";
    QTest::newRow("bad target threads") << QStringList{"tune", "tiny_cnn", "--target", "cpu -threads=0x2", "--no-db"}
                                        << "-threads=0x2 is not a number from 0 (every core) to 1024";
    QTest::newRow("unknown command") << QStringList{"tune-ops"} << "unknown command 'tune-ops'";
    QTest::newRow("unknown layout") << QStringList{"tune-op",           "conv2d",   "--shape",
                                                   "1,4,8,8,4,3,3,1,1", "--layout", "nchwc"}
                                    << "unknown layout 'nchwc'";
    QTest::newRow("db: missing file") << QStringList{"db", "stats", "--db", "/nonexistent/t.db"}
                                      << "no such database: /nonexistent/t.db";
    QTest::newRow("db: what") << QStringList{"db", "stat"} << "unknown 'db stat'";
    QTest::newRow("export: no subject") << QStringList{"export", "--out", "x"} << "exactly one of --task";
    QTest::newRow("export: format") << QStringList{"export", "--all", "--out", "x", "--format", "xml"}
                                    << "unknown --format xml";
    QTest::newRow("inspect: unknown model") << QStringList{"inspect", "resnet19"} << "unknown model 'resnet19'";
    QTest::newRow("inspect: missing onnx") << QStringList{"inspect", "/nonexistent/m.onnx"} << "/nonexistent/m.onnx";
    QTest::newRow("inspect: fusion") << QStringList{"inspect", "resnet18", "--fusion", "greedy"}
                                     << "unknown --fusion greedy";
    QTest::newRow("tune: no model") << QStringList{"tune"} << "missing MODEL";
    QTest::newRow("run: bad db") << QStringList{"run", "tiny_cnn", "--db", "/nonexistent/x.db"}
                                 << "no such database: /nonexistent/x.db";
    QTest::newRow("no-db with db") << QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--no-db", "--resume"}
                                   << "--no-db cannot be combined";
    // Limits checked at the edge (these once hung or printed negative FLOPs).
    QTest::newRow("dimension beyond the index")
        << QStringList{"tune-op", "matmul", "--shape", "99999999999,1,1"}
        << "dimension 99999999999 is longer than 2147483647, the most Tessel's kernels index";
    QTest::newRow("overflowing dimension") << QStringList{"tune-op", "matmul", "--shape", "4611686018427387904,2,2"}
                                           << "dimension 4611686018427387904 is longer than 2147483647";
    QTest::newRow("tensor beyond the index") << QStringList{"tune-op", "matmul", "--shape", "65536,65536,2"}
                                             << "[65536, 65536]: 4294967296 elements, more than the 2147483647";
    // Only regular files are models.
    const QString folder = scratch().filePath("folder.onnx"), fifo = scratch().filePath("pipe.onnx");
    const QString ptFolder = scratch().filePath("folder.pt");
    QDir().mkpath(folder);
    QDir().mkpath(ptFolder);
    ::mkfifo(fifo.toUtf8().constData(), 0600);
    QTest::newRow("inspect: a device") << QStringList{"inspect", "/dev/zero"}
                                       << "model '/dev/zero' is a character device, not a regular file";
    QTest::newRow("inspect: a folder") << QStringList{"inspect", folder} << "folder.onnx' is a folder, not a file";
    QTest::newRow("inspect: a folder as .pt")
        << QStringList{"inspect", ptFolder} << "folder.pt' is a folder, not a file";
    QTest::newRow("inspect: a FIFO") << QStringList{"inspect", fifo} << "pipe.onnx' is a FIFO, not a regular file";
  }

  void badInputFailsWithAMessage() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    Run r = runCli(args);
    QVERIFY2(r.code > 0, qPrintable(QString("exit code %1").arg(r.code)));
    QVERIFY2(r.err.contains(message), qPrintable("stderr: " + r.err));
    QVERIFY(r.out.isEmpty());
  }

  // pad 0 is how a 1x1 convolution and an unpadded pool are written: tune-op
  // takes it and tunes them (it once refused every 0 in --shape).
  void padZeroIsTuned() {
    for (const QStringList& shape :
         {QStringList{"conv2d", "1,8,6,6,8,1,1,1,0"}, QStringList{"depthwise_conv2d", "1,4,6,6,3,3,1,0"},
          QStringList{"max_pool2d", "1,4,6,6,2,2,0"}, QStringList{"avg_pool2d", "1,4,6,6,2,2,0"}}) {
      Run r = runCli({"tune-op", shape[0], "--shape", shape[1], "--trials", "2", "--batch", "2", "--no-db", "--json"});
      QVERIFY2(r.code == 0, qPrintable(shape.join(' ') + ": " + r.err));
      const QJsonObject out = QJsonDocument::fromJson(r.out.toUtf8()).object();
      QVERIFY2(out["best_ms"].toDouble() > 0, qPrintable(r.out));
    }
  }

  // Ctrl-C and SIGTERM stop a tuning cleanly: the session is marked
  // stopped with what was measured, the user is told how to resume, and the
  // exit status is 128 + the signal. Resuming with nothing left says so.
  void signalsStopATuningCleanly() {
    const QString db = scratch().filePath("signals.db");
    Run r = interrupted({"tune", "tiny_cnn", "--trials", "1000", "--batch", "4", "--search", "random", "--db", db,
                         "--cache-flush", "off"},
                        db, 24, SIGINT);  // past the warm-up: every task has programs
    QCOMPARE(r.code, 130);
    QVERIFY2(r.err.contains("interrupted by SIGINT") && r.err.contains("--resume"), qPrintable(r.err));
    QCOMPARE(query(db, "SELECT status FROM sessions WHERE id = 1"), QString("stopped"));
    const int kept = query(db, "SELECT count(*) FROM records").toInt();
    QVERIFY(kept >= 24 && kept < 1000);
    QVERIFY2(r.err.contains(QString("%1 trials kept").arg(kept)), qPrintable(r.err));

    Run again = runCli({"tune", "tiny_cnn", "--trials", QString::number(kept), "--resume", "--db", db, "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QVERIFY2(again.err.contains("nothing left to tune"), qPrintable(again.err));
    QCOMPARE(query(db, "SELECT count(*) FROM records").toInt(), kept);

    Run op = interrupted({"tune-op", "matmul", "--shape", "64,64,64", "--trials", "1000", "--batch", "8", "--search",
                          "random", "--db", db, "--json"},
                         db, kept + 8, SIGTERM);
    QCOMPARE(op.code, 143);
    QVERIFY2(op.err.contains("interrupted by SIGTERM"), qPrintable(op.err));
    QCOMPARE(query(db, "SELECT status FROM sessions WHERE id = 2"), QString("stopped"));
    QCOMPARE(query(db, "SELECT count(*) FROM sessions WHERE status = 'running'").toInt(), 0);
  }

  // Every session ends with a true status: a SIGKILLed tuning's session is
  // shown `interrupted` by readers (who leave the file as it is), marked so
  // by the next writer, and taken over by --resume; a tuning that fails
  // (here: its records table dropped under it) is `failed` with the reason.
  void sessionsEndWithATrueStatus() {
    const QString db = scratch().filePath("statuses.db");
    const QStringList tune = {"tune-op", "matmul",   "--shape", "48,48,48", "--batch",
                              "4",       "--search", "random",  "--db",     db};
    Run killed = interrupted(tune + QStringList{"--trials", "400"}, db, 8, SIGKILL);
    QCOMPARE(killed.code, -2);
    QCOMPARE(query(db, "SELECT status FROM sessions WHERE id = 1"), QString("running"));
    Run shown = runCli({"db", "sessions", "--db", db, "--json"});
    QVERIFY2(shown.code == 0, qPrintable(shown.err));
    const QJsonObject first =
        QJsonDocument::fromJson(shown.out.toUtf8()).object()["sessions"].toArray().at(0).toObject();
    QCOMPARE(first["status"].toString(), QString("interrupted"));
    QVERIFY2(first["message"].toString().contains("its process ended before the session did"), qPrintable(shown.out));
    QCOMPARE(query(db, "SELECT status FROM sessions WHERE id = 1"), QString("running"));  // a reader wrote nothing
    Run text = runCli({"db", "sessions", "--db", db});
    QVERIFY2(text.out.contains("interrupted") && text.out.contains("killed, crashed"), qPrintable(text.out));

    // The next writer marks it in the file; --resume takes it over.
    Run other = runCli({"tune-op", "matmul", "--shape", "16,16,16", "--trials", "2", "--batch", "2", "--db", db});
    QVERIFY2(other.code == 0, qPrintable(other.err));
    QCOMPARE(query(db, "SELECT status FROM sessions WHERE id = 1"), QString("interrupted"));
    const int kept = query(db, "SELECT count(*) FROM records WHERE session_id = 1").toInt();
    Run resumed = runCli(tune + QStringList{"--trials", QString::number(kept + 4), "--resume"});
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
    QCOMPARE(query(db, "SELECT status || '|' || message FROM sessions WHERE id = 1"), QString("finished|"));

    // A failure after the checks: the session says why.
    QProcess p;
    isolate(p);
    p.start(TESSEL_CLI_PATH, tune + QStringList{"--trials", "400"});
    QVERIFY(p.waitForStarted());
    QTRY_VERIFY_WITH_TIMEOUT(query(db, "SELECT count(*) FROM records WHERE session_id = 3").toInt() >= 4, 120000);
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(db.toUtf8().constData(), &raw), SQLITE_OK);
    sqlite3_busy_timeout(raw, 10000);
    QCOMPARE(sqlite3_exec(raw, "DROP TABLE records", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    QVERIFY(p.waitForFinished(120000));
    QCOMPARE(p.exitCode(), 1);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains("is damaged: its table 'records' is missing (it was there when Tessel opened the file)"),
             qPrintable(err));
    QCOMPARE(query(db, "SELECT status FROM sessions WHERE id = 3"), QString("failed"));
    QVERIFY2(query(db, "SELECT message FROM sessions WHERE id = 3").contains("its table 'records' is missing"),
             qPrintable(query(db, "SELECT message FROM sessions WHERE id = 3")));
  }

  // Temporary folders go with their tuning: on a normal end, on SIGINT and
  // SIGTERM; one a SIGKILL left (named with its pid, its owner lock free) is
  // removed by the next run.
  void nothingLeftInTheTempFolder() {
    QTemporaryDir tmp;
    const QString db = scratch().filePath("tempdirs.db");
    auto ours = [&] { return QDir(tmp.path()).entryList({"tessel-*"}, QDir::Dirs | QDir::NoDotAndDotDot); };
    const QStringList tune = {"tune-op",  "matmul", "--shape",  "48,48,48", "--batch", "4",
                              "--search", "random", "--trials", "400",      "--db",    db};
    for (int signal : {SIGINT, SIGTERM}) {
      Run r = interrupted(tune, db, query(db, "SELECT count(*) FROM records").toInt() + 4, signal, tmp.path());
      QCOMPARE(r.code, 128 + signal);
      QVERIFY2(ours().isEmpty(), qPrintable(ours().join(' ')));
    }
    Run killed = interrupted(tune, db, query(db, "SELECT count(*) FROM records").toInt() + 4, SIGKILL, tmp.path());
    QCOMPARE(killed.code, -2);
    const QStringList left = ours();
    QCOMPARE(left.size(), 1);
    QVERIFY2(QRegularExpression("^tessel-build-[0-9]+-......$").match(left[0]).hasMatch(), qPrintable(left[0]));
    QVERIFY(QFile::exists(tmp.filePath(left[0] + "/.owner")));
    QTest::qWait(5500);  // a folder's lock is trusted free only after a few seconds
    QProcess next;
    isolate(next, tmp.path());
    next.start(TESSEL_CLI_PATH,
               {"tune-op", "matmul", "--shape", "16,16,16", "--trials", "2", "--batch", "2", "--db", db});
    QVERIFY(next.waitForFinished(120000));
    QCOMPARE(next.exitCode(), 0);
    QVERIFY2(ours().isEmpty(), qPrintable(ours().join(' ')));
  }

  // A tuner killed with SIGKILL takes its compilers with it: each runs in a
  // process group led by a guardian that the kernel tells of its parent's
  // death, and the compiler's own temporary files are in the build folder.
  // The compiler here is a script that leaves a temporary file where gcc
  // leaves its own and then takes two minutes, as a large unit would.
  void noCompilerOutlivesItsTuner() {
    QTemporaryDir tmp, bin;
    const QString slow = bin.filePath("slow-cxx");
    {
      QFile f(slow);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("#!/bin/sh\ntouch \"${TMPDIR:-/tmp}/cxx-temp-$$\"\nsleep 120\n");
    }
    QVERIFY(QFile::setPermissions(
        slow, QFileDevice::ReadOwner | QFileDevice::ExeOwner | QFileDevice::ReadOther | QFileDevice::ExeOther));
    QProcess tuner;
    isolate(tuner, tmp.path());
    QProcessEnvironment env = tuner.processEnvironment();
    env.insert("TESSEL_CXX", slow);
    tuner.setProcessEnvironment(env);
    tuner.start(TESSEL_CLI_PATH, {"tune-op", "matmul", "--shape", "64,64,64", "--trials", "100000", "--batch", "8",
                                  "--search", "random", "--no-db", "--quiet"});
    QVERIFY(tuner.waitForStarted());
    const int tunerPid = static_cast<int>(tuner.processId());
    QSet<int> groups;  // process groups of the tuner's compilers
    QElapsedTimer clock;
    clock.start();
    while (groups.isEmpty() && clock.elapsed() < 60000) {
      const std::map<int, ProcStat> all = processes();
      for (const auto& [pid, p] : all) {
        if (p.comm != "sleep") continue;
        for (int up = p.ppid; up > 1 && all.count(up); up = all.at(up).ppid)
          if (up == tunerPid) groups.insert(p.pgrp);
      }
      QTest::qWait(20);
    }
    QVERIFY2(!groups.isEmpty(), "no compiler of the tuner was seen running");
    ::kill(tunerPid, SIGKILL);
    QVERIFY(tuner.waitForFinished(30000));
    // Gone (or a zombie not yet reaped by whoever adopted it) within 5 s.
    QStringList alive;
    for (clock.restart(); clock.elapsed() < 5000; QTest::qWait(50)) {
      alive.clear();
      for (const auto& [pid, p] : processes())
        if (groups.contains(p.pgrp) && p.state != 'Z') alive << QString("%1 %2").arg(pid).arg(p.comm);
      if (alive.isEmpty()) break;
    }
    QVERIFY2(alive.isEmpty(), qPrintable("still running: " + alive.join(", ")));
    const QStringList left = QDir(tmp.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden);
    QCOMPARE(left.size(), 1);  // the build folder, swept by the next run (nothingLeftInTheTempFolder)
    QVERIFY2(left[0].startsWith("tessel-build-"), qPrintable(left.join(' ')));
    QVERIFY(!QDir(tmp.filePath(left[0])).entryList({"cxx-temp-*"}).isEmpty());
  }

  // Read-only commands on a valid, a truncated and a damaged database: the
  // file stays byte-identical and nothing appears beside it (no -wal, -shm or
  // -writer.lock), whether the command succeeds or refuses the file.
  void readOnlyCommandsLeaveNoTrace() {
    QTemporaryDir dir;
    const QString good = dir.filePath("good.db");
    Run tuned =
        runCli({"tune-op", "matmul", "--shape", "32,32,32", "--trials", "4", "--batch", "4", "--db", good, "--json"});
    QVERIFY2(tuned.code == 0, qPrintable(tuned.err));
    // (Not read with query(): SQLite's own read-only open leaves -wal and -shm.)
    const QString key = QJsonDocument::fromJson(tuned.out.toUtf8()).object()["workload_key"].toString();
    QVERIFY(!key.isEmpty());
    auto bytes = [](const QString& path) {
      QFile f(path);
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    auto damage = [&](const QString& name, const char* sql) {
      const QString path = dir.filePath(name);
      QFile::copy(good, path);
      sqlite3* raw = nullptr;
      sqlite3_open(path.toUtf8().constData(), &raw);
      sqlite3_exec(raw, sql, nullptr, nullptr, nullptr);
      sqlite3_close(raw);
      return path;
    };
    const QString dropped = damage("dropped.db", "DROP TABLE records");
    const QString shape = damage("shape.db", "UPDATE tasks SET shape = '{garbage'");
    const QString truncated = dir.filePath("truncated.db");
    {
      QFile f(truncated);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(bytes(good).left(int(QFileInfo(good).size() / 2)));
    }
    for (const QString& db : {good, dropped, shape, truncated}) {
      const QByteArray before = bytes(db);
      QVERIFY(!before.isEmpty());
      for (const QStringList& args :
           {QStringList{"db", "stats"}, QStringList{"db", "sessions"}, QStringList{"db", "best"},
            QStringList{"db", "show", "--task", key},
            QStringList{"export", "--all", "--no-compile", "--force", "--out", dir.filePath("out")}}) {
        Run r = runCli(args + QStringList{"--db", db, "--json"});
        const QString what = args.join(' ') + " on " + QFileInfo(db).fileName() + ": " + r.err;
        // A garbage shape fails the commands that read that task, not `db stats`.
        QVERIFY2(db == shape ? (r.code == 0 || r.code == 1) : r.code == (db == good ? 0 : 1), qPrintable(what));
        QVERIFY2(bytes(db) == before, qPrintable(what));
        for (const char* side : {"-wal", "-shm", "-writer.lock"})
          QVERIFY2(!QFile::exists(db + side), qPrintable(what + " left " + side));
      }
    }
    Run shapeErr = runCli({"db", "best", "--db", shape});
    QVERIFY2(shapeErr.err.contains("is damaged: its shape '{garbage' is not a list of dimensions"),
             qPrintable(shapeErr.err));
  }

  // A valid database in a folder the user cannot write is read, not called
  // corrupt (it once was: SQLite wanted to create -shm beside it), and so is
  // one a killed tuning left with its -wal and -shm; with its -wal alone (the
  // -shm deleted or not copied) it cannot be read there, and the message says
  // why. Run as another user when the test runs as root, for whom permissions
  // do not apply.
  void readOnlyFolderIsRead() {
    QTemporaryDir dir;
    const QString folder = dir.filePath("ro"), db = folder + "/t.db";
    QVERIFY(QDir().mkpath(folder));
    Run tuned = runCli({"tune-op", "matmul", "--shape", "16,16,16", "--trials", "2", "--batch", "2", "--db", db});
    QVERIFY2(tuned.code == 0, qPrintable(tuned.err));
    QVERIFY(::chmod(dir.path().toUtf8().constData(), 0755) == 0 && ::chmod(folder.toUtf8().constData(), 0555) == 0);
    QString program = TESSEL_CLI_PATH;
    QStringList prefix;
    if (::geteuid() == 0) {
      if (QStandardPaths::findExecutable("setpriv").isEmpty()) QSKIP("running as root without setpriv to drop it");
      prefix = {"--reuid=65534", "--regid=65534", "--clear-groups", program};
      program = QStandardPaths::findExecutable("setpriv");
      // The build may sit where that user cannot go (a clone under /root).
      QProcess probe;
      probe.start(program, prefix + QStringList{"--version"});
      if (!probe.waitForFinished(30000) || probe.exitCode() != 0)
        QSKIP("running as root, and the unprivileged user (nobody) cannot run this build's tessel from here");
    }
    auto stats = [&](QString* err) {
      QProcess p;
      isolate(p);
      p.start(program, prefix + QStringList{"db", "stats", "--db", db, "--json"});
      if (!p.waitForFinished(60000)) return -2;
      *err = QString::fromUtf8(p.readAllStandardError());
      return p.exitCode() == 0 ? QJsonDocument::fromJson(p.readAllStandardOutput()).object()["records"].toInt() : -1;
    };
    QString err;
    QCOMPARE(stats(&err), 2);
    QVERIFY2(err.isEmpty(), qPrintable(err));
    QVERIFY(!QFile::exists(db + "-shm") && !QFile::exists(db + "-wal"));

    // A tuning killed in the middle leaves -wal and -shm: both are read.
    QVERIFY(::chmod(folder.toUtf8().constData(), 0755) == 0);
    QProcess tuning;
    isolate(tuning);
    tuning.start(TESSEL_CLI_PATH, {"tune-op", "matmul", "--shape", "32,32,32", "--trials", "100000", "--batch", "4",
                                   "--search", "random", "--db", db, "--resume"});
    QVERIFY(tuning.waitForStarted());
    QElapsedTimer clock;
    clock.start();
    auto records = [&] { return query(db, "SELECT count(*) FROM records").toInt(); };
    while (records() < 6 && clock.elapsed() < 120000)
      QTest::qWait(100);
    ::kill(static_cast<pid_t>(tuning.processId()), SIGKILL);
    QVERIFY(tuning.waitForFinished(30000));
    const int killedAt = records();
    QVERIFY2(killedAt >= 6, qPrintable(QString::number(killedAt)));
    QVERIFY(QFile::exists(db + "-wal") && QFile::exists(db + "-shm"));
    QVERIFY(::chmod(folder.toUtf8().constData(), 0555) == 0);
    QCOMPARE(stats(&err), killedAt);

    // Its -wal alone: refused with the reason, not called corrupt, nothing created.
    QVERIFY(::chmod(folder.toUtf8().constData(), 0755) == 0 && QFile::remove(db + "-shm"));
    QVERIFY(::chmod(folder.toUtf8().constData(), 0555) == 0);
    const QStringList files = QDir(folder).entryList(QDir::Files);
    QCOMPARE(stats(&err), -1);
    QVERIFY2(err.contains("left its -wal") && !err.contains("corrupt"), qPrintable(err));
    QCOMPARE(QDir(folder).entryList(QDir::Files), files);
    ::chmod(folder.toUtf8().constData(), 0755);  // so that QTemporaryDir can remove it
  }

  // On a terminal the progress bar shows trials, elapsed time, rate, ETA and
  // the best so far (on stderr, --json or not); --quiet leaves stderr empty.
  void progressBarOnATerminalQuietOff() {
    // script(1) (bsdutils, installed by scripts/setup.sh) gives the command a terminal.
    QVERIFY2(!QStandardPaths::findExecutable("script").isEmpty(), "script(1) is missing: run scripts/setup.sh");
    QProcess p;
    isolate(p);
    // script(1) gives the command a pseudo-terminal and copies what it writes.
    p.start("script", {"-qec",
                       QString("'%1' tune-op matmul --shape 32,32,32 --trials 16 --batch 8 --search random --no-db "
                               "--json")
                           .arg(TESSEL_CLI_PATH),
                       "/dev/null"});
    QVERIFY(p.waitForFinished(120000));
    const QString shown = QString::fromUtf8(p.readAllStandardOutput());
    QCOMPARE(p.exitCode(), 0);
    for (const char* part : {"16/16 trials", "elapsed", "trials/s", "ETA", "best ", "\r"})
      QVERIFY2(shown.contains(part), qPrintable(QString("no '%1' in: %2").arg(part, shown)));

    Run quiet = runCli({"tune-op", "matmul", "--shape", "32,32,32", "--trials", "8", "--batch", "8", "--search",
                        "random", "--no-db", "--quiet"});
    QCOMPARE(quiet.code, 0);
    QCOMPARE(quiet.err, QString());
  }

  // Without an NVIDIA driver, --target cuda is an error that names what is
  // missing (exit 1), given before anything is written, for every command
  // that tunes; --arch joins --target; run executes on the CPU only.
  void cudaTargetWithoutAGpuSaysWhy() {
    if (tessel::measure::cuda::unavailableReason().empty())
      QSKIP("checks the answer where there is no NVIDIA driver; this machine has one");
    const QString db = scratch().filePath("cuda.db");
    for (const QStringList& args :
         {QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--target", "cuda", "--db", db},
          QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--target", "cuda", "--arch", "sm_90", "--db", db},
          QStringList{"tune", "tiny_cnn", "--target", "cuda -arch=sm_80", "--db", db},
          QStringList{"dataset", "collect", "--models", "tiny_cnn", "--db", db, "--target", "cuda -arch=sm_90"}}) {
      Run r = runCli(args);
      QCOMPARE(r.code, 1);
      QVERIFY2(r.err.contains("--target cuda") && r.err.contains("no NVIDIA driver"), qPrintable(r.err));
      QVERIFY2(!QFile::exists(db), qPrintable(args.join(' ')));
    }
    Run twice = runCli({"tune-op", "matmul", "--shape", "8,8,8", "--target", "cuda -arch=sm_90", "--arch", "sm_80"});
    QCOMPARE(twice.code, 2);
    QVERIFY2(twice.err.contains("both name the arch"), qPrintable(twice.err));
    Run run = runCli({"run", "tiny_cnn", "--target", "cuda", "--arch", "sm_90"});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains("runs on the CPU only"), qPrintable(run.err));
    // inspect needs no GPU: a cuda target decides the tasks' layout (NCHW).
    Run inspect = runCli({"inspect", "tiny_cnn", "--target", "cuda", "--arch", "sm_90", "--json"});
    QCOMPARE(inspect.code, 0);
    QVERIFY2(inspect.out.contains("\"target\":\"cuda -arch=sm_90\""), qPrintable(inspect.out.left(400)));
  }

  // Every command's --help names every option the command accepts, and
  // shows an example; `tessel --help` lists every command.
  void helpListsEveryOption() {
    Run top = runCli({"--help"});
    QCOMPARE(top.code, 0);
    for (const tessel::cli::Command& c : tessel::cli::commands()) {
      QVERIFY2(top.out.contains("  " + QString::fromStdString(c.name) + " "), qPrintable(top.out));
      const QString help = QString::fromStdString(c.help());
      Run r = runCli({QString::fromStdString(c.name), "--help"});
      QCOMPARE(r.code, 0);
      QVERIFY2(r.out.startsWith(help), c.name.c_str());  // what runs is what the table holds
      QVERIFY2(help.contains("example"), (c.name + " --help has no example").c_str());
      const tessel::cli::OptionSpec spec = c.options();
      for (const auto* set : {&spec.valued, &spec.flags})
        for (const std::string& option : *set)
          if (option != "help")
            QVERIFY2(help.contains(QString("--%1").arg(QString::fromStdString(option))),
                     qPrintable(QString("tessel %1 --help does not list --%2")
                                    .arg(QString::fromStdString(c.name), QString::fromStdString(option))));
    }
  }

  // Help texts list the searches and cost models from their registries.
  void helpListsSearchesAndCostModels() {
    for (const char* command : {"tune", "tune-op"}) {
      Run r = runCli({command, "--help"});
      QCOMPARE(r.code, 0);
      for (const char* name : {"evolutionary (default)", "random:", "anneal:", "--cost-model NAME", "model (default)",
                               "off (default)", "example:"}) {
        if (QString(name) == (QString(command) == "tune" ? "off (default)" : "model (default)")) continue;
        QVERIFY2(r.out.contains(name), qPrintable(QString("%1 --help lacks '%2':\n%3").arg(command, name, r.out)));
      }
    }
  }

  // The learned models (LibTorch) guide a tuning from the command line; its
  // JSON names the model, and each program carries the model's prediction.
  void tuneOpWithALearnedModel() {
#ifndef TESSEL_HAVE_LEARNED_COST
    QSKIP("this build has no LibTorch: the learned cost models are unavailable");
#else
    for (const char* name : {"mlp:", "gat:", "atformer:"})
      QVERIFY2(runCli({"tune-op", "--help"}).out.contains(name), name);
    Run r = runCli({"tune-op", "matmul", "--shape", "32,24,16", "--trials", "8", "--batch", "4", "--json", "--seed",
                    "3", "--cost-model", "atformer"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 8);
    QVERIFY2(r.out.contains("atformer"), qPrintable(r.out));
#endif
  }

  // The cost-model workflow from the command line: collect a dataset,
  // export it, measure it again, train a model, evaluate it on a held-out model, and start a
  // tuning from the trained file. Mistakes are usage errors that say why.
  void datasetTrainEvalAndStartFromAFile() {
    QTemporaryDir dir;
    const QString db = dir.filePath("set.db"), data = dir.filePath("set.jsonl.gz"), model = dir.filePath("m.tcm");
    Run c = runCli({"dataset", "collect", "--models", "tiny_cnn", "--programs-per-task", "3", "--batch", "3", "--db",
                    db, "--json", "--cache-flush", "off"},
                   300000);
    QVERIFY2(c.code == 0, qPrintable(c.err));
    const QJsonObject cj = QJsonDocument::fromJson(c.out.toUtf8()).object();
    QCOMPARE(cj["tasks"].toInt(), 5);
    QVERIFY(cj["measured"].toInt() >= 12);
    Run e = runCli({"dataset", "export", "--db", db, "--out", data});
    QVERIFY2(e.code == 0 && e.out.contains("records"), qPrintable(e.err));
    // Measured again (once each here), every record is written back.
    const QString again = dir.filePath("again.jsonl");
    Run m = runCli({"dataset", "remeasure", "--data", data, "--out", again, "--repeat", "1", "--batch", "8",
                    "--cache-flush", "off", "--json"},
                   300000);
    QVERIFY2(m.code == 0, qPrintable(m.err));
    const QJsonObject mj = QJsonDocument::fromJson(m.out.toUtf8()).object();
    QCOMPARE(mj["tasks"].toInt(), 5);
    QCOMPARE(mj["programs"].toInt(), cj["records"].toInt());
    QVERIFY(mj["valid"].toInt() > 0);
    Run kept = runCli({"dataset", "remeasure", "--data", data, "--out", again, "--json"});
    QCOMPARE(QJsonDocument::fromJson(kept.out.toUtf8()).object()["kept"].toInt(), 5);
    Run same = runCli({"dataset", "remeasure", "--data", data, "--out", data});
    QVERIFY2(same.code == 2 && same.err.contains("--out must not be --data"), qPrintable(same.err));
    Run absent = runCli({"dataset", "remeasure", "--data", data, "--out", again, "--models", "resnet18"});
    QVERIFY2(absent.code == 2 && absent.err.contains("no records of model 'resnet18'"), qPrintable(absent.err));
    const QString name = tessel::cost::findCostModel("xgb")->available ? "xgb" : "random";
    Run t = runCli({"costmodel", "train", "--model", name, "--data", data, "--out", model, "--quiet"});
    if (name == "random") {
      QCOMPARE(t.code, 1);  // nothing to save
      QSKIP("this build has no XGBoost: no trainable model to save");
    }
    QVERIFY2(t.code == 0, qPrintable(t.err));
    Run v = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "tiny_cnn", "--json"});
    QVERIFY2(v.code == 0, qPrintable(v.err));
    const QJsonObject vj = QJsonDocument::fromJson(v.out.toUtf8()).object();
    QCOMPARE(vj["model"].toString(), name);
    QCOMPARE(vj["tasks"].toInt(), 5);
    QVERIFY(vj["top1"].toDouble() > 0 && vj["top1"].toDouble() <= 1);
    QVERIFY(vj["per_model"].toObject().contains("tiny_cnn"));
    // The per-task picks add up to the top-1 score (a failed pick counts 1000x the best).
    const QJsonArray perTask = vj["per_task"].toArray();
    QCOMPARE(perTask.size(), 5);
    double bestSum = 0, pickedSum = 0;
    for (const QJsonValue& p : perTask) {
      const QJsonObject o = p.toObject();
      const double w = o["weight"].toDouble(), best = o["best_seconds"].toDouble();
      const double picked = o["top1_seconds"].isNull() ? 1e3 * best : o["top1_seconds"].toDouble();
      QVERIFY(best > 0 && picked >= best);
      bestSum += w * best;
      pickedSum += w * picked;
    }
    QVERIFY(std::abs(bestSum / pickedSum - vj["top1"].toDouble()) < 1e-9);
    // --scores: a line per program; each task's highest score is its top-1 pick.
    const QString scores = dir.filePath("scores.tsv");
    Run sc = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "tiny_cnn", "--scores",
                     scores, "--quiet"});
    QVERIFY2(sc.code == 0, qPrintable(sc.err));
    QFile scoresFile(scores);
    QVERIFY(scoresFile.open(QIODevice::ReadOnly));
    QList<QByteArray> lines = scoresFile.readAll().trimmed().split('\n');
    QCOMPARE(lines.takeFirst(), QByteArray("model\ttask\tprogram\tseconds\tscore"));
    // Per task: the highest score and the seconds of the programs that have it.
    std::map<QString, std::pair<double, std::vector<double>>> firstPick;
    int programs = 0;
    for (const QJsonValue& p : perTask)
      programs += p.toObject()["programs"].toInt();
    QCOMPARE(int(lines.size()), programs);
    for (const QByteArray& line : lines) {
      const QList<QByteArray> f = line.split('\t');
      QCOMPARE(f.size(), 5);
      QCOMPARE(f[0], QByteArray("tiny_cnn"));
      const double seconds = f[3].toDouble(), score = f[4].toDouble();
      auto [it, fresh] = firstPick.try_emplace(QString(f[1]), score, std::vector<double>{seconds});
      if (fresh || score < it->second.first) continue;
      if (score > it->second.first) it->second = {score, {}};
      it->second.second.push_back(seconds);
    }
    QCOMPARE(firstPick.size(), size_t(5));
    for (const QJsonValue& p : perTask) {
      const QJsonObject o = p.toObject();
      if (o["top1_seconds"].isNull()) continue;
      const double picked = o["top1_seconds"].toDouble();
      const std::vector<double>& top = firstPick.at(o["task"].toString()).second;
      QVERIFY(std::ranges::any_of(top, [&](double s) { return std::abs(s - picked) < 1e-9 * picked; }));
    }
    Run noScores = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "tiny_cnn", "--scores",
                           dir.filePath("absent/scores.tsv")});
    QVERIFY2(noScores.code == 2 && noScores.err.contains("--scores"), qPrintable(noScores.err));
    Run trainScores =
        runCli({"costmodel", "train", "--model", name, "--data", data, "--out", model, "--scores", scores});
    QVERIFY2(trainScores.code == 2 && trainScores.err.contains("--scores applies to eval"),
             qPrintable(trainScores.err));
    // Scored on the labels measured again (--test-data): every task's best is
    // the lowest cost that file holds for it.
    Run w = runCli({"costmodel", "eval", "--model", model, "--data", data, "--test-data", again, "--held-out",
                    "tiny_cnn", "--json"});
    QVERIFY2(w.code == 0, qPrintable(w.err));
    std::map<std::string, double> againBest;
    QFile againFile(again);
    QVERIFY(againFile.open(QIODevice::ReadOnly));
    for (const QByteArray& line : againFile.readAll().split('\n')) {
      const QJsonObject r = QJsonDocument::fromJson(line).object();
      if (r.isEmpty() || r["cost"].isNull()) continue;
      double& best = againBest.try_emplace(r["task"].toString().toStdString(), 1e300).first->second;
      best = std::min(best, r["cost"].toDouble());
    }
    std::vector<double> expected, scoredBest, originalBest;
    for (const auto& [task, best] : againBest)
      expected.push_back(best);
    for (const QJsonValue& p : QJsonDocument::fromJson(w.out.toUtf8()).object()["per_task"].toArray())
      scoredBest.push_back(p.toObject()["best_seconds"].toDouble());
    for (const QJsonValue& p : perTask)
      originalBest.push_back(p.toObject()["best_seconds"].toDouble());
    std::ranges::sort(expected);
    std::ranges::sort(scoredBest);
    std::ranges::sort(originalBest);
    QCOMPARE(scoredBest, expected);
    QVERIFY(scoredBest != originalBest);
    Run noTest =
        runCli({"costmodel", "eval", "--model", model, "--data", data, "--test-data", again, "--held-out", "resnet18"});
    QVERIFY2(noTest.code == 2 && noTest.err.contains("--test-data") && noTest.err.contains("no records of it"),
             qPrintable(noTest.err));
    const QString tuned = dir.filePath("tuned.db");
    Run tune = runCli({"tune-op", "matmul", "--shape", "16,16,16", "--trials", "4", "--batch", "2", "--json",
                       "--cost-model-file", model, "--db", tuned});
    QVERIFY2(tune.code == 0, qPrintable(tune.err));
    QCOMPARE(QJsonDocument::fromJson(tune.out.toUtf8()).object()["cost_model"].toString(), name);
    // The model it started from, fine-tuned on the 4 programs, is kept.
    Run stats = runCli({"db", "stats", "--db", tuned, "--json"});
    QCOMPARE(QJsonDocument::fromJson(stats.out.toUtf8()).object()["cost_models"].toInt(), 1);

    Run bad = runCli({"costmodel", "eval", "--model", model, "--data", data, "--held-out", "resnet18"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("no records of that model"), qPrintable(bad.err));
    Run notModel = runCli({"tune-op", "matmul", "--shape", "16,16,16", "--cost-model-file", data, "--no-db"});
    QCOMPARE(notModel.code, 2);
    QVERIFY2(notModel.err.contains("not a Tessel cost model file"), qPrintable(notModel.err));
    QCOMPARE(runCli({"dataset", "collect", "--models", "tiny_cnn"}).code, 2);  // no --db
    QCOMPARE(runCli({"costmodel", "fit"}).code, 2);
  }

  void helpListsOps() {
    Run r = runCli({"tune-op", "--help"});
    QCOMPARE(r.code, 0);
    for (const char* op : {"matmul", "conv2d", "softmax", "layernorm", "batch_matmul"})
      QVERIFY(r.out.contains(op));
    QCOMPARE(runCli({"--help"}).code, 0);
  }

  // A target string: the task is tuned for it (its flags, its one thread) and
  // its records are stored under it, apart from the same op tuned for "cpu"
  // in the same database; the kernels are checked against the naive program.
  void tuneOpForATargetString() {
    const QString db = scratch().filePath("targets.db");
    auto tune = [&](const QString& target) {
      Run r = runCli({"tune-op", "matmul", "--shape", "64,64,64", "--trials", "8", "--target", target, "--db", db,
                      "--json", "--quiet"},
                     300000);
      if (r.code != 0) qWarning("%s", qPrintable(r.err));
      return QJsonDocument::fromJson(r.out.toUtf8()).object();
    };
    const QJsonObject one = tune("cpu -threads=1 -arch=x86-64-v2");
    const QString canonical = "cpu -arch=x86-64-v2 -threads=1";
    QCOMPARE(one["target"].toString(), canonical);
    QCOMPARE(one["trials"].toInt(), 8);
    QVERIFY(one["valid_trials"].toInt() >= 1);
    QVERIFY(one["correct"].toBool());
    for (const QString& error : one["errors"].toObject().keys())
      QVERIFY2(!error.contains("wrong"), qPrintable(error));  // every kernel computed what the naive one does
    const QJsonObject plain = tune("cpu");
    QCOMPARE(plain["target"].toString(), QString("cpu"));
    QCOMPARE(plain["workload_key"].toString(), one["workload_key"].toString());

    // Two tasks of one workload key, each with its own 8 records.
    QCOMPARE(query(db, "SELECT count(*) FROM tasks"), QString("2"));
    auto recordsOf = [&](const QString& target) {
      return query(db, qPrintable("SELECT count(*) FROM records JOIN tasks ON tasks.id = records.task_id JOIN targets "
                                  "ON targets.id = tasks.target_id WHERE targets.name = '" +
                                  target + "'"));
    };
    QCOMPARE(recordsOf(canonical), QString("8"));
    QCOMPARE(recordsOf("cpu"), QString("8"));
    QVERIFY(
        query(db, qPrintable("SELECT config FROM sessions WHERE id = " + QString::number(one["session"].toInteger())))
            .contains(canonical));

    // A bad or unrunnable target is a usage error naming it.
    Run bad = runCli({"tune-op", "matmul", "--shape", "8,8,8", "--target", "cpu -threads=2000", "--no-db"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("-threads=2000 is not a number from 0 (every core) to 1024"), qPrintable(bad.err));
    if (!tessel::target::parseTarget("cpu -arch=x86-64-v4").runsOnHost()) {
      Run v4 = runCli({"tune-op", "matmul", "--shape", "8,8,8", "--target", "cpu -arch=x86-64-v4", "--no-db"});
      QCOMPARE(v4.code, 2);
      QVERIFY2(v4.err.contains("cannot run x86-64-v4 code"), qPrintable(v4.err));
    }
    Run help = runCli({"tune-op", "--help"});
    QVERIFY(help.out.contains("cpu -arch=x86-64-v2 -threads=1"));
  }

  void tuneOpPrintsTheContractsJson() {
    Run r =
        runCli({"tune-op", "matmul", "--shape", "32,24,16", "--trials", "6", "--batch", "3", "--json", "--seed", "3"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonParseError pe;
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8(), &pe).object();
    QVERIFY2(pe.error == QJsonParseError::NoError, qPrintable(r.out));
    for (const char* f :
         {"op", "shape", "target", "flops", "trials", "valid_trials", "best_ms", "best_gflops", "correct", "curve"})
      QVERIFY2(j.contains(f), f);
    QCOMPARE(j["op"].toString(), QString("matmul"));
    QCOMPARE(j["shape"].toArray().size(), 3);
    QCOMPARE(j["flops"].toDouble(), 2.0 * 32 * 24 * 16);
    QCOMPARE(j["trials"].toInt(), 6);
    QVERIFY(j["valid_trials"].toInt() >= 1);
    QVERIFY(j["correct"].toBool());
    QVERIFY(j["best_ms"].toDouble() > 0);
    QVERIFY(qAbs(j["best_gflops"].toDouble() - j["flops"].toDouble() / j["best_ms"].toDouble() / 1e6) <
            1e-6 * j["best_gflops"].toDouble() + 1e-9);
    QJsonArray curve = j["curve"].toArray();
    QVERIFY(!curve.isEmpty());
    double last = 1e30;
    for (const QJsonValue& v : curve) {  // best so far never gets worse
      QVERIFY(v.toArray()[1].toDouble() <= last);
      last = v.toArray()[1].toDouble();
    }
    QCOMPARE(last, j["best_ms"].toDouble());
    QVERIFY(!j["exhausted"].toBool());  // a matmul's space holds far more than 6
  }

  // tune-op says when the space ran dry before --trials (see test_tuner).
  void smallSpaceSaysExhausted() {
    Run r = runCli({"tune-op", "relu", "--shape", "1,4", "--trials", "500", "--json", "--no-db"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(j["exhausted"].toBool());
    QVERIFY2(j["trials"].toInt() >= 1 && j["trials"].toInt() < 64, qPrintable(r.out));
    QVERIFY(j["correct"].toBool());
    Run text = runCli({"tune-op", "relu", "--shape", "1,4", "--trials", "500", "--no-db"});
    QVERIFY2(text.out.contains("search space exhausted"), qPrintable(text.out));
  }

  // The default search: evolutionary, guided by the cost model.
  void evolutionarySearchRunsEndToEnd() {
    Run r = runCli(
        {"tune-op", "softmax", "--shape", "8,64", "--trials", "8", "--batch", "4", "--population", "64", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["search"].toString(), QString("evolutionary"));
    QCOMPARE(j["trials"].toInt(), 8);
    QVERIFY(j["correct"].toBool());
    QVERIFY(j["predictions"].toInt() > 64);  // the model scored every generation
  }

  // A file that is not a database: every command names it and leaves it as it was.
  void notADatabaseIsLeftAlone() {
    const QString path = scratch().filePath("notes.txt");
    const QByteArray text = QByteArray("my notes\n").repeated(100);
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text);
    }
    for (const QStringList& args :
         {QStringList{"db", "stats", "--db", path}, QStringList{"tune-op", "matmul", "--shape", "8,8,8", "--db", path},
          QStringList{"export", "--all", "--db", path, "--out", scratch().filePath("x")}}) {
      Run r = runCli(args);
      QVERIFY2(r.code == 1, qPrintable(r.err));
      QVERIFY2(r.err.contains("is not an SQLite database"), qPrintable(r.err));
      QFile f(path);
      QVERIFY(f.open(QIODevice::ReadOnly));
      QCOMPARE(f.readAll(), text);
    }
  }

  // SIGKILL at random moments, then --resume: an intact database, whole
  // batches only, the trial budget met and no program measured twice.
  void killedTuningResumes() {
    const QString db = scratch().filePath("killed.db");
    const QStringList base = {"tune-op", "matmul",   "--shape", "48,40,32", "--trials", "40",    "--batch",
                              "8",       "--search", "random",  "--db",     db,         "--json"};
    std::mt19937 rng(11);
    for (int k = 0; k < 3; ++k) {
      QProcess p;
      isolate(p);
      p.start(TESSEL_CLI_PATH, k ? base + QStringList{"--resume"} : base);
      QVERIFY(p.waitForStarted());
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(1500, 6000)(rng)));
      p.kill();
      p.waitForFinished();
      sqlite3* raw = nullptr;
      QCOMPARE(sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      QCOMPARE(sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &st, nullptr), SQLITE_OK);
      QCOMPARE(sqlite3_step(st), SQLITE_ROW);
      QCOMPARE(QString(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), QString("ok"));
      sqlite3_finalize(st);
      sqlite3_close(raw);
      Run stats = runCli({"db", "stats", "--db", db, "--json"});
      if (stats.code == 0) {  // the first kill may come before the database exists
        int records = QJsonDocument::fromJson(stats.out.toUtf8()).object()["records"].toInt();
        QVERIFY2(records % 8 == 0, qPrintable(QString::number(records)));  // batches land whole
      }
    }
    Run r = runCli(base + QStringList{"--resume"}, 300000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 40);
    Run stats = runCli({"db", "stats", "--db", db, "--json"});
    QVERIFY2(stats.code == 0, qPrintable(stats.err));
    QJsonObject s = QJsonDocument::fromJson(stats.out.toUtf8()).object();
    for (const char* f : {"records", "valid_records", "distinct_programs", "sessions", "tasks"})
      QVERIFY2(s.contains(f), f);
    QCOMPARE(s["records"].toInt(), 40);
    QCOMPARE(s["distinct_programs"].toInt(), 40);
    QCOMPARE(s["tasks"].toInt(), 1);

    // The best program, its export and the record dumps.
    Run best = runCli({"db", "best", "--db", db, "--json"});
    QVERIFY2(best.code == 0, qPrintable(best.err));
    QJsonArray rows = QJsonDocument::fromJson(best.out.toUtf8()).object()["best"].toArray();
    QCOMPARE(rows.size(), 1);
    QCOMPARE(rows[0].toObject()["task"].toString(), j["workload_key"].toString());
    QVERIFY(rows[0].toObject()["gflops"].toDouble() > 0);
    Run sessions = runCli({"db", "sessions", "--db", db, "--json"});
    QVERIFY(QJsonDocument::fromJson(sessions.out.toUtf8()).object()["sessions"].toArray().size() >= 1);
    const QString out = scratch().filePath("export");
    Run ex = runCli({"export", "--db", db, "--task", j["workload_key"].toString(), "--out", out, "--json"});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    QVERIFY(QFile::exists(out + "/manifest.json"));
    QVERIFY(QFile::exists(out + "/CMakeLists.txt"));
    Run csv = runCli({"export", "--db", db, "--all", "--out", out, "--format", "csv", "--json", "--force"});
    QVERIFY2(csv.code == 0, qPrintable(csv.err));
    QCOMPARE(QJsonDocument::fromJson(csv.out.toUtf8()).object()["records"].toInt(), 40);
    QVERIFY(!QFile::exists(out + "/manifest.json"));  // the folder was replaced whole
  }

  // An export never destroys a user's files: a folder that holds files is
  // refused with what it holds, --force replaces it whole, and an export
  // killed half way leaves the old folder as it was (its staging folder, named
  // with its pid, goes with the next export beside it).
  void exportNeverDestroysAUsersFiles() {
    const QString db = scratch().filePath("export_safety.db");
    Run tuned = runCli({"tune-op", "matmul", "--shape", "32,32,32", "--trials", "4", "--batch", "4", "--db", db});
    QVERIFY2(tuned.code == 0, qPrintable(tuned.err));
    QTemporaryDir dir;
    const QString out = dir.filePath("kernels");
    QVERIFY(QDir().mkpath(out + "/include"));
    const QMap<QString, QByteArray> mine = {{"CMakeLists.txt", "project(mine)\n"},
                                            {"manifest.json", "{\"mine\": true}\n"},
                                            {"include/tessel_kernels.h", "// my header\n"},
                                            {"records.csv", "my,data\n"}};
    for (auto it = mine.begin(); it != mine.end(); ++it) {
      QFile f(out + "/" + it.key());
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(it.value());
    }
    auto unchanged = [&] {
      for (auto it = mine.begin(); it != mine.end(); ++it) {
        QFile f(out + "/" + it.key());
        if (!f.open(QIODevice::ReadOnly) || f.readAll() != it.value()) return false;
      }
      return true;
    };
    for (const QString& format : {QString("kernels"), QString("csv"), QString("jsonl")}) {
      Run r = runCli({"export", "--db", db, "--all", "--out", out, "--format", format});
      QCOMPARE(r.code, 1);
      QVERIFY2(r.err.contains("kernels: the folder is not empty (it holds ") && r.err.contains("CMakeLists.txt") &&
                   r.err.contains("--force"),
               qPrintable(r.err));
      QVERIFY(unchanged());
    }
    Run parent = runCli({"export", "--db", db, "--all", "--out", dir.filePath("no/such/out")});
    QVERIFY2(parent.code == 1 && parent.err.contains("/no/such does not exist"), qPrintable(parent.err));
    QVERIFY(!QFileInfo::exists(dir.filePath("no")));

    // Killed while it compiles: the user's folder is untouched.
    QProcess p;
    isolate(p);
    p.start(TESSEL_CLI_PATH, {"export", "--db", db, "--all", "--out", out, "--force"});
    QVERIFY(p.waitForStarted());
    const QStringList staging = {".kernels.tessel-export-*"};
    QTRY_VERIFY_WITH_TIMEOUT(!QDir(dir.path()).entryList(staging, QDir::Dirs | QDir::Hidden).isEmpty(), 60000);
    ::kill(pid_t(p.processId()), SIGKILL);
    QVERIFY(p.waitForFinished(10000));
    QVERIFY(unchanged());
    QCOMPARE(QDir(dir.path()).entryList(staging, QDir::Dirs | QDir::Hidden).size(), 1);

    Run forced = runCli({"export", "--db", db, "--all", "--out", out + "/", "--force", "--json"});
    QVERIFY2(forced.code == 0, qPrintable(forced.err));
    QVERIFY(QFileInfo(out + "/lib/libtessel_kernels.so").size() > 0);
    QVERIFY(!QFile::exists(out + "/records.csv"));  // replaced whole, not file by file
    QFile manifest(out + "/manifest.json");
    QVERIFY(manifest.open(QIODevice::ReadOnly) && manifest.readAll().contains("matmul"));
    QVERIFY2(QDir(dir.path()).entryList(staging, QDir::Dirs | QDir::Hidden).isEmpty(),
             qPrintable(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden).join(' ')));
    // A file where the folder should be.
    QFile file(dir.filePath("plain"));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.close();
    Run onFile = runCli({"export", "--db", db, "--all", "--out", dir.filePath("plain"), "--force"});
    QVERIFY2(onFile.code == 1 && onFile.err.contains("it is a file, not a folder"), qPrintable(onFile.err));
  }

  void modelsListsTheZoo() {
    Run r = runCli({"models", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    bool found = false;
    for (const QJsonValue& m : QJsonDocument::fromJson(r.out.toUtf8()).object()["models"].toArray())
      if (m.toObject()["name"].toString() == "resnet18") {
        found = true;
        QCOMPARE(m.toObject()["params"].toDouble(), 11689512.0);
      }
    QVERIFY(found);
  }

  // The acceptance figures for resnet18 and bert_tiny.
  void inspectResnet18AndBertTiny() {
    const QString dot = scratch().filePath("r18.dot");
    Run r = runCli({"inspect", "resnet18", "--json", "--dot", dot});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* f : {"model", "nodes", "params", "flops", "partitions", "tasks"})
      QVERIFY2(j.contains(f), f);
    QCOMPARE(j["params"].toDouble(), 11689512.0);
    QVERIFY(j["flops"].toDouble() > 3.5e9 && j["flops"].toDouble() < 3.7e9);
    QJsonArray tasks = j["tasks"].toArray();
    QVERIFY2(tasks.size() >= 15 && tasks.size() <= 35, qPrintable(QString::number(tasks.size())));
    int weights = 0;
    for (const QJsonValue& t : tasks) {
      for (const char* f : {"key", "ops", "flops", "weight"})
        QVERIFY2(t.toObject().contains(f), f);
      weights += t.toObject()["weight"].toInt();
    }
    QVERIFY(weights > tasks.size());
    QFile f(dot);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QByteArray text = f.readAll();
    QVERIFY(text.startsWith("digraph") && text.contains("subgraph cluster_"));

    Run b = runCli({"inspect", "bert_tiny", "--fusion", "dp", "--json"});
    QVERIFY2(b.code == 0, qPrintable(b.err));
    bool fused = false;
    for (const QJsonValue& p : QJsonDocument::fromJson(b.out.toUtf8()).object()["partitions"].toArray()) {
      QStringList ops;
      for (const QJsonValue& op : p.toObject()["ops"].toArray())
        ops << op.toString();
      int softmax = ops.indexOf("Softmax");
      if (softmax >= 0 && ops.indexOf("MatMul", softmax) > softmax) fused = true;
    }
    QVERIFY2(fused, "no partition fuses attention's softmax with the batch matmul after it");
  }

  // --trials N measures at most N programs; a budget that cannot give every
  // task a full warm-up round gives each a smaller one; one that cannot give
  // every task a program is refused before anything is written.
  void trialBudget() {
    const QString db = scratch().filePath("budget.db");
    auto tune = [&](const QString& trials) {
      return runCli({"tune", "tiny_cnn", "--trials", trials, "--batch", "4", "--search", "random", "--db", db, "--json",
                     "--cache-flush", "off"},
                    300000);
    };
    Run small = tune("3");
    QCOMPARE(small.code, 2);
    QVERIFY2(small.err.contains("at least 5") && small.err.contains("20 gives each a full warm-up round of 4"),
             qPrintable(small.err));
    QVERIFY(!QFile::exists(db));

    Run r = tune("13");  // 5 tasks: warm-up rounds of 2, then 3 more programs
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 13);
    QCOMPARE(j["warmup_batch"].toInt(), 2);
    QCOMPARE(j["cache_flush"].toString(), QString("off"));
    QVERIFY(!j["estimated_ms"].isNull());
    int sum = 0;
    for (const QJsonValue& t : j["tasks"].toArray()) {
      QVERIFY(t.toObject()["trials"].toInt() >= 2);
      sum += t.toObject()["trials"].toInt();
    }
    QCOMPARE(sum, 13);
    Run stats = runCli({"db", "stats", "--db", db, "--json"});
    QCOMPARE(QJsonDocument::fromJson(stats.out.toUtf8()).object()["records"].toInt(), 13);

    // Full rounds of 4 would end at 24: the last round is cut to the budget.
    const QString db2 = scratch().filePath("budget2.db");
    Run full = runCli({"tune", "tiny_cnn", "--trials", "22", "--batch", "4", "--search", "random", "--db", db2,
                       "--json", "--cache-flush", "off"},
                      300000);
    QVERIFY2(full.code == 0, qPrintable(full.err));
    QCOMPARE(QJsonDocument::fromJson(full.out.toUtf8()).object()["trials"].toInt(), 22);
    QCOMPARE(QJsonDocument::fromJson(full.out.toUtf8()).object()["warmup_batch"].toInt(), 4);
    Run bad = runCli({"tune", "tiny_cnn", "--cache-flush", "maybe"});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains("--cache-flush takes model, on or off, not 'maybe'"), qPrintable(bad.err));
  }

  // tune a small model under the task scheduler, resume it, run it against LibTorch.
  // tessel ops: every op of the registry through every stage, and the
  // table of docs/models.md lists each of them.
  void opsListsEveryStage() {
    Run r = runCli({"ops", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    const QJsonArray ops = j["ops"].toArray();
    QVERIFY(ops.size() >= 70);
    QFile doc(QString(TESSEL_SOURCE_DIR) + "/docs/models.md");
    QVERIFY(doc.open(QIODevice::ReadOnly));
    const QString table = QString::fromUtf8(doc.readAll());
    for (const QJsonValue& v : ops) {
      const QJsonObject op = v.toObject();
      const QString name = op["op"].toString();
      QVERIFY2(op["shape_inference"].toBool() && op["lowering"].toBool(), qPrintable(name));
      QVERIFY2(op["libtorch_reference"].toBool(), qPrintable(name + " has no LibTorch reference"));
      QVERIFY2(op["onnx_min_opset"].toInt() >= 1 && op["onnx_min_opset"].toInt() <= 17, qPrintable(name));
      QVERIFY2(table.contains("| " + name + " |"), qPrintable(name + " is missing from docs/models.md"));
    }
    QVERIFY(j["torchscript_aten_ops"].toArray().contains("_native_multi_head_attention"));
  }

  // tessel run on a user's NumPy data: the same inputs give the same
  // outputs, --expect judges them, and bad files name what is wrong.
  void runOnTheUsersData() {
    const tessel::graph::Graph g = tessel::graph::makeZooModel("tiny_cnn");
    QCOMPARE(g.inputs.size(), size_t(1));
    tessel::runtime::HostTensor x{g.inputs[0].shape, {}};
    for (int64_t i = 0; i < g.inputs[0].numElements(); ++i)
      x.data.push_back(float(std::sin(0.37 * double(i))));
    const QString inputs = scratch().filePath("x.npz"), outputs = scratch().filePath("y.npz");
    tessel::runtime::writeNpz(inputs.toStdString(), {{g.inputs[0].name, x}});
    Run first = runCli({"run", "tiny_cnn", "--inputs", inputs, "--save-outputs", outputs, "--repeats", "1", "--json"});
    QVERIFY2(first.code == 0, qPrintable(first.err));
    const std::vector<tessel::runtime::NumpyArray> saved = tessel::runtime::readNumpyFile(outputs.toStdString());
    QCOMPARE(saved.size(), g.outputs.size());
    QCOMPARE(saved[0].name, g.outputs[0]);

    // The same data as a lone .npy; the saved outputs as the expectation.
    const QString npy = scratch().filePath("x.npy");
    {
      std::ofstream f(npy.toStdString(), std::ios::binary);
      f << tessel::runtime::formatNpy(x);
    }
    Run again = runCli({"run", "tiny_cnn", "--inputs", npy, "--expect", outputs, "--repeats", "1", "--json"});
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QJsonObject o = QJsonDocument::fromJson(again.out.toUtf8()).object();
    QVERIFY(o["expect_correct"].toBool());
    QVERIFY(o["expect_max_abs_err"].toDouble() <= 1e-6 * o["expect_max_abs_ref"].toDouble());
    QVERIFY(o["expect_max_abs_ref"].toDouble() > 0);

    // An expectation off by 1 % of the largest output is wrong, and says where.
    tessel::runtime::HostTensor off{saved[0].shape, saved[0].floats};
    float largest = 0;
    for (float v : off.data)
      largest = std::max(largest, std::fabs(v));
    off.data[0] += 0.01f * largest;
    const QString wrong = scratch().filePath("wrong.npz");
    tessel::runtime::writeNpz(wrong.toStdString(), {{"arr_0", off}});  // positional, as np.savez(f, y) names it
    Run bad = runCli({"run", "tiny_cnn", "--inputs", inputs, "--expect", wrong, "--repeats", "1"});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.out.contains("against " + wrong) && bad.out.contains("WRONG") &&
                 bad.out.contains("'" + QString::fromStdString(g.outputs[0]) + "'"),
             qPrintable(bad.out));

    // Files that do not fit: each message names the file and the problem.
    tessel::runtime::writeNpz(scratch().filePath("named.npz").toStdString(), {{"not_an_input", x}, {"other", x}});
    Run unnamed = runCli({"run", "tiny_cnn", "--inputs", scratch().filePath("named.npz")});
    QCOMPARE(unnamed.code, 1);
    QVERIFY2(unnamed.err.contains("no array for '" + QString::fromStdString(g.inputs[0].name) + "'") &&
                 unnamed.err.contains("'not_an_input'"),
             qPrintable(unnamed.err));
    tessel::runtime::HostTensor flat{{int64_t(x.data.size())}, x.data};
    tessel::runtime::writeNpz(scratch().filePath("flat.npz").toStdString(), {{"arr_0", flat}});
    Run shape = runCli({"run", "tiny_cnn", "--inputs", scratch().filePath("flat.npz")});
    QCOMPARE(shape.code, 1);
    QVERIFY2(shape.err.contains("has shape [" + QString::number(x.data.size()) + "]") &&
                 shape.err.contains("--input-shapes"),
             qPrintable(shape.err));
    Run missing = runCli({"run", "tiny_cnn", "--inputs", scratch().filePath("absent.npz")});
    QCOMPARE(missing.code, 1);
    QVERIFY2(missing.err.contains("absent.npz: no such file"), qPrintable(missing.err));
    Run zooShapes = runCli({"run", "tiny_cnn", "--input-shapes", "1,3,8,8"});
    QCOMPARE(zooShapes.code, 1);
    QVERIFY2(zooShapes.err.contains("fixed input shapes"), qPrintable(zooShapes.err));
  }

  void tuneAndRunASmallModel() {
    const QString db = scratch().filePath("model.db");
    const QStringList tune = {"tune",     "tiny_cnn", "--trials", "20", "--batch", "4",
                              "--search", "random",   "--db",     db,   "--json"};
    Run r = runCli(tune, 300000);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["trials"].toInt(), 20);
    QCOMPARE(j["cache_flush"].toString(), QString("model"));  // the default of model tuning
    QJsonArray tasks = j["tasks"].toArray();
    QCOMPARE(tasks.size(), 5);
    double estimate = 0, share = 0;
    for (const QJsonValue& t : tasks) {
      QVERIFY(t.toObject()["trials"].toInt() >= 4);  // warm-up: every task one round
      estimate += t.toObject()["weight"].toDouble() * t.toObject()["best_ms"].toDouble();
      share += t.toObject()["share"].toDouble();
    }
    QVERIFY(qAbs(estimate - j["estimated_ms"].toDouble()) < 1e-9 * estimate + 1e-12);
    QVERIFY(qAbs(share - 1) < 1e-9);

    Run more = runCli(QStringList{"tune", "tiny_cnn", "--trials", "28", "--batch", "4", "--search", "random", "--db",
                                  db, "--json", "--resume"},
                      300000);
    QVERIFY2(more.code == 0, qPrintable(more.err));
    QJsonObject m = QJsonDocument::fromJson(more.out.toUtf8()).object();
    QVERIFY(m["resumed"].toBool());
    QCOMPARE(m["trials"].toInt(), 28);
    Run stats = runCli({"db", "stats", "--db", db, "--json"});
    QJsonObject s = QJsonDocument::fromJson(stats.out.toUtf8()).object();
    QCOMPARE(s["records"].toInt(), 28);
    QCOMPARE(s["distinct_programs"].toInt(), 28);
    QCOMPARE(s["models"].toInt(), 1);
    QCOMPARE(s["sessions"].toInt(), 1);

    // db sessions: a model session's figure is its end-to-end estimate, as tune printed it.
    Run sessions = runCli({"db", "sessions", "--db", db, "--json"});
    QVERIFY2(sessions.code == 0, qPrintable(sessions.err));
    const QJsonObject session =
        QJsonDocument::fromJson(sessions.out.toUtf8()).object()["sessions"].toArray().at(0).toObject();
    QVERIFY(qAbs(session["estimated_ms"].toDouble() - m["estimated_ms"].toDouble()) <
            1e-9 * m["estimated_ms"].toDouble());
    QVERIFY(session["estimated_ms"].toDouble() > session["best_ms"].toDouble());  // not its fastest task
    Run table = runCli({"db", "sessions", "--db", db});
    QVERIFY2(table.out.contains(QString::number(m["estimated_ms"].toDouble(), 'f', 4) + " e2e"), qPrintable(table.out));

    // db show: a task of the model, its best program and its code.
    const QString key = m["tasks"].toArray().at(0).toObject()["key"].toString();
    Run show = runCli({"db", "show", "--task", key, "--code", "--db", db, "--json"}, 120000);
    QVERIFY2(show.code == 0, qPrintable(show.err));
    const QJsonObject shown = QJsonDocument::fromJson(show.out.toUtf8()).object()["task"].toObject();
    QCOMPARE(shown["model"].toString(), QString("tiny_cnn"));
    QVERIFY(qAbs(shown["best"].toObject()["latency_ms"].toDouble() -
                 m["tasks"].toArray().at(0).toObject()["best_ms"].toDouble()) < 1e-9);
    QVERIFY(shown["best"].toObject()["steps"].isArray());
    const QString code = shown["code"].toString();
    QVERIFY2(code.contains("Schedule: ") && code.contains("tessel_" + key) && code.contains("#pragma omp"),
             qPrintable(code.left(2000)));
    Run unknown = runCli({"db", "show", "--task", "nope_1", "--db", db});
    QCOMPARE(unknown.code, 1);
    QVERIFY2(unknown.err.contains("no task 'nope_1'"), qPrintable(unknown.err));

    Run run = runCli({"run", "tiny_cnn", "--db", db, "--json", "--repeats", "3", "--profile"}, 300000);
    QVERIFY2(run.code == 0, qPrintable(run.err + run.out));
    QJsonObject o = QJsonDocument::fromJson(run.out.toUtf8()).object();
    for (const char* f : {"tessel_ms", "libtorch_ms", "max_abs_err", "correct", "estimate_ms", "tessel_ms_min",
                          "tessel_ms_median", "tessel_ms_max", "libtorch_ms_min", "libtorch_ms_median",
                          "libtorch_ms_max", "disturbed", "contention", "memory", "partitions"})
      QVERIFY2(o.contains(f), f);
    // Both sides' windows were read from /proc/stat; shares are of the whole machine.
    for (const char* side : {"tessel", "libtorch"}) {
      const QJsonObject c = o["contention"].toObject()[side].toObject();
      QVERIFY2(c.contains("others_share") && c.contains("steal_share"), side);
      QVERIFY(c["others_share"].toDouble() >= 0 && c["others_share"].toDouble() <= 1.0);
    }
    QVERIFY(o["correct"].toBool());
    QCOMPARE(o["tasks_tuned"].toInt(), 5);
    QVERIFY(o["tessel_ms"].toDouble() > 0 && o["libtorch_ms"].toDouble() > 0);
    QVERIFY(o["max_abs_err"].toDouble() < 1e-3);
    QVERIFY(o["tessel_ms_min"].toDouble() <= o["tessel_ms_median"].toDouble() &&
            o["tessel_ms_median"].toDouble() <= o["tessel_ms_max"].toDouble());
    QCOMPARE(o["tessel_ms"].toDouble(), o["tessel_ms_median"].toDouble());
    QVERIFY(o["libtorch_ms_min"].toDouble() <= o["libtorch_ms_max"].toDouble());
    // The estimate is the resumed tuning's: sum of weight x best measured latency.
    QVERIFY2(qAbs(o["estimate_ms"].toDouble() - m["estimated_ms"].toDouble()) < 1e-9 * m["estimated_ms"].toDouble(),
             qPrintable(QString("run %1, tune %2").arg(o["estimate_ms"].toDouble()).arg(m["estimated_ms"].toDouble())));
    // Per partition: the kernels' times, each tuned one with its estimate.
    QJsonArray parts = o["partitions"].toArray();
    int tunedSteps = 0;
    for (const QJsonValue& p : parts) {
      const QJsonObject row = p.toObject();
      QVERIFY(row["measured_ms"].toDouble() > 0);
      if (!row.contains("group")) continue;
      ++tunedSteps;
      QVERIFY2(row["estimate_ms"].toDouble() > 0, qPrintable(row["step"].toString()));
      QVERIFY(qAbs(row["ratio"].toDouble() - row["measured_ms"].toDouble() / row["estimate_ms"].toDouble()) < 1e-9);
    }
    QVERIFY(tunedSteps >= 5);
    QJsonObject mem = o["memory"].toObject();
    QVERIFY(mem["arena_bytes"].toDouble() > 0 && mem["arena_bytes"].toDouble() <= mem["unshared_bytes"].toDouble());

    Run ex = runCli({"export", "--db", db, "--model", "tiny_cnn", "--out", scratch().filePath("tiny_export"),
                     "--format", "jsonl", "--json"});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    QCOMPARE(QJsonDocument::fromJson(ex.out.toUtf8()).object()["records"].toInt(), 28);

    // The model's kernels (fused subgraphs, rebuilt from the model as tuned).
    const QString kernels = scratch().filePath("tiny_kernels");
    Run k = runCli({"export", "--db", db, "--model", "tiny_cnn", "--out", kernels, "--json"});
    QVERIFY2(k.code == 0, qPrintable(k.err));
    QCOMPARE(QJsonDocument::fromJson(k.out.toUtf8()).object()["kernels"].toArray().size(), 5);
    QVERIFY(QFile::exists(kernels + "/lib/libtessel_kernels.so"));

    // A task stored for an earlier form of the model (its key is no task of the
    // model as prepared now) is skipped with a word, the others exported.
    {
      sqlite3* raw = nullptr;
      QCOMPARE(sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
      char* error = nullptr;
      const int rc = sqlite3_exec(
          raw, "UPDATE tasks SET workload_key = workload_key || '_earlier' WHERE id = (SELECT MIN(id) FROM tasks)",
          nullptr, nullptr, &error);
      sqlite3_free(error);
      sqlite3_close(raw);
      QCOMPARE(rc, SQLITE_OK);
    }
    Run stale = runCli({"export", "--db", db, "--model", "tiny_cnn", "--out", scratch().filePath("tiny_stale"),
                        "--json", "--no-compile"});
    QVERIFY2(stale.code == 0, qPrintable(stale.err));
    QVERIFY2(stale.err.contains("_earlier") && stale.err.contains("skipped"), qPrintable(stale.err));
    QCOMPARE(QJsonDocument::fromJson(stale.out.toUtf8()).object()["kernels"].toArray().size(), 4);
  }

  // A record whose steps parse but do not replay on its task (a split of
  // stage 99), stored as the cheapest: every command takes the next best and
  // says how many it skipped; the tuner leaves it out.
  void unreplayableRecordIsSkippedByEveryCommand() {
    const QString db = scratch().filePath("replay.db");
    Run tune = runCli(
        {"tune-op", "matmul", "--shape", "16,16,16", "--trials", "4", "--batch", "2", "--db", db, "--json", "--quiet"},
        300000);
    QVERIFY2(tune.code == 0, qPrintable(tune.err));
    {
      sqlite3* raw = nullptr;
      QCOMPARE(sqlite3_open_v2(db.toUtf8().constData(), &raw, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
      const int rc = sqlite3_exec(raw,
                                  "INSERT INTO records(task_id, session_id, steps, costs, cost, error_code, created) "
                                  "SELECT task_id, session_id, '[[\"SP\",99,0,[4]]]', '[1e-12,1e-12,1e-12]', 1e-12, 0, "
                                  "created FROM records LIMIT 1",
                                  nullptr, nullptr, nullptr);
      sqlite3_close(raw);
      QCOMPARE(rc, SQLITE_OK);
    }
    const int damaged = query(db, "SELECT max(id) FROM records").toInt();
    const QString key = query(db, "SELECT workload_key FROM tasks");

    Run stats = runCli({"db", "stats", "--db", db, "--json"});
    QCOMPARE(QJsonDocument::fromJson(stats.out.toUtf8()).object()["damaged_records"].toInt(), 1);
    Run best = runCli({"db", "best", "--db", db, "--json"});
    const QJsonArray rows = QJsonDocument::fromJson(best.out.toUtf8()).object()["best"].toArray();
    QCOMPARE(rows.size(), 1);
    QVERIFY(rows[0].toObject()["record"].toInt() != damaged);
    Run show = runCli({"db", "show", "--task", key, "--db", db, "--json", "--code"});
    QVERIFY2(show.code == 0, qPrintable(show.err));
    const QJsonObject shown = QJsonDocument::fromJson(show.out.toUtf8()).object()["task"].toObject();
    QCOMPARE(shown["damaged_records_skipped"].toInt(), 1);
    QVERIFY(shown["best"].toObject()["record"].toInt() != damaged);
    Run ex = runCli({"export", "--db", db, "--all", "--out", scratch().filePath("replay_kernels"), "--no-compile"});
    QVERIFY2(ex.code == 0, qPrintable(ex.err));
    QVERIFY2(ex.err.contains("skipped 1 records whose steps do not replay"), qPrintable(ex.err));
    Run resumed = runCli(
        {"tune-op", "matmul", "--shape", "16,16,16", "--trials", "6", "--batch", "2", "--db", db, "--resume", "--json"},
        300000);
    QVERIFY2(resumed.code == 0, qPrintable(resumed.err));
    QVERIFY2(resumed.err.contains("skipped 1 stored records of this task"), qPrintable(resumed.err));
  }
};

QTEST_APPLESS_MAIN(TestCli)
#include "test_cli.moc"
