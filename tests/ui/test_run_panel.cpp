// The studio's Run: the tuned model run against LibTorch by the real `tessel
// run` in a child process, from a real main window on a database a real
// tuning filled. The panel's figures, table and chart, the graph's measured
// heat, the run stored with its session and shown again, failures that leave
// the window usable, a database of the schema before runs, and a run that
// follows a tuning of a time budget.
#include <qcustomplot.h>
#include <sqlite3.h>

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <set>

#include "frontend/model_loader.h"
#include "store/database.h"
#include "tessel_test.h"
#include "ui/graph_layout.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/main_window.h"
#include "ui/model_run.h"
#include "ui/run_controller.h"
#include "ui/run_panel.h"
#include "ui/search_space_view.h"

using tessel::ui::GraphView;
using tessel::ui::MainWindow;
using tessel::ui::RunController;
using tessel::ui::RunPanel;

namespace {

// How long one run of tiny_cnn may take on two busy cores (kernels built, LibTorch loaded).
constexpr int kRunTimeoutMs = 45000;
// Repeats of a test's run: enough for medians, few for time.
constexpr int kRepeats = 5;

// The first column of the first row of a query, read with SQLite itself (not the store).
QString scalar(const QString& db, const QString& sql) {
  QString out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql.toUtf8().constData(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      if (const unsigned char* text = sqlite3_column_text(st, 0))
        out = QString::fromUtf8(reinterpret_cast<const char*>(text));
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return out;
}

bool execute(const QString& db, const QString& sql) {
  sqlite3* h = nullptr;
  bool ok = sqlite3_open(db.toUtf8().constData(), &h) == SQLITE_OK &&
            sqlite3_exec(h, sql.toUtf8().constData(), nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(h);
  return ok;
}

// A shell script standing in for the CLI.
QString writeScript(const QString& path, const QByteArray& body) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return {};
  f.write("#!/bin/sh\n" + body + "\n");
  f.close();
  f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
  return path;
}

QAction* action(const MainWindow& window, const char* name) {
  return window.findChild<QAction*>(QLatin1String(name));
}

}  // namespace

class TestRunPanel : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString db_;            // tuned by the CLI
  qint64 session_ = 0;    // its session
  qint64 storedRun_ = 0;  // the run the first test stored
  double storedTesselMs_ = 0;

  // A window on the test database with tiny_cnn open, its stored session shown and its graph laid out.
  bool openTuned(MainWindow& window, const QString& db) {
    window.setPersistent(false);
    window.runController()->process()->setProgram(TESSEL_CLI_PATH);
    window.runPanel()->setRepeats(kRepeats);
    if (!window.setDatabasePath(db)) return false;
    QSignalSpy shown(&window, &MainWindow::sessionReopened);
    QSignalSpy laidOut(window.graphView(), &GraphView::layoutFinished);
    window.setModelPath("tiny_cnn");
    if (!shown.wait(60000)) return false;
    return window.graphView()->isLayoutReady() || laidOut.wait(60000);
  }

