// The tuning database on real files: round trip, bad files left untouched,
// one writer with readers beside it, resume without re-measuring, and an
// export that builds with CMake and computes the right answer.
#include <sqlite3.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <array>
#include <atomic>
#include <functional>
#include <set>
#include <thread>

#include "../core/small_tuning.h"
#include "export/kernel_export.h"
#include "schedule/steps.h"
#include "search/tuner.h"
#include "store/cost_model_store.h"
#include "store/database.h"
#include "store/record_store.h"
#include "store/session_store.h"
#include "store/task_rows.h"
#include "tessel_test.h"
#include "tuning/tuning_recorder.h"

using namespace tessel;
using store::Database;
using store::OpenMode;
using store::StoreError;
using testing::smallTuning;

namespace {

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void writeAll(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

std::pair<int, QString> runProcess(const QStringList& args) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(args[0], args.mid(1));
  p.waitForFinished(300000);
  return std::make_pair(p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll()));
}

// A user's project in `user` that builds the export in `exported` with CMake
// (add_subdirectory) and runs `main` linked against it, with %M, %N, %K and
// %FN replaced by the sizes and the exported function: it must exit 0.
void checkUserProgram(const QString& user, const QString& exported, QByteArray main, std::array<int64_t, 3> mnk,
                      const std::string& function) {
  main.replace("%M", QByteArray::number(mnk[0])).replace("%N", QByteArray::number(mnk[1]));
  main.replace("%K", QByteArray::number(mnk[2])).replace("%FN", QByteArray::fromStdString(function));
  QDir().mkpath(user);
  writeAll(user + "/CMakeLists.txt", QByteArray("cmake_minimum_required(VERSION 3.16)\nproject(user CXX)\n"
                                                "add_subdirectory(") +
                                         exported.toUtf8() +
                                         " kernels)\nadd_executable(check main.cpp)\n"
                                         "target_link_libraries(check tessel_kernels)\n");
  writeAll(user + "/main.cpp", main);
  auto [cfg, cfgOut] = runProcess({"cmake", "-S", user, "-B", user + "/build", "-DCMAKE_BUILD_TYPE=Release"});
  QVERIFY2(cfg == 0, qPrintable(cfgOut));
  auto [bld, bldOut] = runProcess({"cmake", "--build", user + "/build"});
  QVERIFY2(bld == 0, qPrintable(bldOut));
  auto [chk, chkOut] = runProcess({user + "/build/check"});
  QVERIFY2(chk == 0, qPrintable(chkOut));
  QVERIFY(chkOut.contains("max abs error"));
}

// A few measured trials of `task`, recorded in the database at `path`.
void tuneInto(const std::string& path, const task::SearchTask& task, int trials) {
  auto db = Database::open(path, OpenMode::ReadWrite);
  search::TuneOptions o = smallTuning(trials);
  tuning::TuningRecorder rec(*db, task, "{}", trials, false);
  rec.attach(o);
  rec.finish(search::tuneTask(task, o));
}

