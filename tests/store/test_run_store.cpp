// The runs table on real files: runs stored with and without a session and
// read back as they were, the newest of a session, rows that must not be
// stored refused with nothing written, and files of the schemas before runs
// (a schema 2 file, and a schema 1 file made by an older Tessel) read as
// they are and given the table by their next writer, losing nothing.
#include <sqlite3.h>

#include <QDateTime>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "store/database.h"
#include "store/run_store.h"
#include "store/session_store.h"
#include "tessel_test.h"

using namespace tessel;
using store::Database;
using store::OpenMode;
using store::RunRow;

namespace {

RunRow sampleRun(int64_t session, double tesselMs) {
  RunRow r;
  r.sessionId = session;
  r.model = "tiny_cnn";
  r.target = "cpu";
  r.fusion = "dp";
  r.result = R"({"tessel_ms":)" + std::to_string(tesselMs) + R"(,"libtorch_ms":2.5,"correct":true,"partitions":[]})";
  return r;
}

int64_t modelSession(Database& db) {
  return db.sessions().start("model", 0, db.ensureModel("tiny_cnn", "zoo"), R"({"fusion":"dp"})", 10);
}

int64_t count(const QString& path, const char* sql) {
  sqlite3* h = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return n;
}

}  // namespace

class TestRunStore : public QObject {
  Q_OBJECT

 private slots:
  void runsRoundTrip() {
    QTemporaryDir dir;
    const QString path = dir.filePath("runs.db");
    int64_t session = 0, first = 0, second = 0, loose = 0;
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      session = modelSession(*db);
      store::RunStore runs = db->runs();
      QVERIFY(runs.all().empty());
      QVERIFY(!runs.latestOfSession(session));
      first = runs.add(sampleRun(session, 1.5));
      loose = runs.add(sampleRun(0, 9.0));  // a run of no session
      second = runs.add(sampleRun(session, 1.25));
      QVERIFY(first > 0 && loose > first && second > loose);
    }
    auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
    store::RunStore runs = db->runs();
    const std::vector<RunRow> all = runs.all();
    QCOMPARE(all.size(), size_t(3));
    QCOMPARE(all[0].id, first);
    QCOMPARE(all[0].sessionId, session);
    QCOMPARE(all[1].sessionId, int64_t(0));
    QCOMPARE(all[0].model, std::string("tiny_cnn"));
    QCOMPARE(all[0].target, std::string("cpu"));
    QCOMPARE(all[0].fusion, std::string("dp"));
    QCOMPARE(all[0].result, sampleRun(session, 1.5).result);  // as given, byte for byte
    for (const RunRow& r : all) {
      const QDateTime created = QDateTime::fromString(QString::fromStdString(r.created), Qt::ISODateWithMs);
      QVERIFY2(created.isValid() && created.timeSpec() == Qt::UTC, r.created.c_str());
      QVERIFY(std::abs(created.secsTo(QDateTime::currentDateTimeUtc())) < 600);
    }
    // The newest of the session, not the newer run of no session.
    QCOMPARE(runs.latestOfSession(session)->id, second);
    QCOMPARE(runs.latestOfSession(session)->result, sampleRun(session, 1.25).result);
    QVERIFY(!runs.latestOfSession(session + 1));
  }

  // A result that is not a JSON object, a session that does not exist and a
  // database opened read-only: a StoreError, and nothing stored.
  void badRunsAreRefused() {
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.db");
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      const int64_t session = modelSession(*db);
      store::RunStore runs = db->runs();
      for (const char* result : {"", "not json", "[1, 2]", "{\"tessel_ms\": "}) {
        RunRow r = sampleRun(session, 1);
        r.result = result;
        QVERIFY_THROWS_EXCEPTION(store::StoreError, runs.add(r));
      }
      QVERIFY_THROWS_EXCEPTION(store::StoreError, runs.add(sampleRun(session + 7, 1)));
      QVERIFY(runs.all().empty());
    }
    auto reader = Database::open(path.toStdString(), OpenMode::ReadOnly);
    QVERIFY_THROWS_EXCEPTION(store::StoreError, reader->runs().add(sampleRun(1, 1)));
    QCOMPARE(count(path, "SELECT count(*) FROM runs"), int64_t(0));
  }

  // A file of schema 2 (before runs): read as it is, runs none, nothing
  // written; its next writer adds the table and keeps everything else.
  void schemaTwoFileGainsRunsTable() {
    QTemporaryDir dir;
    const QString path = dir.filePath("v2.db");
    int64_t session = 0;
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      session = modelSession(*db);
      db->sessions().close(session, "finished");
    }
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw, "DROP TABLE runs; PRAGMA user_version = 2", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
      QCOMPARE(db->stats().schemaVersion, 2);
      QVERIFY(db->runs().all().empty());
      QVERIFY(!db->runs().latestOfSession(session));
      QCOMPARE(db->sessions().all().size(), size_t(1));
    }
    QCOMPARE(count(path, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), int64_t(0));
    auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
    QCOMPARE(db->stats().schemaVersion, store::kSchemaVersion);
    QCOMPARE(store::kSchemaVersion, 4);
    QCOMPARE(db->sessions().byId(session)->status, std::string("finished"));
    const int64_t run = db->runs().add(sampleRun(session, 2));
    QCOMPARE(db->runs().latestOfSession(session)->id, run);
  }

  // A database written by a Tessel of schema 1, kept in the repository
  // (the fuzzers' corpus): it gains runs and keeps its 18 records.
  void olderTesselsFileGainsRunsTable() {
    QTemporaryDir dir;
    const QString path = dir.filePath("three_tasks.db");
    QVERIFY(QFile::copy(TESSEL_OLD_DATABASE, path));
    QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner);
    QCOMPARE(count(path, "PRAGMA user_version"), int64_t(1));
    const int64_t records = count(path, "SELECT count(*) FROM records");
    QCOMPARE(records, int64_t(18));
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
      QVERIFY(db->runs().all().empty());
    }
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      QCOMPARE(db->stats().schemaVersion, store::kSchemaVersion);
      QCOMPARE(db->stats().records, records);
      QCOMPARE(db->sessions().all().size(), size_t(3));
      db->runs().add(sampleRun(0, 3));
    }
    QCOMPARE(count(path, "SELECT count(*) FROM runs"), int64_t(1));
    QCOMPARE(count(path, "SELECT count(*) FROM records"), records);
    auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
    QCOMPARE(db->integrityCheck(), std::string("ok"));
  }
};

QTEST_GUILESS_MAIN(TestRunStore)
#include "test_run_store.moc"