  // Triggers Run (Ctrl+R's action) and waits for its end: runFinished's arguments.
  QList<QVariant> run(MainWindow& window) {
    QSignalSpy finished(window.runController(), &RunController::runFinished);
    QAction* run = action(window, "actionRun");
    if (!run->isEnabled()) return {false, QStringLiteral("Run is disabled: ") + run->toolTip()};
    run->trigger();
    if (finished.isEmpty() && !finished.wait(kRunTimeoutMs)) return {false, QStringLiteral("the run did not end")};
    return finished.at(0);
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, tmp_.filePath("settings"));
    qputenv("TESSEL_DB", tmp_.filePath("default.db").toUtf8());
    db_ = tmp_.filePath("tuned.db");
    // A few programs per task of tiny_cnn, by the real CLI: every task tuned.
    QProcess cli;
    cli.start(TESSEL_CLI_PATH, {"tune", "tiny_cnn", "--trials", "10", "--batch", "2", "--search", "random",
                                "--cost-model", "random", "--db", db_, "--quiet"});
    QVERIFY(cli.waitForFinished(50000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    session_ = scalar(db_, "SELECT id FROM sessions WHERE kind = 'model'").toLongLong();
    QVERIFY(session_ > 0);
  }

  // Run in a real window: both medians, correct, one row per partition with
  // its measured time, the chart, the graph's heat by measured share (and
  // back), and the run stored with the session shown.
  void runShowsTheFigureAndIsStored() {
    MainWindow window;
    QVERIFY(openTuned(window, db_));
    QCOMPARE(window.shownSession(), session_);
    QVERIFY(action(window, "actionRun")->isEnabled());
    QCOMPARE(action(window, "actionRun")->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_R));
    QVERIFY(!action(window, "actionStopRun")->isEnabled());
    QSignalSpy stored(window.runController(), &RunController::runStored);
    const QList<QVariant> end = run(window);
    QVERIFY2(end.at(0).toBool(), qPrintable(end.at(1).toString()));

    RunPanel* panel = window.runPanel();
    QVERIFY(panel->result());
    const tessel::ui::RunResult& r = *panel->result();
    QVERIFY(r.tesselMs > 0 && r.libtorchMs > 0);
    QVERIFY(r.tesselMinMs <= r.tesselMs && r.tesselMs <= r.tesselMaxMs);
    QVERIFY(r.libtorchMinMs <= r.libtorchMs && r.libtorchMs <= r.libtorchMaxMs);
    // The oneDNN executor ran as the third side (or the build says it has none).
    const QString onednn = panel->findChild<QLabel*>("runOnednn")->text();
    if (std::isfinite(r.onednnMs)) {
      QVERIFY(r.onednnMinMs <= r.onednnMs && r.onednnMs <= r.onednnMaxMs);
      QVERIFY2(r.onednnCorrect, qPrintable(QString::number(r.onednnMaxAbsErr)));
      QVERIFY2(onednn.contains(" ms") && !onednn.contains("WRONG"), qPrintable(onednn));
      QVERIFY2(panel->findChild<QLabel*>("runSpeedup")->text().contains("oneDNN's") || r.disturbed,
               qPrintable(panel->findChild<QLabel*>("runSpeedup")->text()));
    } else {
      QVERIFY2(onednn.contains("no oneDNN"), qPrintable(onednn));
    }
    QVERIFY2(r.correct, qPrintable(QString::number(r.maxAbsErr)));
    QCOMPARE(r.repeats, kRepeats);
    QCOMPARE(r.tasksTuned + r.tasksNaive, int(window.preparedModel()->tasks.size()));
    QVERIFY(r.tasksTuned > 0);
    const QString median = r.tesselMs >= 1 ? QString::number(r.tesselMs, 'f', 3) : QString::number(r.tesselMs, 'g', 3);
    QVERIFY2(panel->findChild<QLabel*>("runTessel")->text().startsWith(median + " ms"),
             qPrintable(panel->findChild<QLabel*>("runTessel")->text()));
    QVERIFY(panel->correctLabel()->text().startsWith("correct"));
    QVERIFY(panel->disturbedBanner()->isVisibleTo(panel) == r.disturbed);
    QVERIFY(panel->errorText().isEmpty());

    // One row per step, every partition of a task among them once, each with its measured time.
    QStandardItemModel* rows = panel->partitionsModel();
    QCOMPARE(qsizetype(rows->rowCount()), r.partitions.size());
    std::set<int> taskGroups;
    const std::vector<int> taskOf = tessel::ui::taskOfGroups(*window.preparedModel());
    for (size_t g = 0; g < taskOf.size(); ++g)
      if (taskOf[g] >= 0) taskGroups.insert(int(g));
    std::multiset<int> rowGroups;
    for (int i = 0; i < rows->rowCount(); ++i) {
      QVERIFY2(rows->item(i, RunPanel::MeasuredMs)->data(Qt::UserRole).toDouble() > 0, qPrintable(QString::number(i)));
      if (r.partitions[i].group >= 0) rowGroups.insert(r.partitions[i].group);
    }
    QVERIFY(std::set<int>(rowGroups.begin(), rowGroups.end()) == taskGroups);
    QCOMPARE(rowGroups.size(), taskGroups.size());
    // A tuned partition has its estimate and ratio; its task is named as the tasks panel names it.
    int estimated = 0;
    for (int i = 0; i < rows->rowCount(); ++i)
      if (std::isfinite(r.partitions[i].estimateMs)) {
        ++estimated;
        QVERIFY(rows->item(i, RunPanel::EstimateMs)->data(Qt::UserRole).toDouble() > 0);
        QVERIFY(!rows->item(i, RunPanel::Task)->text().contains(r.partitions[i].task));  // a name, not the key
      }
    QVERIFY(estimated > 0);
    // Sortable: by measured time, largest first.
    panel->partitionsView()->sortByColumn(RunPanel::MeasuredMs, Qt::DescendingOrder);
    QAbstractItemModel* shown = panel->partitionsView()->model();
    for (int i = 1; i < shown->rowCount(); ++i)
      QVERIFY(shown->index(i - 1, RunPanel::MeasuredMs).data(Qt::UserRole).toDouble() >=
              shown->index(i, RunPanel::MeasuredMs).data(Qt::UserRole).toDouble());
    // The chart: a measured bar per step, an estimate bar per tuned one.
    QCOMPARE(qsizetype(panel->measuredBars()->dataCount()), r.partitions.size());
    QCOMPARE(panel->estimateBars()->dataCount(), estimated);

    // The graph's heat: each partition by its measured share, the largest red.
    GraphView* graph = window.graphView();
    QCOMPARE(graph->heatMode(), GraphView::HeatMode::Measured);
    QVERIFY(graph->heatModeBox()->isEnabled());
    int hottest = -1;
    for (int g : taskGroups) {
      QVERIFY2(std::isfinite(graph->measuredShare(g)) && graph->measuredShare(g) > 0, qPrintable(QString::number(g)));
      if (hottest < 0 || graph->measuredShare(g) > graph->measuredShare(hottest)) hottest = g;
    }
    QCOMPARE(graph->clusterColour(hottest).rgb(), QColor(215, 48, 31).rgb());
    QVERIFY(graph->clusterItem(hottest)->toolTip().contains("of the measured run"));
    const QColor measuredColour = graph->clusterColour(hottest);
    // Switched back: the estimate's colours (its task's share), then the run's again.
    graph->setHeatMode(GraphView::HeatMode::Estimate);
    QVERIFY(!graph->clusterItem(hottest)->toolTip().contains("of the measured run"));
    graph->setHeatMode(GraphView::HeatMode::Measured);
    QCOMPARE(graph->clusterColour(hottest), measuredColour);

    // Stored with the session shown, as the CLI printed it.
    QVERIFY(stored.count() || stored.wait(30000));
    storedRun_ = stored.at(0).at(0).toLongLong();
    QVERIFY2(storedRun_ > 0, qPrintable(stored.at(0).at(1).toString()));
    QCOMPARE(panel->storedRun(), storedRun_);
    const QString where = QString(" FROM runs WHERE id = %1").arg(storedRun_);
    QCOMPARE(scalar(db_, "SELECT session_id" + where).toLongLong(), session_);
    QCOMPARE(scalar(db_, "SELECT model" + where), QString("tiny_cnn"));
    QCOMPARE(scalar(db_, "SELECT fusion" + where), QString("dp"));
    QCOMPARE(scalar(db_, "SELECT target" + where), QString("cpu"));
    QVERIFY(scalar(db_, "SELECT created" + where).endsWith('Z'));
    const QJsonObject json = QJsonDocument::fromJson(scalar(db_, "SELECT result" + where).toUtf8()).object();
    QCOMPARE(json["tessel_ms"].toDouble(), r.tesselMs);
    QCOMPARE(json["partitions"].toArray().size(), r.partitions.size());
    storedTesselMs_ = r.tesselMs;
    QVERIFY(window.logPanel()->toPlainText().contains(QString("stored in the database as run %1").arg(storedRun_)));
  }