// The StoreError message of opening `path`, or "" if it opened.
QString openError(const QString& path, OpenMode mode) {
  try {
    Database::open(path.toStdString(), mode);
  } catch (const StoreError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

store::TaskRow sampleTask(const std::string& key = "matmul_8_8_8_0000abcd") {
  store::TaskRow t;
  t.key = key;
  t.op = "matmul";
  t.shape = {8, 8, 8};
  t.compute = "C[i, j] += A[i, k] * B[k, j]";
  t.flops = 1024;
  return t;
}

store::RecordRow sampleRecord(int64_t task, int64_t session, int i, bool ok) {
  store::RecordRow r;
  r.taskId = task;
  r.sessionId = session;
  r.steps = "[[\"SP\",2,0,[" + std::to_string(i) + "]]]";
  r.decisions = "{\"sketch\":0,\"choices\":{}}";
  if (ok) r.costs = {1e-3 * (i + 1), 1.1e-3 * (i + 1), 0.9e-3 * (i + 1)};
  r.errorCode = ok ? 0 : 5;
  r.errorMessage = ok ? "" : "wrong answer: max error 3.5";
  r.predicted = ok ? 0.5 + i : std::nan("");
  r.costModel = "xgb";
  r.buildSeconds = 0.25;
  r.runSeconds = 0.01 * i;
  return r;
}

}  // namespace

class TestStore : public QObject {
  Q_OBJECT

 private slots:
  void recordsRoundTrip() {
    QTemporaryDir dir;
    const QString path = dir.filePath("t.db");
    int64_t task = 0, session = 0;
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      task = db->ensureTask(sampleTask());
      QCOMPARE(db->ensureTask(sampleTask()), task);  // by key: one row
      session = db->sessions().start("task", task, 0, R"({"trials": 10})", 10);
      std::vector<store::RecordRow> rows;
      for (int i = 0; i < 10; ++i)
        rows.push_back(sampleRecord(task, session, i, i % 3 != 2));
      db->records().add(rows);
      db->costModels().save(task, session, "xgb", 10, std::string("\x00\x01model", 7));
      db->sessions().close(session, "finished");
    }
    auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
    std::vector<store::RecordRow> back = db->records().ofTask(task);
    QCOMPARE(back.size(), size_t(10));
    for (int i = 0; i < 10; ++i) {
      store::RecordRow want = sampleRecord(task, session, i, i % 3 != 2);
      QCOMPARE(back[i].steps, want.steps);
      QCOMPARE(back[i].decisions, want.decisions);
      QCOMPARE(back[i].costs, want.costs);
      QCOMPARE(back[i].errorCode, want.errorCode);
      QCOMPARE(back[i].errorMessage, want.errorMessage);
      QCOMPARE(std::isnan(back[i].predicted), std::isnan(want.predicted));
      if (!std::isnan(want.predicted)) QCOMPARE(back[i].predicted, want.predicted);
      QCOMPARE(back[i].costModel, want.costModel);
      QCOMPARE(back[i].runSeconds, want.runSeconds);
      QVERIFY(!back[i].created.empty());
    }
    store::Stats s = db->stats();
    QCOMPARE(s.records, int64_t(10));
    QCOMPARE(s.validRecords, int64_t(7));
    QCOMPARE(s.distinctPrograms, int64_t(10));
    QCOMPARE(s.sessions, int64_t(1));
    QCOMPARE(s.tasks, int64_t(1));
    QCOMPARE(s.costModels, int64_t(1));
    QCOMPARE(s.schemaVersion, store::kSchemaVersion);
    std::vector<store::BestRow> best = db->records().best();
    QCOMPARE(best.size(), size_t(1));
    QCOMPARE(best[0].record.steps, sampleRecord(task, session, 0, true).steps);  // the cheapest
    QCOMPARE(best[0].task.key, sampleTask().key);
    std::vector<store::SessionRow> sessions = db->sessions().all();
    QCOMPARE(sessions.size(), size_t(1));
    QCOMPARE(sessions[0].status, std::string("finished"));
    QCOMPARE(sessions[0].records, int64_t(10));
    QCOMPARE(sessions[0].validRecords, int64_t(7));
    QCOMPARE(db->integrityCheck(), std::string("ok"));
  }

  void badFilesAreNamedAndLeftAsTheyWere() {
    QTemporaryDir dir;
    QVERIFY(openError(dir.filePath("missing.db"), OpenMode::ReadOnly).contains("no such database"));
    QVERIFY(!QFile::exists(dir.filePath("missing.db")));

    const QString text = dir.filePath("notes.db");
    writeAll(text, QByteArray("these are my notes, not a database\n").repeated(40));
    const QByteArray textBytes = readAll(text);
    for (OpenMode m : {OpenMode::ReadOnly, OpenMode::ReadWrite})
      QVERIFY2(openError(text, m).contains("not an SQLite database"), qPrintable(openError(text, m)));
    QCOMPARE(readAll(text), textBytes);

    QVERIFY(openError(dir.path(), OpenMode::ReadOnly).contains("is a directory"));

    // A good database, then a truncated copy of it.
    const QString good = dir.filePath("good.db");
    {
      auto db = Database::open(good.toStdString(), OpenMode::ReadWrite);
      int64_t task = db->ensureTask(sampleTask());
      int64_t session = db->sessions().start("task", task, 0, "{}", 400);
      std::vector<store::RecordRow> rows;
      for (int i = 0; i < 400; ++i)
        rows.push_back(sampleRecord(task, session, i, true));
      db->records().add(rows);
      db->connection().exec("PRAGMA wal_checkpoint(TRUNCATE)");
    }
    const QByteArray goodBytes = readAll(good);
    QVERIFY(goodBytes.size() > 16384);
    const QString truncated = dir.filePath("truncated.db");
    writeAll(truncated, goodBytes.left(goodBytes.size() / 2));
    const QByteArray truncatedBytes = readAll(truncated);
    for (OpenMode m : {OpenMode::ReadOnly, OpenMode::ReadWrite})
      QVERIFY2(openError(truncated, m).contains("corrupt"), qPrintable(openError(truncated, m)));
    QCOMPARE(readAll(truncated), truncatedBytes);

    // Garbage over the pages after the header: corrupt, not a crash.
    const QString scribbled = dir.filePath("scribbled.db");
    QByteArray bytes = goodBytes;
    for (int i = 4096; i < bytes.size(); i += 7)
      bytes[i] = char(i * 31);
    writeAll(scribbled, bytes);
    for (OpenMode m : {OpenMode::ReadOnly, OpenMode::ReadWrite})
      QVERIFY2(openError(scribbled, m).contains("corrupt"), qPrintable(openError(scribbled, m)));
    QCOMPARE(readAll(scribbled), bytes);

    // A newer schema.
    const QString newer = dir.filePath("newer.db");
    QVERIFY(QFile::copy(good, newer));
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(newer.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw, "PRAGMA journal_mode=DELETE; PRAGMA user_version = 99", nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(raw);
    const QByteArray newerBytes = readAll(newer);
    for (OpenMode m : {OpenMode::ReadOnly, OpenMode::ReadWrite})
      QVERIFY2(openError(newer, m).contains("schema version 99, newer"), qPrintable(openError(newer, m)));
    QCOMPARE(readAll(newer), newerBytes);

    // Someone else's SQLite file.
    const QString foreign = dir.filePath("foreign.db");
    QCOMPARE(sqlite3_open(foreign.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw, "CREATE TABLE contacts(name TEXT); INSERT INTO contacts VALUES ('ada')", nullptr,
                          nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(raw);
    const QByteArray foreignBytes = readAll(foreign);
    QVERIFY(openError(foreign, OpenMode::ReadWrite).contains("not Tessel's"));
    QCOMPARE(readAll(foreign), foreignBytes);

    // Tessel's, with a table dropped or a column gone: refused by name, untouched.
    for (const char* damage :
         {"DROP TABLE cost_models", "DROP TABLE records", "ALTER TABLE sessions DROP COLUMN trials_target"}) {
      const QString damaged = dir.filePath("damaged.db");
      QFile::remove(damaged);
      QVERIFY(QFile::copy(good, damaged));
      QCOMPARE(sqlite3_open(damaged.toUtf8().constData(), &raw), SQLITE_OK);
      QCOMPARE(
          sqlite3_exec(raw, (std::string("PRAGMA journal_mode=DELETE; ") + damage).c_str(), nullptr, nullptr, nullptr),
          SQLITE_OK);
      sqlite3_close(raw);
      const QByteArray damagedBytes = readAll(damaged);
      const QString expected = QString(damage).contains("COLUMN")    ? "table 'sessions' has no column 'trials_target'"
                               : QString(damage).contains("records") ? "its table 'records' is missing"
                                                                     : "its table 'cost_models' is missing";
      for (OpenMode m : {OpenMode::ReadOnly, OpenMode::ReadWrite})
        QVERIFY2(openError(damaged, m).contains(expected), qPrintable(openError(damaged, m)));
      QCOMPARE(readAll(damaged), damagedBytes);
    }
  }

  // Records whose steps no longer parse (a damaged or edited file) are
  // counted by stats(); the database is still used.
  // Costs a reader cannot use (0, negative, infinite: a hand-edited or
  // damaged file) are skipped by every reader, and refused when written.
  void unusableCostsAreSkippedAndRefused() {
    QTemporaryDir dir;
    const QString path = dir.filePath("c.db");
    int64_t task = 0, session = 0;
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      task = db->ensureTask(sampleTask());
      session = db->sessions().start("task", task, 0, "{}", 5);
      std::vector<store::RecordRow> rows;
      for (int i = 0; i < 5; ++i)
        rows.push_back(sampleRecord(task, session, i, true));
      db->records().add(rows);
      for (double bad : {0.0, -1e-3, std::numeric_limits<double>::infinity(), std::nan("")}) {
        std::vector<store::RecordRow> more = {sampleRecord(task, session, 7, true)};
        more.push_back(sampleRecord(task, session, 8, true));
        more[1].costs[1] = bad;
        QVERIFY_THROWS_EXCEPTION(StoreError, db->records().add(more));
      }
      QCOMPARE(db->stats().records, int64_t(5));  // nothing of a refused batch
    }
    // Edited by hand: record 1 costs -1e308, record 2 infinity, record 3 zero.
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw,
                          "UPDATE records SET cost = -1e308, costs = '[-1e308]' WHERE id = 1;"
                          "UPDATE records SET cost = 9e999, costs = '[1e-3, -2e-3]' WHERE id = 2;"
                          "UPDATE records SET cost = 0, costs = '[0]' WHERE id = 3;",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(raw);
    auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
    const std::vector<store::BestRow> best = db->records().best();
    QCOMPARE(best.size(), size_t(1));
    QCOMPARE(best[0].record.id, int64_t(4));  // the cheapest usable one
    QCOMPARE(best[0].record.medianCost(), 4e-3);
    const store::SessionRow s = db->sessions().all().at(0);
    QCOMPARE(s.validRecords, int64_t(2));
    QCOMPARE(s.bestCost, 4e-3);
    QCOMPARE(db->stats().validRecords, int64_t(2));
    const std::vector<store::RecordRow> back = db->records().ofTask(task);
    QVERIFY(!back[0].ok() && !back[2].ok());             // no usable time left
    QCOMPARE(back[1].costs, std::vector<double>{1e-3});  // the usable one kept
  }

  // Schema 2 added why a session failed: a schema 1 file is read as it is
  // and migrated by its next writer; a failed session keeps its reason.
  void schemaOneIsReadAndMigrated() {
    QTemporaryDir dir;
    const QString path = dir.filePath("v1.db");
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      const int64_t task = db->ensureTask(sampleTask());
      db->sessions().close(db->sessions().start("task", task, 0, "{}", 4), "finished");
      db->sessions().fail(db->sessions().start("task", task, 0, "{}", 4), "the compiler is gone");
    }
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
      QCOMPARE(db->sessions().all().at(1).status, std::string("failed"));
      QCOMPARE(db->sessions().all().at(1).message, std::string("the compiler is gone"));
    }
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw, "ALTER TABLE sessions DROP COLUMN message; PRAGMA user_version = 1", nullptr, nullptr,
                          nullptr),
             SQLITE_OK);
    sqlite3_close(raw);
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
      QCOMPARE(db->stats().schemaVersion, 1);
      QCOMPARE(db->sessions().all().size(), size_t(2));
      QCOMPARE(db->sessions().all().at(1).message, std::string());
    }
    auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
    QCOMPARE(db->stats().schemaVersion, store::kSchemaVersion);
    db->sessions().fail(2, "again");
    QCOMPARE(db->sessions().byId(2)->message, std::string("again"));
  }

  // What the scoring model knew is stored with each record; a file of
  // schema 3 (before it was) reads as "not known" and gains the columns.
  void scoringModelStateRoundTripsAndOlderFilesReadWithout() {
    QTemporaryDir dir;
    const QString path = dir.filePath("v3.db");
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
      const int64_t task = db->ensureTask(sampleTask());
      const int64_t session = db->sessions().start("task", task, 0, "{}", 3);
      std::vector<store::RecordRow> rows = {sampleRecord(task, session, 0, true), sampleRecord(task, session, 1, true),
                                            sampleRecord(task, session, 2, false)};
      rows[0].modelTrainedOn = 0;  // an untrained model's score
      rows[1].modelTrainedOn = 8;
      rows[1].modelPretrained = true;
      db->records().add(rows);
      const std::vector<store::RecordRow> back = db->records().ofSession(session);
      QCOMPARE(back.size(), size_t(3));
      QVERIFY(back[0].scoredUntrained());
      QCOMPARE(back[1].modelTrainedOn, int64_t(8));
      QVERIFY(back[1].modelPretrained && !back[1].scoredUntrained());
      QCOMPARE(back[2].modelTrainedOn, int64_t(-1));  // not scored
      QVERIFY(!back[2].scoredUntrained());
    }
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw,
                          "ALTER TABLE records DROP COLUMN model_trained_on; ALTER TABLE records DROP COLUMN "
                          "model_pretrained; PRAGMA user_version = 3",
                          nullptr, nullptr, nullptr),
             SQLITE_OK);
    sqlite3_close(raw);
    {
      auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
      QCOMPARE(db->stats().schemaVersion, 3);
      const std::vector<store::RecordRow> back = db->records().all();
      QCOMPARE(back.size(), size_t(3));
      for (const store::RecordRow& r : back)
        QVERIFY(r.modelTrainedOn == -1 && !r.modelPretrained);
    }
    auto db = Database::open(path.toStdString(), OpenMode::ReadWrite);
    QCOMPARE(db->stats().schemaVersion, store::kSchemaVersion);
    QCOMPARE(db->records().all().size(), size_t(3));
    QCOMPARE(db->records().all().front().modelTrainedOn, int64_t(-1));
  }

  // A task whose stored shape is not a list of dimensions is named.
  void damagedShapeNamesTheTask() {
    QTemporaryDir dir;
    const QString path = dir.filePath("s.db");
    Database::open(path.toStdString(), OpenMode::ReadWrite)->ensureTask(sampleTask());
    for (const char* shape : {"{garbage", "[64, \"x\", -3]", "{}", "[8, -8]"}) {
      sqlite3* raw = nullptr;
      QCOMPARE(sqlite3_open(path.toUtf8().constData(), &raw), SQLITE_OK);
      const std::string sql = std::string("UPDATE tasks SET shape = '") + shape + "'";
      QCOMPARE(sqlite3_exec(raw, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
      sqlite3_close(raw);
      auto db = Database::open(path.toStdString(), OpenMode::ReadOnly);
      try {
        db->tasks();
        QFAIL(qPrintable(QString("shape %1 was accepted").arg(shape)));
      } catch (const StoreError& e) {
        const std::string want = "task 1 (" + sampleTask().key + ") is damaged: its shape";
        QVERIFY2(std::string(e.what()).find(want) != std::string::npos, e.what());
      }
    }
  }

  // A task's target is stored as its canonical string and read back as the
  // same Target; a string this build cannot read is named with its task,
  // and rebuilding such a task is refused rather than done for another target.
  void targetsRoundTripThroughTheirRows() {
    const task::SearchTask one =
        task::makeOperatorTask("matmul", {8, 8, 8}, tessel::target::parseTarget("cpu -threads=1  -arch=x86-64-v2"));
    store::TaskRow row = store::taskRowOf(one);
    QCOMPARE(row.target, std::string("cpu -arch=x86-64-v2 -threads=1"));
    QCOMPARE(store::targetOf(row), one.target);
    QCOMPARE(store::operatorTaskOf(row).target, one.target);
    QCOMPARE(
        store::taskRowOf(task::makeOperatorTask("matmul", {8, 8, 8}, tessel::target::Target::cuda("sm_90"))).target,
        std::string("cuda -arch=sm_90"));
    row.target = "gpu";
    for (auto read : {std::function<void()>([&] { store::targetOf(row); }),
                      std::function<void()>([&] { store::operatorTaskOf(row); })})
      try {
        read();
        QFAIL("no error for target gpu");
      } catch (const std::runtime_error& e) {
        QVERIFY2(QByteArray(e.what()).contains("unknown target kind 'gpu'") &&
                     QByteArray(e.what()).contains(QByteArray::fromStdString(one.key)),
                 e.what());
      }
  }

  // --db in a folder that does not exist is refused, not created.
  void missingFolderIsRefused() {
    QTemporaryDir dir;
    const QString path = dir.filePath("no/such/folder/t.db");
    QVERIFY2(openError(path, OpenMode::ReadWrite).contains("/no/such/folder does not exist"),
             qPrintable(openError(path, OpenMode::ReadWrite)));
    QVERIFY(!QFileInfo::exists(dir.filePath("no")));
    writeAll(dir.filePath("file"), "x");
    QVERIFY(openError(dir.filePath("file/t.db"), OpenMode::ReadWrite).contains("file is not a folder"));
  }

  void damagedStepsAreCounted() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("d.db").toStdString(), OpenMode::ReadWrite);
    const int64_t task = db->ensureTask(sampleTask());
    const int64_t session = db->sessions().start("task", task, 0, "{}", 3);
    std::vector<store::RecordRow> rows = {sampleRecord(task, session, 0, true), sampleRecord(task, session, 1, true),
                                          sampleRecord(task, session, 2, true)};
    rows[0].steps = "[]";  // the naive program: parses
    rows[1].steps = "[[\"XX\", 1]]";
    rows[2].steps = "not json {";
    db->records().add(rows);
    const store::Stats s = db->stats();
    QCOMPARE(s.records, int64_t(3));
    QCOMPARE(s.damagedRecords, int64_t(2));
  }

  void unreplayableRecordsAreSkipped() {
    // Steps that parse but do not replay on their task (a split of stage 99
    // of a matmul), stored as the best record: every reader takes the next
    // best, the tuner leaves it out, and each says how many it skipped.
    QTemporaryDir dir;
    const std::string path = dir.filePath("replay.db").toStdString();
    const task::SearchTask task = task::makeOperatorTask("matmul", {16, 16, 16}, tessel::target::Target::host());
    tuneInto(path, task, 4);
    int64_t taskId = 0, damagedId = 0;
    size_t stored = 0;
    {
      auto db = Database::open(path, OpenMode::ReadWrite);
      taskId = db->taskByKey(task.key)->id;
      const std::vector<store::RecordRow> rows = db->records().ofTask(taskId);
      stored = rows.size();
      store::RecordRow bad = rows.front();
      bad.steps = R"([["SP",99,0,[4]]])";
      bad.errorCode = 0;
      bad.costs = {1e-12, 1e-12, 1e-12};
      db->records().add({bad});
      damagedId = db->records().ofTask(taskId).back().id;
    }
    schedule::deserializeSteps(R"([["SP",99,0,[4]]])");  // it parses: only replaying finds it
    QVERIFY(!schedule::replayableSteps(task.dag, R"([["SP",99,0,[4]]])"));

    auto db = Database::open(path, OpenMode::ReadOnly);
    QCOMPARE(db->records().best(taskId).at(0).record.id, damagedId);  // the cheapest, as stored
    int64_t skipped = 0;
    const std::optional<store::BestRow> best = store::bestReplayable(*db, taskId, task.dag, &skipped);
    QVERIFY(best);
    QVERIFY(best->record.id != damagedId);
    QCOMPARE(skipped, int64_t(1));

    exporter::KernelExportOptions noCompile;
    noCompile.compile = false;
    const exporter::ExportResult res =
        exporter::exportKernels(*db, db->tasks(), dir.filePath("out").toStdString(), noCompile);
    QCOMPARE(res.damagedRecordsSkipped, int64_t(1));
    QCOMPARE(res.kernels.size(), size_t(1));
    QVERIFY(res.kernels[0].latencyMs > 1e-6);  // not the damaged record's 1e-12 s
    const std::string source = exporter::bestKernelSource(*db, *db->taskByKey(task.key));
    QVERIFY2(source.find("record " + std::to_string(best->record.id) + ".") != std::string::npos, source.c_str());

    auto rw = Database::open(path, OpenMode::ReadWrite);
    tuning::TuningRecorder rec(*rw, task, "{}", 8, true);
    QCOMPARE(rec.damagedRecords(), size_t(1));
    QCOMPARE(rec.previousTrials() + rec.knownRecords(), stored);
    rec.stop();
  }

  void oneWriterManyReaders() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("live.db").toStdString();
    auto writer = Database::open(path, OpenMode::ReadWrite);
    QString second = openError(QString::fromStdString(path), OpenMode::ReadWrite);
    QVERIFY2(second.contains("being written by another"), qPrintable(second));

    int64_t task = writer->ensureTask(sampleTask());
    int64_t session = writer->sessions().start("task", task, 0, "{}", 4000);
    std::atomic<bool> done{false};
    std::atomic<int> reads{0}, regressions{0};
    std::string readerError;
    std::thread reader([&] {
      try {
        auto db = Database::open(path, OpenMode::ReadOnly);
        int64_t last = 0;
        while (!done) {
          store::Stats s = db->stats();
          // Batches land whole: counts only grow, in steps of a batch.
          if (s.records < last || s.records % 50 != 0) ++regressions;
          last = s.records;
          ++reads;
        }
      } catch (const std::exception& e) {
        readerError = e.what();
      }
    });
    for (int b = 0; b < 40; ++b) {
      std::vector<store::RecordRow> rows;
      for (int i = 0; i < 50; ++i)
        rows.push_back(sampleRecord(task, session, b * 50 + i, true));
      writer->records().add(rows);
    }
    done = true;
    reader.join();
    QVERIFY2(readerError.empty(), readerError.c_str());
    QVERIFY(reads > 0);
    QCOMPARE(regressions.load(), 0);
    QCOMPARE(writer->stats().records, int64_t(2000));
    writer.reset();
    // The lock goes with the writer.
    QVERIFY(openError(QString::fromStdString(path), OpenMode::ReadWrite).isEmpty());
  }

  void resumeSkipsMeasuredPrograms() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("resume.db").toStdString();
    task::SearchTask task = task::makeOperatorTask("matmul", {24, 16, 32}, tessel::target::Target::host());
    {
      auto db = Database::open(path, OpenMode::ReadWrite);
      search::TuneOptions o = smallTuning(16);
      tuning::TuningRecorder rec(*db, task, "{}", 16, false);
      rec.attach(o);
      search::TuneResult r = search::tuneTask(task, o);
      QCOMPARE(r.trials, 16);
      rec.stop();  // as if interrupted
    }
    {
      auto db = Database::open(path, OpenMode::ReadWrite);
      search::TuneOptions o = smallTuning(40);
      o.seed = 1;  // the same seed: random search would propose the same programs again
      tuning::TuningRecorder rec(*db, task, "{}", 40, true);
      QVERIFY(rec.resumed());
      QCOMPARE(rec.previousTrials(), size_t(16));
      rec.attach(o);
      search::TuneResult r = search::tuneTask(task, o);
      QCOMPARE(r.trials, 40);
      rec.finish(r);
    }
    auto db = Database::open(path, OpenMode::ReadOnly);
    store::Stats s = db->stats();
    QCOMPARE(s.records, int64_t(40));
    QCOMPARE(s.distinctPrograms, int64_t(40));
    QCOMPARE(s.sessions, int64_t(1));
    QCOMPARE(db->sessions().all()[0].status, std::string("finished"));
  }

  void evolutionaryResumeWarmStartsFromStoredDecisions() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("evo.db").toStdString();
    task::SearchTask task = task::makeOperatorTask("matmul", {32, 32, 32}, tessel::target::Target::host());
    auto db = Database::open(path, OpenMode::ReadWrite);
    search::TuneOptions o = smallTuning(16);
    o.search = "evolutionary";
    o.costModel = "xgb";
    o.evolution.population = 64;
    {
      tuning::TuningRecorder rec(*db, task, "{}", 16, false);
      rec.attach(o);
      search::tuneTask(task, o);
      rec.stop();
    }
    std::vector<store::RecordRow> stored = db->records().ofTask(1);
    QCOMPARE(stored.size(), size_t(16));
    int withDecisions = 0, predicted = 0;
    for (const auto& r : stored) {
      if (!r.decisions.empty()) {
        ++withDecisions;
        schedule::ProgramDecisions d = schedule::deserializeDecisions(r.decisions);
        QVERIFY(!d.choices.empty());
      }
      if (!std::isnan(r.predicted)) {
        ++predicted;
        QCOMPARE(r.costModel, std::string("xgb"));
      }
    }
    QCOMPARE(withDecisions, 16);               // every proposal carries its decisions
    QVERIFY(predicted >= 8);                   // the model-ranked part of each batch has a score
    search::TuneOptions o2 = smallTuning(32);  // fresh: o's callback belongs to the first recorder
    o2.search = o.search;
    o2.costModel = o.costModel;
    o2.evolution = o.evolution;
    tuning::TuningRecorder rec(*db, task, "{}", 32, true);
    QVERIFY(rec.resumed());
    rec.attach(o2);
    search::TuneResult r = search::tuneTask(task, o2);
    QCOMPARE(r.trials, 32);
    rec.finish(r);
    QCOMPARE(db->stats().distinctPrograms, int64_t(32));
    QCOMPARE(db->stats().costModels, int64_t(1));  // the trained xgb model is kept
  }

  // The studio exports what it can: a task without a valid record and a
  // fused subgraph whose definition is not given are left out, each with
  // its reason; with the definition, the fused task is exportable.
  void planLeavesOutWhatCannotBeExported() {
    QTemporaryDir dir;
    auto db = Database::open(dir.filePath("plan.db").toStdString(), OpenMode::ReadWrite);
    task::SearchTask good = task::makeOperatorTask("matmul", {8, 8, 8}, tessel::target::Target::host());
    task::SearchTask failing = task::makeOperatorTask("matmul", {16, 8, 8}, tessel::target::Target::host());
    task::SearchTask fused = task::makeOperatorTask("relu", {64}, tessel::target::Target::host());
    fused.op = "fused_relu_subgraph";  // a model's subgraph: op and shape cannot rebuild it
    const int64_t s = db->sessions().start("task", 0, 0, "{}", 3);
    std::vector<store::RecordRow> records;
    for (const task::SearchTask* t : {&good, &failing, &fused}) {
      store::RecordRow r = sampleRecord(db->ensureTask(store::taskRowOf(*t)), s, 0, t != &failing);
      r.steps = "[]";
      records.push_back(r);
    }
    db->records().add(records);
    std::vector<store::TaskRow> rows = db->tasks();
    QCOMPARE(rows.size(), size_t(3));

    exporter::KernelExportPlan plan = exporter::planKernelExport(*db, rows);
    QCOMPARE(plan.tasks.size(), size_t(1));
    QCOMPARE(plan.tasks[0].key, good.key);
    QCOMPARE(plan.skipped.size(), size_t(2));
    for (const auto& [row, why] : plan.skipped) {
      if (row.key == failing.key)
        QVERIFY2(why.find("no valid record") != std::string::npos, why.c_str());
      else
        QVERIFY2(row.key == fused.key && why.find("cannot rebuild") != std::string::npos, why.c_str());
    }

    exporter::KernelExportOptions withDefinition;
    withDefinition.definitions[fused.key] = fused.dag;
    plan = exporter::planKernelExport(*db, rows, withDefinition);
    QCOMPARE(plan.tasks.size(), size_t(2));
    QCOMPARE(plan.skipped.size(), size_t(1));
  }

  void exportBuildsWithCMakeAndComputesTheReference() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("export.db").toStdString();
    const int64_t M = 24, N = 40, K = 16;
    task::SearchTask task = task::makeOperatorTask("matmul", {M, N, K}, tessel::target::Target::host());
    tuneInto(path, task, 8);
    auto db = Database::open(path, OpenMode::ReadOnly);
    const QString out = dir.filePath("kernels");
    exporter::ExportResult res = exporter::exportKernels(*db, db->tasks(), out.toStdString());
    QCOMPARE(res.kernels.size(), size_t(1));
    QVERIFY(QFile::exists(out + "/lib/libtessel_kernels.so"));
    QVERIFY(QFile::exists(out + "/include/tessel_kernels.h"));
    QJsonObject manifest = QJsonDocument::fromJson(readAll(out + "/manifest.json")).object();
    QJsonObject k = manifest["kernels"].toArray().at(0).toObject();
    QCOMPARE(k["task"].toString().toStdString(), task.key);
    QCOMPARE(k["function"].toString().toStdString(), res.kernels[0].function);
    QVERIFY(k["latency_ms"].toDouble() > 0);
    QCOMPARE(k["arguments"].toArray().size(), 3);
    QCOMPARE(manifest["target"].toString(), QString("cpu"));

    // A user's project that builds the export with CMake and checks a call.
    QByteArray main = R"(#include <cmath>
