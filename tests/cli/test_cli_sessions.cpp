// Tuning sessions through the CLI: a signal stops one cleanly and every
// session ends with a true status; nothing is left behind (temporary files,
// compilers); read-only commands write nothing; a killed tuning resumes; a
// user's files and databases are never destroyed; a stored record that no
// longer replays is skipped.
#include <sys/stat.h>
#include <unistd.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <chrono>
#include <random>
#include <thread>

#include "cli_test_support.h"

using namespace cli_test;

class TestCliSessions : public QObject {
  Q_OBJECT

 private slots:
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

QTEST_APPLESS_MAIN(TestCliSessions)
#include "test_cli_sessions.moc"