  // The session reopened in a new window, or its model opened, shows the
  // stored run and when it was taken; `tessel db runs` lists it.
  void storedRunIsShownAgain() {
    QVERIFY(storedRun_ > 0);
    {
      MainWindow window;
      window.setPersistent(false);
      QVERIFY(window.setDatabasePath(db_));
      QSignalSpy shownRun(window.runController(), &RunController::storedRunShown);
      window.reopenSession(session_);
      QVERIFY(shownRun.wait(60000));
      QCOMPARE(shownRun.at(0).at(0).toLongLong(), storedRun_);
      RunPanel* panel = window.runPanel();
      QVERIFY(panel->result());
      QCOMPARE(panel->result()->tesselMs, storedTesselMs_);
      QCOMPARE(panel->storedRun(), storedRun_);
      const QString created = scalar(db_, QString("SELECT created FROM runs WHERE id = %1").arg(storedRun_));
      QCOMPARE(panel->taken(), QDateTime::fromString(created, Qt::ISODateWithMs));
      QVERIFY2(panel->statusText().contains(panel->taken().toString("yyyy-MM-dd HH:mm:ss")),
               qPrintable(panel->statusText()));
      QVERIFY(panel->statusText().contains(QString("session %1").arg(session_)));
      QVERIFY(panel->partitionsModel()->rowCount() > 0);
    }
    {
      MainWindow window;  // the model opened: its last session and that session's run
      window.setPersistent(false);
      QVERIFY(window.setDatabasePath(db_));
      QSignalSpy shownRun(window.runController(), &RunController::storedRunShown);
      window.setModelPath("tiny_cnn");
      QVERIFY(shownRun.wait(60000));
      QCOMPARE(shownRun.at(0).at(0).toLongLong(), storedRun_);
      QSignalSpy laidOut(window.graphView(), &GraphView::layoutFinished);
      QVERIFY(window.graphView()->isLayoutReady() || laidOut.wait(60000));
      QCOMPARE(window.graphView()->heatMode(), GraphView::HeatMode::Measured);
    }
    // tessel db runs: the stored run, with its session and result.
    QProcess cli;
    cli.start(TESSEL_CLI_PATH, {"db", "runs", "--db", db_, "--json"});
    QVERIFY(cli.waitForFinished(30000));
    QCOMPARE(cli.exitCode(), 0);
    const QJsonArray runs = QJsonDocument::fromJson(cli.readAllStandardOutput()).object()["runs"].toArray();
    QCOMPARE(runs.size(), 1);
    QCOMPARE(runs[0]["id"].toInteger(), storedRun_);
    QCOMPARE(runs[0]["session"].toInteger(), session_);
    QCOMPARE(runs[0]["result"]["tessel_ms"].toDouble(), storedTesselMs_);
    cli.start(TESSEL_CLI_PATH, {"db", "runs", "--db", db_});
    QVERIFY(cli.waitForFinished(30000));
    const QString table = QString::fromUtf8(cli.readAllStandardOutput());
    QVERIFY2(table.contains("tiny_cnn") && table.contains("correct"), qPrintable(table));
    // The studio's run compared with oneDNN: its median is in the table (or "-" without oneDNN).
    QVERIFY2(table.contains("onednn ms"), qPrintable(table));
    if (const QJsonValue onednn = runs[0]["result"]["onednn_ms"]; onednn.isDouble())
      QVERIFY2(table.contains(QString::number(onednn.toDouble(), 'f', 3)), qPrintable(table));
    cli.start(TESSEL_CLI_PATH, {"db", "--help"});
    QVERIFY(cli.waitForFinished(30000));
    QVERIFY(QString::fromUtf8(cli.readAllStandardOutput()).contains("runs "));
  }