#include <cstdio>
#include <vector>
#include "tessel_kernels.h"
int main() {
  const int M = %M, N = %N, K = %K;
  std::vector<float> a(M * K), b(K * N), c(M * N, -1.0f);
  for (int i = 0; i < M * K; ++i) a[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < K * N; ++i) b[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  if (%FN(a.data(), b.data(), c.data()) != 0) return 2;
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += double(a[i * K + k]) * b[k * N + j];
      worst = std::fmax(worst, std::fabs(ref - c[i * N + j]));
    }
  std::printf("max abs error %g\n", worst);
  return worst < 1e-4 ? 0 : 1;
}
)";
    checkUserProgram(dir.filePath("user"), out, main, {M, N, K}, res.kernels[0].function);

    // Records as CSV and JSON lines: a header and one line per record.
    exporter::ExportResult csv = exporter::exportRecords(*db, db->tasks(), out.toStdString(), "csv");
    QCOMPARE(csv.records, size_t(8));
    QList<QByteArray> lines = readAll(out + "/records.csv").trimmed().split('\n');
    QCOMPARE(lines.size(), 9);
    QVERIFY(lines[0].startsWith("id,task,session,steps"));
    exporter::exportRecords(*db, db->tasks(), out.toStdString(), "jsonl");
    for (const QByteArray& line : readAll(out + "/records.jsonl").trimmed().split('\n')) {
      QJsonObject o = QJsonDocument::fromJson(line).object();
      QVERIFY(o.contains("steps") && o["steps"].isArray());
      QCOMPARE(o["task"].toString().toStdString(), task.key);
    }
  }

  // A kernel that reads its weights packed (lower/layout_rewrite.h) is
  // exported with its packing: plain weights, packed once, or packed per call
  // all compute dense(X, W) + bias.
  void exportOfPackedWeightsOffersAllEntryPoints() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("export.db").toStdString();
    const int64_t M = 8, N = 48, K = 40;
    task::SearchTask task = task::makeOperatorTask("dense", {M, N, K}, tessel::target::Target::host());
    tuneInto(path, task, 2);
    {
      auto db = Database::open(path, OpenMode::ReadWrite);
      // The best record: output features in blocks of 16 inside the reduction,
      // which reads W[N][K] block by block (packed as [N/16][K][16]).
      store::RecordRow r = db->records().ofTask(db->tasks().at(0).id).at(0);
      r.id = 0;
      r.steps = schedule::serializeSteps({schedule::SplitStep{3, 1, {16}}, schedule::ReorderStep{3, {1, 0, 3, 2}}});
      r.costs = {1e-9};
      db->records().add({r});
    }
    auto db = Database::open(path, OpenMode::ReadOnly);
    const QString out = dir.filePath("kernels");
    exporter::ExportResult res = exporter::exportKernels(*db, db->tasks(), out.toStdString());
    QCOMPARE(res.kernels.size(), size_t(1));
    QJsonObject k =
        QJsonDocument::fromJson(readAll(out + "/manifest.json")).object()["kernels"].toArray()[0].toObject();
    QJsonArray packed = k["packed"].toArray();
    QCOMPARE(packed.size(), 1);
    QCOMPARE(packed[0].toObject()["name"].toString(), QString("W"));
    QCOMPARE(packed[0].toObject()["elements"].toInteger(), qint64(N * K));

    QByteArray main = R"(#include <cmath>
