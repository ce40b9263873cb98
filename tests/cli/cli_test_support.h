// What the CLI tests share: the tessel binary run as a user runs it (a real
// process, its exit code, stdout and stderr) with its default database kept
// in a scratch folder, a database read as SQLite, and the processes as
// /proc tells them.
#pragma once

#include <sqlite3.h>

#include <QDir>
#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <csignal>
#include <map>

#include "tessel_test.h"

namespace cli_test {

struct Run {
  int code;
  QString out, err;
};

// Runs without --db write here, never into the user's own database.
inline QTemporaryDir& scratch() {
  static QTemporaryDir dir;
  return dir;
}

// tmpdir: the child's TMPDIR (default: the system's). The knowledge bases
// are looked for in an empty folder, so that tunings start from the same
// nothing on every machine (whether its class has one shipped or not);
// test_cli_knowledge gives them theirs.
inline void isolate(QProcess& p, const QString& tmpdir = {}) {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("TESSEL_DB", scratch().filePath("default.db"));
  env.insert("TESSEL_KNOWLEDGE_DIR", scratch().filePath("no-knowledge"));
  if (!tmpdir.isEmpty()) env.insert("TMPDIR", tmpdir);
  p.setProcessEnvironment(env);
}

inline Run runCli(const QStringList& args, int timeoutMs = 120000) {
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
inline QString query(const QString& db, const char* sql) {
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
inline std::map<int, ProcStat> processes() {
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
inline Run interrupted(const QStringList& args, const QString& db, int records, int signal,
                       const QString& tmpdir = {}) {
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

}  // namespace cli_test