  // A run that fails (an exit code with a message, a crash, no JSON, the
  // CLI refusing the database) or is stopped: the error in the panel and
  // the log, nothing stored, and the window goes on.
  void failingRunsShowTheErrorAndTheWindowGoesOn() {
    MainWindow window;
    QVERIFY(openTuned(window, db_));
    const QString runs = scalar(db_, "SELECT count(*) FROM runs");
    struct Case {
      QByteArray script;
      QStringList expected;
    };
    const QList<Case> cases = {
        {"echo 'error: the kernels are gone' >&2; exit 3", {"exited with code 3", "the kernels are gone"}},
        {"echo 'about to fall' >&2; kill -SEGV $$", {"crashed", "about to fall"}},
        {"echo 'not json'; exit 0", {"exited with code 0", "no result as JSON"}},
        {"echo '{\"tessel_ms\": 1.0, \"correct\": true}'; echo 'error: half done' >&2; exit 2",
         {"exited with code 2", "half done"}},
    };
    for (int i = 0; i < cases.size(); ++i) {
      window.runController()->process()->setProgram(
          writeScript(tmp_.filePath(QString("cli%1.sh").arg(i)), cases[i].script));
      const QList<QVariant> end = run(window);
      QVERIFY2(!end.at(0).toBool(), qPrintable(end.at(1).toString()));
      for (const QString& part : cases[i].expected) {
        QVERIFY2(window.runPanel()->errorText().contains(part), qPrintable(window.runPanel()->errorText()));
        QVERIFY2(window.logPanel()->toPlainText().contains(part), qPrintable(part));
      }
      QVERIFY(!window.runPanel()->result());
      QVERIFY(action(window, "actionRun")->isEnabled());
      QVERIFY(!action(window, "actionStopRun")->isEnabled());
      QVERIFY(action(window, "actionStart")->isEnabled());
      QCOMPARE(window.graphView()->heatMode(), GraphView::HeatMode::Estimate);
    }
    // A CLI that is not there.
    window.runController()->process()->setProgram(tmp_.filePath("no-such-tessel"));
    QList<QVariant> end = run(window);
    QVERIFY(!end.at(0).toBool());
    QVERIFY2(window.runPanel()->errorText().contains("cannot start"), qPrintable(window.runPanel()->errorText()));
    // The real CLI refusing what it is given: a database that does not exist (yet).
    window.runController()->process()->setProgram(TESSEL_CLI_PATH);
    QVERIFY(window.setDatabasePath(tmp_.filePath("not-tuned-yet.db")));
    end = run(window);
    QVERIFY(!end.at(0).toBool());
    QVERIFY2(window.runPanel()->errorText().contains("exited with code 1") &&
                 window.runPanel()->errorText().contains("no such database"),
             qPrintable(window.runPanel()->errorText()));
    QVERIFY(action(window, "actionRun")->isEnabled());

    // Stop: the child (and what it started) killed at once.
    window.runController()->process()->setProgram(writeScript(tmp_.filePath("slow.sh"), "sleep 30 & wait"));
    QSignalSpy finished(window.runController(), &RunController::runFinished);
    action(window, "actionRun")->trigger();
    QVERIFY(action(window, "actionStopRun")->isEnabled());
    QVERIFY(!action(window, "actionRun")->isEnabled());
    QElapsedTimer clock;
    clock.start();
    action(window, "actionStopRun")->trigger();
    QVERIFY(finished.wait(10000));
    QVERIFY(clock.elapsed() < 5000);
    QVERIFY(!finished.at(0).at(0).toBool());
    QVERIFY2(window.runPanel()->errorText().contains("cancelled"), qPrintable(window.runPanel()->errorText()));
    QVERIFY(action(window, "actionRun")->isEnabled());
    QCOMPARE(scalar(db_, "SELECT count(*) FROM runs"), runs);  // nothing stored
  }