#include <cstdio>
#include <vector>
#include "tessel_kernels.h"
int main() {
  const int M = %M, N = %N, K = %K;
  std::vector<float> x(M * K), w(N * K), bias(N), packed(N * K, NAN), c1(M * N, -1.0f), c2(M * N, -1.0f);
  for (int i = 0; i < M * K; ++i) x[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  for (int i = 0; i < N * K; ++i) w[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < N; ++i) bias[i] = float(i % 3) - 1.0f;
  if (%FN(x.data(), w.data(), bias.data(), c1.data()) != 0) return 2;
  if (%FN_pack(w.data(), packed.data()) != 0) return 3;
  if (%FN_prepacked(x.data(), packed.data(), bias.data(), c2.data()) != 0) return 4;
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double ref = bias[j];
      for (int k = 0; k < K; ++k) ref += double(x[i * K + k]) * w[j * K + k];
      worst = std::fmax(worst, std::fmax(std::fabs(ref - c1[i * N + j]), std::fabs(ref - c2[i * N + j])));
    }
  std::printf("max abs error %g\n", worst);
  return worst < 1e-4 ? 0 : 1;
}
)";
    checkUserProgram(dir.filePath("user"), out, main, {M, N, K}, res.kernels[0].function);
  }
};

QTEST_GUILESS_MAIN(TestStore)
#include "test_store.moc"