  // A database written before runs existed (schema 2: no runs table) opens,
  // is read as it is, and gains the table when the first run is stored,
  // losing nothing.
  void databaseOfTheSchemaBeforeRunsGainsThem() {
    const QString old = tmp_.filePath("schema2.db");
    QVERIFY(QFile::copy(db_, old));
    QVERIFY(execute(old, "DROP TABLE runs; PRAGMA user_version = 2"));
    QCOMPARE(scalar(old, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), QString("0"));
    const QString records = scalar(old, "SELECT count(*) FROM records");
    const QString sessions = scalar(old, "SELECT count(*) FROM sessions");
    MainWindow window;
    QVERIFY(openTuned(window, old));  // its session shown: it has no run
    QVERIFY(!window.runPanel()->result());
    QCOMPARE(scalar(old, "PRAGMA user_version"), QString("2"));  // reading wrote nothing
    QSignalSpy stored(window.runController(), &RunController::runStored);
    const QList<QVariant> end = run(window);
    QVERIFY2(end.at(0).toBool(), qPrintable(end.at(1).toString()));
    QVERIFY(stored.count() || stored.wait(30000));
    QVERIFY2(stored.at(0).at(0).toLongLong() > 0, qPrintable(stored.at(0).at(1).toString()));
    QCOMPARE(scalar(old, "PRAGMA user_version"), QString::number(tessel::store::kSchemaVersion));
    QCOMPARE(scalar(old, "SELECT count(*) FROM runs"), QString("1"));
    QCOMPARE(scalar(old, "SELECT session_id FROM runs").toLongLong(), session_);
    QCOMPARE(scalar(old, "SELECT count(*) FROM records"), records);
    QCOMPARE(scalar(old, "SELECT count(*) FROM sessions"), sessions);
  }

  // Run is not offered while tuning (saying why); a tuning of a time
  // budget that ends normally is run at once (Tuning > Run when a tuning
  // ends), and stored with the session it tuned.
  void tuningOfATimeBudgetIsRunWhenItEnds() {
    const QString db = tmp_.filePath("timed.db");
    MainWindow window;
    window.setPersistent(false);
    window.runController()->process()->setProgram(TESSEL_CLI_PATH);
    window.runPanel()->setRepeats(kRepeats);
    QVERIFY(action(window, "actionRunAfterTuning")->isChecked());  // on by default
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    QVERIFY(window.setDatabasePath(db));
    window.setTrialBudget(1000);
    window.setTimeBudget(0.05);  // 3 s: rounds stop starting, the tuning finishes
    QSignalSpy tuned(&window, &MainWindow::tuningFinished);
    QSignalSpy finished(window.runController(), &RunController::runFinished);
    QSignalSpy stored(window.runController(), &RunController::runStored);
    window.startTuning();
    QVERIFY(!action(window, "actionRun")->isEnabled());
    QVERIFY2(action(window, "actionRun")->toolTip().contains("disturb"),
             qPrintable(action(window, "actionRun")->toolTip()));
    QCOMPARE(window.progressBar()->maximum(), 3);  // seconds
    QVERIFY(tuned.wait(40000));
    QVERIFY2(tuned.at(0).at(0).toBool(), qPrintable(tuned.at(0).at(1).toString()));
    const int trials = scalar(db, "SELECT count(*) FROM records").toInt();
    QVERIFY2(trials > 0 && trials < 1000, qPrintable(QString::number(trials)));  // the time ended it
    QVERIFY(window.runController()->isRunning());                                // started as the tuning ended
    QVERIFY(finished.wait(kRunTimeoutMs));
    QVERIFY2(finished.at(0).at(0).toBool(), qPrintable(finished.at(0).at(1).toString()));
    QVERIFY(stored.count() || stored.wait(30000));
    QVERIFY(stored.at(0).at(0).toLongLong() > 0);
    QCOMPARE(scalar(db, "SELECT session_id FROM runs").toLongLong(), window.shownSession());
    QVERIFY(window.shownSession() > 0);
  }

  // The Run dock is a tab beside the search space, code and properties:
  // showing a run (disturbed, its reason long) must not make the window's
  // minimum larger than those views do.
  void panelFitsBesideTheSearchSpace() {
    MainWindow window;
    window.setPersistent(false);
    QString error;
    // One line, as tessel run --json prints it.
    QJsonObject line{{"tessel_ms", 12.5}, {"tessel_ms_min", 12}, {"tessel_ms_max", 30}, {"libtorch_ms", 25.2},
                     {"speedup", 2.02},   {"correct", false},    {"max_abs_err", 0.5},  {"max_abs_ref", 3},
                     {"disturbed", true}, {"tasks_tuned", 17},   {"tasks_naive", 1},    {"repeats", 30}};
    line["disturbance"] =
        "Tessel's runs spread from 12.000 to 30.000 ms (median 1.04x the fastest); while LibTorch ran, other "
        "processes used 47 % of the CPUs";
    line["contention"] = QJsonObject{{"tessel", QJsonObject{{"others_share", 0.02}, {"steal_share", 0}}},
                                     {"libtorch", QJsonObject{{"others_share", 0.47}, {"steal_share", 0.05}}}};
    line["partitions"] = QJsonArray{QJsonObject{{"step", "tessel_graph_k0"},
                                                {"group", 0},
                                                {"task", "conv2d_add_relu_1_64_56_56_abcdef"},
                                                {"measured_ms", 1.5},
                                                {"estimate_ms", 1.2},
                                                {"ratio", 1.25}},
                                    QJsonObject{{"step", "convert x NHWC->plain"}, {"measured_ms", 0.1}}};
    const std::optional<tessel::ui::RunResult> result = tessel::ui::parseRunJson(
        "building kernels...\n" + QJsonDocument(line).toJson(QJsonDocument::Compact) + "\n", &error);
    QVERIFY2(result, qPrintable(error));
    QCOMPARE(result->partitions.size(), qsizetype(2));
    window.runPanel()->showResult(*result, QDateTime::currentDateTimeUtc(), 3, 4);
    QVERIFY(window.runPanel()->disturbedBanner()->isVisibleTo(window.runPanel()));
    QVERIFY(window.runPanel()->correctLabel()->text().startsWith("WRONG"));
    QCOMPARE(result->libtorchContention.othersShare, 0.47);
    QCOMPARE(result->libtorchContention.stealShare, 0.05);
    QCOMPARE(result->tesselContention.othersShare, 0.02);
    QCOMPARE(window.runPanel()->contentionLabel()->text(),
             QString("by others: 2 % during Tessel's runs, 47 % (steal 5 %) during LibTorch's"));
    QCOMPARE(window.runPanel()->findChild<QLabel*>("runOnednn")->text(), QString("not compared"));

    // A run with --compare onednn: its figures, its speed-up and its CPU share.
    line["disturbed"] = false;
    line["onednn_ms"] = 14.0;
    line["onednn_ms_min"] = 13.5;
    line["onednn_ms_max"] = 15.25;
    line["onednn_speedup"] = 1.12;
    line["onednn_correct"] = true;
    line["contention"] = QJsonObject{{"tessel", QJsonObject{{"others_share", 0.02}, {"steal_share", 0}}},
                                     {"libtorch", QJsonObject{{"others_share", 0.04}, {"steal_share", 0}}},
                                     {"onednn", QJsonObject{{"others_share", 0.03}, {"steal_share", 0}}}};
    const std::optional<tessel::ui::RunResult> vs =
        tessel::ui::parseRunJson(QJsonDocument(line).toJson(QJsonDocument::Compact), &error);
    QVERIFY2(vs, qPrintable(error));
    window.runPanel()->showResult(*vs, QDateTime::currentDateTimeUtc(), 3, 5);
    QCOMPARE(window.runPanel()->findChild<QLabel*>("runOnednn")->text(),
             QString("14.000 ms  (13.500 - 15.250 over 30 runs)"));
    QCOMPARE(window.runPanel()->findChild<QLabel*>("runSpeedup")->text(),
             QString("2.02x LibTorch's speed, 1.12x oneDNN's"));
    QCOMPARE(window.runPanel()->contentionLabel()->text(),
             QString("by others: 2 % during Tessel's runs, 4 % during LibTorch's, 3 % during oneDNN's"));
    auto* run = window.findChild<QDockWidget*>("runDock");
    QSize others;
    for (QDockWidget* d : window.tabifiedDockWidgets(run))
      others = others.expandedTo(d->widget()->minimumSizeHint());
    QVERIFY(window.tabifiedDockWidgets(run).contains(window.findChild<QDockWidget*>("searchSpaceDock")));
    const QSize mine = window.runPanel()->minimumSizeHint();
    QVERIFY2(mine.width() <= others.width() && mine.height() <= others.height(),
             qPrintable(QString("%1x%2, the others %3x%4")
                            .arg(mine.width())
                            .arg(mine.height())
                            .arg(others.width())
                            .arg(others.height())));
  }

  // Stopped tunings are not run; with the setting off, none is.
  void stoppedTuningIsNotRun() {
    MainWindow window;
    window.setPersistent(false);
    window.runController()->process()->setProgram(TESSEL_CLI_PATH);
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    QVERIFY(window.setDatabasePath(tmp_.filePath("stopped.db")));
    window.setTrialBudget(1000);
    QSignalSpy tuned(&window, &MainWindow::tuningFinished);
    window.startTuning();
    QTest::qWait(1500);
    window.stopTuning();
    QVERIFY(tuned.wait(40000));
    QVERIFY(!window.runController()->isRunning());
    QVERIFY(window.runPanel()->statusText().startsWith("Not run yet"));
    action(window, "actionRunAfterTuning")->setChecked(false);
    window.setTimeBudget(0.02);
    window.startTuning();
    QVERIFY(tuned.wait(40000));
    QVERIFY(tuned.at(1).at(0).toBool());
    QVERIFY(!window.runController()->isRunning());
  }
};

QTEST_MAIN(TestRunPanel)
#include "test_run_panel.moc"
