// Sessions in the studio, on a real database filled by real tunings: the
// sessions dialog lists and compares them, a reopened session shows what the
// live tuning showed (curves, scatter, tasks, best programs) and Start
// resumes it; the export dialog writes a library that was really compiled;
// a corrupt database, an unsupported op and a database another process is
// writing each end in an error dialog that names the problem.
#ifdef TESSEL_HAVE_ONNX
#include <onnx/onnx_pb.h>
#endif
#include <qcustomplot.h>
#include <sqlite3.h>

#include <QAction>
#include <QCheckBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMessageBox>
#include <QProcess>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <csignal>
#include <fstream>
#include <map>

#include "frontend/model_loader.h"
#include "search/space_summary.h"
#include "search/tuner.h"
#include "store/database.h"
#include "store/session_store.h"
#include "studio_fixture.h"
#include "tessel_test.h"
#include "tuning/tuning_recorder.h"
#include "ui/code_view.h"
#include "ui/export_dialog.h"
#include "ui/log_panel.h"
#include "ui/main_window.h"
#include "ui/plots_panel.h"
#include "ui/search_space_view.h"
#include "ui/sessions_dialog.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_session.h"

using tessel::ui::MainWindow;
using tessel::ui::TasksModel;

namespace {

// Rows of a query on the database, read with SQLite itself (not the store).
std::vector<std::vector<QString>> query(const QString& db, const QString& sql) {
  std::vector<std::vector<QString>> rows;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.toUtf8().constData(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return rows;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, sql.toUtf8().constData(), -1, &st, nullptr) == SQLITE_OK) {
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::vector<QString> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* text = sqlite3_column_text(st, c);
        row.push_back(text ? QString::fromUtf8(reinterpret_cast<const char*>(text)) : QString());
      }
      rows.push_back(row);
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return rows;
}

QString scalar(const QString& db, const QString& sql) {
  auto rows = query(db, sql);
  return rows.empty() || rows[0].empty() ? QString() : rows[0][0];
}

QMessageBox* visibleErrorDialog(const QWidget& window) {
  for (QMessageBox* box : window.findChildren<QMessageBox*>("errorDialog"))
    if (box->isVisible()) return box;
  return nullptr;
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestSessions : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  QString db_;
  qint64 modelSession_ = 0, taskSession_ = 0;
  // What the live tuning reported: its last end-to-end estimate and the
  // number of points of its scatter.
  double liveEstimate_ = NAN;
  int liveScatterPoints_ = 0, liveUntrainedPoints_ = 0;

  // Reopens a session of the test database in a window that saves no settings.
  bool reopen(MainWindow& window, qint64 session) {
    window.setPersistent(false);
    if (!window.setDatabasePath(db_)) return false;
    QSignalSpy reopened(&window, &MainWindow::sessionReopened);
    window.reopenSession(session);
    return reopened.wait(60000);
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    tessel::testing::isolateStudio(tmp_);  // no run after each tuning: test_run_panel tests it
    db_ = tmp_.filePath("tuning.db");

    // A model session, tuned by the studio: 80 trials of tiny_cnn's 5 tasks.
    {
      MainWindow window;
      window.setPersistent(false);
      QSignalSpy ready(&window, &MainWindow::modelReady);
      window.setModelPath("tiny_cnn");
      QVERIFY(ready.wait(60000));
      QVERIFY(window.setDatabasePath(db_));
      window.setTrialBudget(80);
      QSignalSpy rounds(window.tuningSession(), &tessel::ui::TuningSession::roundFinished);
      QSignalSpy done(&window, &MainWindow::tuningFinished);
      window.startTuning();
      QVERIFY(done.wait(300000));
      QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
      liveEstimate_ = rounds.last().at(3).toDouble();
      QVERIFY(std::isfinite(liveEstimate_));
      // Every task's points: the first task's round was scored by an untrained model, the later ones not.
      window.plotsPanel()->selectTask(-1);
      liveScatterPoints_ = window.plotsPanel()->scatterPointCount();
      liveUntrainedPoints_ = window.plotsPanel()->untrainedPointCount();
      QVERIFY(liveScatterPoints_ > 0);
      modelSession_ = window.resumableSession();
      QVERIFY(modelSession_ > 0);
      // The live tuning handed its best programs to the views.
      QVERIFY(window.bestProgram(0).seconds > 0);
      QVERIFY(!window.bestProgram(0).steps.isEmpty());
    }

    // A task session, as tessel tune-op makes one: 16 trials of a matmul.
    auto db = tessel::store::Database::open(db_.toStdString(), tessel::store::OpenMode::ReadWrite);
    tessel::task::SearchTask task =
        tessel::task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host());
    tessel::search::TuneOptions o;
    o.trials = 16;
    o.batchSize = 8;
    o.search = "random";
    o.costModel = "random";
    o.measurer.run.workerPath = TESSEL_WORKER_PATH;
    tessel::tuning::TuningRecorder recorder(*db, task, "{\"command\":\"tune-op\"}", o.trials, false);
    recorder.attach(o);
    tessel::search::TuneResult r = tessel::search::tuneTask(task, o);
    QVERIFY(r.validTrials > 0);
    recorder.finish(r);
    taskSession_ = recorder.sessionId();
  }

  void sessionsDialogListsAndCompares() {
    MainWindow window;
    window.setPersistent(false);
    QVERIFY(window.setDatabasePath(db_));
    tessel::ui::SessionsDialog* dialog = window.showSessions();
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QSignalSpy loaded(dialog, &tessel::ui::SessionsDialog::loaded);
    QVERIFY(dialog->isLoaded() || loaded.wait(30000));  // read on a worker thread
    QStandardItemModel* rows = dialog->sessionsModel();
    QCOMPARE(rows->rowCount(), scalar(db_, "SELECT count(*) FROM sessions").toInt());
    for (int row = 0; row < rows->rowCount(); ++row) {
      const QString id = rows->item(row, tessel::ui::SessionsDialog::Id)->text();
      QCOMPARE(rows->item(row, tessel::ui::SessionsDialog::Kind)->text(),
               scalar(db_, "SELECT kind FROM sessions WHERE id = " + id));
      QCOMPARE(rows->item(row, tessel::ui::SessionsDialog::Valid)->text(),
               scalar(db_, "SELECT count(cost) FROM records WHERE session_id = " + id));
      QCOMPARE(rows->item(row, tessel::ui::SessionsDialog::Status)->text(), QString("finished"));
    }

    // Two sessions selected: two curves, each ending at its session's result.
    QSignalSpy compared(dialog, &tessel::ui::SessionsDialog::comparisonReady);
    dialog->selectSessions({modelSession_, taskSession_});
    QCOMPARE(dialog->selectedSessions(), QList<qint64>({modelSession_, taskSession_}));
    QVERIFY(!dialog->reopenButton()->isEnabled());  // one session at a time
    QVERIFY(compared.wait(30000));
    QCOMPARE(dialog->comparedCurves(), 2);
    QCustomPlot* plot = dialog->comparePlot();
    auto lastValue = [](QCPGraph* g) { return (g->data()->constEnd() - 1)->value; };
    QVERIFY(plot->graph(0)->name().startsWith(QString("#%1").arg(modelSession_)));
    // The model session's curve ends at the live tuning's last estimate.
    QVERIFY2(std::fabs(lastValue(plot->graph(0)) - liveEstimate_ * 1e3) < 1e-9 * liveEstimate_ * 1e3,
             qPrintable(QString("%1 vs %2").arg(lastValue(plot->graph(0))).arg(liveEstimate_ * 1e3)));
    // The task session's curve ends at its best record.
    const double taskBestMs =
        scalar(db_, QString("SELECT min(cost) FROM records WHERE session_id = %1").arg(taskSession_)).toDouble() * 1e3;
    QVERIFY(std::fabs(lastValue(plot->graph(1)) - taskBestMs) < 1e-9 * taskBestMs);
    // Each curve reaches the session's last trial.
    QCOMPARE((plot->graph(1)->data()->constEnd() - 1)->key, 16.0);

    dialog->selectSessions({modelSession_});
    QVERIFY(dialog->reopenButton()->isEnabled());
    QVERIFY(compared.wait(30000));
    QCOMPARE(dialog->comparedCurves(), 1);
  }

  // A reopened session shows what the live tuning showed, the best program
  // of each task comes from the database, and Start goes on with it.
  void reopenedSessionShowsItsHistoryAndResumes() {
    MainWindow window;
    QVERIFY(reopen(window, modelSession_));
    QCOMPARE(window.modelPath(), QString("tiny_cnn"));
    QVERIFY(window.preparedModel());
    QCOMPARE(window.resumableSession(), modelSession_);

    // Trials and best latency per task, as stored.
    TasksModel* tasks = window.tasksPanel()->model();
    QCOMPARE(tasks->rowCount(), 5);
    for (int i = 0; i < tasks->rowCount(); ++i) {
      const QString key = tasks->task(i).key;
      const QString where =
          QString("FROM records JOIN tasks ON tasks.id = records.task_id WHERE session_id = %1 AND workload_key = '%2'")
              .arg(modelSession_)
              .arg(key);
      QCOMPARE(tasks->data(tasks->index(i, TasksModel::Trials), Qt::UserRole).toInt(),
               scalar(db_, "SELECT count(*) " + where).toInt());
      const double bestMs = scalar(db_, "SELECT min(cost) " + where).toDouble() * 1e3;
      QVERIFY(std::fabs(tasks->data(tasks->index(i, TasksModel::BestMs), Qt::UserRole).toDouble() - bestMs) <
              1e-9 * bestMs);
    }
    QVERIFY(std::fabs(tasks->estimateSeconds() - liveEstimate_) < 1e-12);

    // The plots: the same scatter as live, and the estimate curve.
    tessel::ui::PlotsPanel* plots = window.plotsPanel();
    plots->selectTask(-1);
    plots->replotNow();
    QCOMPARE(plots->scatterPointCount(), liveScatterPoints_);
    QCOMPARE(plots->untrainedPointCount(), liveUntrainedPoints_);  // the model's state is stored with each record
    QCPGraph* estimate = plots->estimatePlot()->graph(0);
    QVERIFY(estimate->dataCount() > 0);
    QVERIFY(std::fabs((estimate->data()->constEnd() - 1)->value - liveEstimate_ * 1e3) < 1e-9);

    // The selected task's best program: from the database, shown as code.
    QSignalSpy codeReady(window.codeView(), &tessel::ui::CodeView::ready);
    window.selectTask(2);
    QVERIFY(codeReady.wait(60000) || window.codeView()->isReady());
    const MainWindow::BestProgram best = window.bestProgram(2);
    QVERIFY(!best.steps.isEmpty());
    QVERIFY(window.searchSpaceView()->hasBest());
    const QString bestSteps = scalar(
        db_, QString("SELECT steps FROM records JOIN tasks ON tasks.id = records.task_id WHERE session_id = %1 AND "
                     "workload_key = '%2' AND cost IS NOT NULL ORDER BY cost, records.id LIMIT 1")
                 .arg(modelSession_)
                 .arg(tasks->task(2).key));
    QCOMPARE(best.steps, bestSteps);
    tessel::task::SearchTask task;
    for (const auto& t : window.preparedModel()->tasks)
      if (QString::fromStdString(t.key) == tasks->task(2).key)
        task = tessel::fusion::toSearchTask(t, tessel::target::Target::host());
    QCOMPARE(window.codeView()->code(),
             QString::fromStdString(tessel::search::storedProgramSource(task, bestSteps.toStdString())));

    // Start resumes the session: no new session, 16 more trials in it.
    const double firstTime = estimate->data()->constBegin()->key;
    const int pointsBefore = estimate->dataCount();
    const int sessions = scalar(db_, "SELECT count(*) FROM sessions").toInt();
    const int before =
        scalar(db_, QString("SELECT count(*) FROM records WHERE session_id = %1").arg(modelSession_)).toInt();
    window.setTrialBudget(16);
    QSignalSpy done(&window, &MainWindow::tuningFinished);
    window.startTuning();
    QVERIFY(done.wait(300000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(scalar(db_, "SELECT count(*) FROM sessions").toInt(), sessions);
    const int after =
        scalar(db_, QString("SELECT count(*) FROM records WHERE session_id = %1").arg(modelSession_)).toInt();
    QVERIFY2(after >= before + 16 && after < before + 32, qPrintable(QString("%1 -> %2").arg(before).arg(after)));
    QCOMPARE(scalar(db_, QString("SELECT status FROM sessions WHERE id = %1").arg(modelSession_)), QString("finished"));
    // The resumed trials count on from the session's.
    int trials = 0;
    for (int i = 0; i < tasks->rowCount(); ++i)
      trials += tasks->data(tasks->index(i, TasksModel::Trials), Qt::UserRole).toInt();
    QCOMPARE(trials, after);
    // The plots went on from the reopened curves: the same start, more points.
    plots->replotNow();
    QCOMPARE(estimate->data()->constBegin()->key, firstTime);
    QVERIFY(estimate->dataCount() > pointsBefore);
    QVERIFY((estimate->data()->constEnd() - 1)->value <= liveEstimate_ * 1e3 + 1e-9);

    // Start again goes on with the same session: 16 more trials.
    const double lastTime = (estimate->data()->constEnd() - 1)->key;
    window.startTuning();
    QVERIFY(done.wait(300000));
    QVERIFY2(done.at(1).at(0).toBool(), qPrintable(done.at(1).at(1).toString()));
    QCOMPARE(scalar(db_, "SELECT count(*) FROM sessions").toInt(), sessions);
    const int again =
        scalar(db_, QString("SELECT count(*) FROM records WHERE session_id = %1").arg(modelSession_)).toInt();
    QVERIFY2(again >= after + 16 && again < after + 32, qPrintable(QString("%1 -> %2").arg(after).arg(again)));
    plots->replotNow();
    QVERIFY((estimate->data()->constEnd() - 1)->key >= lastTime);  // time goes on too
  }

  void reopenedTaskSessionShowsItsOperator() {
    MainWindow window;
    // From a model with a later task selected: the operator's task replaces it.
    QVERIFY(reopen(window, modelSession_));
    window.selectTask(3);
    QSignalSpy reopened(&window, &MainWindow::sessionReopened);
    QSignalSpy codeReady(window.codeView(), &tessel::ui::CodeView::ready);
    window.reopenSession(taskSession_);
    QVERIFY(reopened.wait(60000));
    QCOMPARE(window.selectedTask(), 0);
    QVERIFY(!window.preparedModel());
    QVERIFY(window.modelPath().isEmpty());
    QVERIFY(codeReady.wait(60000) || window.codeView()->isReady());
    const QString key = QString::fromStdString(
        tessel::task::makeOperatorTask("matmul", {64, 64, 64}, tessel::target::Target::host()).key);
    QVERIFY2(window.codeView()->code().startsWith("// " + key + ", stored program"),
             qPrintable(window.codeView()->code().left(200)));
    QCOMPARE(window.tasksPanel()->model()->rowCount(), 1);
    QCOMPARE(window.tasksPanel()
                 ->model()
                 ->data(window.tasksPanel()->model()->index(0, TasksModel::Trials), Qt::UserRole)
                 .toInt(),
             16);
    QVERIFY(!window.findChild<QAction*>("actionStart")->isEnabled());  // tune-op sessions go on in the CLI
    QVERIFY(window.bestProgram(0).seconds > 0);
  }

  // Opening a model against a database that has tuned it shows its last
  // session: the tasks' trials and bests, the estimate; tasks are named
  // with their shapes, and the log counts the nodes the graph draws.
  void openingATunedModelShowsItsStoredTuning() {
    MainWindow window;
    window.setPersistent(false);
    QVERIFY(window.setDatabasePath(db_));
    QSignalSpy ready(&window, &MainWindow::modelReady);
    QSignalSpy reopened(&window, &MainWindow::sessionReopened);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    QVERIFY(reopened.count() > 0 || reopened.wait(30000));
    QCOMPARE(reopened.at(0).at(0).toLongLong(), modelSession_);
    TasksModel* tasks = window.tasksPanel()->model();
    int trials = 0;
    for (int i = 0; i < tasks->rowCount(); ++i) {
      trials += tasks->data(tasks->index(i, TasksModel::Trials), Qt::DisplayRole).toInt();
      const QString name = tasks->task(i).name;
      QVERIFY2(QRegularExpression("^[a-z0-9_]+ \\d+(x\\d+)*$").match(name).hasMatch(), qPrintable(name));
      QVERIFY(window.bestProgram(i).seconds > 0);
    }
    QCOMPARE(trials,
             scalar(db_, QString("SELECT count(*) FROM records WHERE session_id = %1").arg(modelSession_)).toInt());
    // The estimate of the session as stored (earlier tests may have resumed it).
    const double stored = tessel::store::Database::open(db_.toStdString(), tessel::store::OpenMode::ReadOnly)
                              ->sessions()
                              .byId(modelSession_)
                              ->estimateSeconds;
    QVERIFY2(window.statusBar()->currentMessage().contains(QString::number(stored * 1e3, 'f', 3)),
             qPrintable(window.statusBar()->currentMessage()));
    QCOMPARE(window.resumableSession(), modelSession_);  // Start goes on with it
    const QString log = window.logPanel()->toPlainText();
    QVERIFY2(log.contains(QString("tiny_cnn: %1 nodes").arg(window.preparedModel()->graph.nodes.size())),
             qPrintable(log));
  }

  void reopeningAMissingSessionShowsAnError() {
    MainWindow window;
    window.setPersistent(false);
    window.show();
    QVERIFY(window.setDatabasePath(db_));
    QSignalSpy failed(&window, &MainWindow::sessionFailed);
    window.reopenSession(4242);
    QVERIFY(failed.wait(30000));
    QMessageBox* box = visibleErrorDialog(window);
    QVERIFY(box);
    QVERIFY2(box->text().contains("no session 4242"), qPrintable(box->text()));
    QCOMPARE(window.statusBar()->currentMessage(), QString());  // "Reading session..." is gone
  }

  // The export dialog: the open model's kernels, compiled, with a manifest;
  // the records as JSON lines; and a folder that cannot be written.
  void exportDialogWritesKernelsAndRecords() {
    MainWindow window;
    QVERIFY(reopen(window, modelSession_));
    QVERIFY(window.findChild<QAction*>("actionExport")->isEnabled());
    tessel::ui::ExportDialog* dialog = window.showExport();
    QVERIFY(dialog && dialog->isVisible());
    QCOMPARE(dialog->scopeBox()->currentData().toInt(), int(tessel::ui::ExportDialog::ModelScope));

    const QString out = tmp_.filePath("export");
    dialog->setOutputDirectory(out);
    dialog->setFormat("kernels");
    QSignalSpy exported(dialog, &tessel::ui::ExportDialog::exported);
    dialog->startExport();
    QVERIFY(dialog->isRunning());
    QVERIFY(exported.wait(240000));
    QVERIFY2(exported.at(0).at(0).toBool(), qPrintable(dialog->report()));
    const QJsonObject manifest = QJsonDocument::fromJson(readAll(out + "/manifest.json")).object();
    QCOMPARE(manifest["kernels"].toArray().size(), 5);
    QVERIFY(QFileInfo(out + "/lib/libtessel_kernels.so").size() > 0);
    QVERIFY(QFileInfo::exists(out + "/include/tessel_kernels.h"));
    QVERIFY(QFileInfo::exists(out + "/CMakeLists.txt"));
    QVERIFY2(dialog->report().contains("Exported 5 kernels"), qPrintable(dialog->report()));

    // Every record of the database as JSON lines.
    dialog->setScope(tessel::ui::ExportDialog::DatabaseScope);
    dialog->setFormat("jsonl");
    dialog->setOutputDirectory(tmp_.filePath("records"));
    dialog->startExport();
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported.at(1).at(0).toBool(), qPrintable(dialog->report()));
    const QList<QByteArray> lines = readAll(tmp_.filePath("records/records.jsonl")).trimmed().split('\n');
    QCOMPARE(lines.size(), scalar(db_, "SELECT count(*) FROM records").toInt());

    // A folder that cannot be made: the report names the problem.
    dialog->setOutputDirectory("/proc/tessel-cannot-write-here");
    dialog->startExport();
    QVERIFY(exported.wait(60000));
    QVERIFY(!exported.at(2).at(0).toBool());
    QVERIFY2(dialog->report().startsWith("Export failed"), qPrintable(dialog->report()));

    // The kernels' folder again: it holds files, so it is refused (and left
    // as it was) until "Replace" is ticked; then it is replaced whole.
    QFile mine(out + "/notes.txt");
    QVERIFY(mine.open(QIODevice::WriteOnly));
    mine.write("my notes\n");
    mine.close();
    dialog->setOutputDirectory(out);
    dialog->startExport();
    QVERIFY(exported.wait(60000));
    QVERIFY(!exported.at(3).at(0).toBool());
    QVERIFY2(dialog->report().contains("the folder is not empty") && dialog->report().contains("Replace the folder"),
             qPrintable(dialog->report()));
    QVERIFY(QFileInfo::exists(out + "/notes.txt"));
    QVERIFY(QFileInfo::exists(out + "/manifest.json"));
    dialog->findChild<QCheckBox*>("exportReplace")->setChecked(true);
    dialog->startExport();
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported.at(4).at(0).toBool(), qPrintable(dialog->report()));
    QVERIFY(QFileInfo::exists(out + "/records.jsonl") && !QFileInfo::exists(out + "/notes.txt"));
  }

  // Sessions of a database that does not exist: an error dialog, no sessions dialog.
  void sessionsOfAMissingDatabaseShowAnError() {
    MainWindow window;
    window.setPersistent(false);
    window.show();
    const QString missing = tmp_.filePath("missing.db");
    QVERIFY(window.setDatabasePath(missing));  // a new file: the first tuning makes it
    QVERIFY(window.showSessions());
    QTRY_VERIFY_WITH_TIMEOUT(visibleErrorDialog(window), 30000);
    QVERIFY2(visibleErrorDialog(window)->text().contains("missing.db"), qPrintable(visibleErrorDialog(window)->text()));
    QTRY_VERIFY(!window.findChild<tessel::ui::SessionsDialog*>());
    QVERIFY(!QFile::exists(missing));
    // An empty file is accepted too: a tuning makes it a database.
    const QString empty = tmp_.filePath("empty.db");
    QVERIFY(QFile(empty).open(QIODevice::WriteOnly));
    QVERIFY(window.setDatabasePath(empty));
  }

  // A file that is not a database: refused with a dialog naming it, left as it was.
  void corruptDatabaseShowsErrorDialog() {
    const QString bad = tmp_.filePath("corrupt.db");
    QByteArray bytes = readAll(db_);
    QVERIFY(bytes.size() > 4096);
    bytes.replace(0, 16, "not a database!!");  // the SQLite header is gone
    {
      QFile f(bad);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(bytes);
    }
    MainWindow window;
    window.setPersistent(false);
    window.show();
    QVERIFY(!window.setDatabasePath(bad));
    QMessageBox* box = visibleErrorDialog(window);
    QVERIFY(box);
    QVERIFY2(box->text().contains("corrupt.db"), qPrintable(box->text()));
    QVERIFY(window.databasePath().isEmpty());
    QCOMPARE(readAll(bad), bytes);

    // A table dropped: named in the dialog (not "Ready", not SQL), the file as it was.
    const QString dropped = tmp_.filePath("dropped.db");
    QVERIFY(QFile::copy(db_, dropped));
    sqlite3* raw = nullptr;
    QCOMPARE(sqlite3_open(dropped.toUtf8().constData(), &raw), SQLITE_OK);
    QCOMPARE(sqlite3_exec(raw, "DROP TABLE records", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(raw);
    const QByteArray droppedBytes = readAll(dropped);
    QVERIFY(!window.setDatabasePath(dropped));
    box = nullptr;
    for (QMessageBox* b : window.findChildren<QMessageBox*>("errorDialog"))
      if (b->isVisible() && b->text().contains("dropped.db")) box = b;
    QVERIFY(box);
    QVERIFY2(box->text().contains("records") && !box->text().contains("no such table"), qPrintable(box->text()));
    QCOMPARE(readAll(dropped), droppedBytes);
  }

  // A model with an op Tessel does not support: the dialog names the op and node.
  void unsupportedOpShowsErrorDialog() {
#ifndef TESSEL_HAVE_ONNX
    TESSEL_SKIP("onnx", "built without ONNX import (libonnx-dev was not found): no .onnx model can be opened");
#else
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("g");
    g->add_input()->mutable_name()->push_back('x');
    g->add_output()->mutable_name()->push_back('y');
    for (auto* v : {g->mutable_input(0), g->mutable_output(0)}) {
      auto* t = v->mutable_type()->mutable_tensor_type();
      t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
      t->mutable_shape()->add_dim()->set_dim_value(4);
    }
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Frobnicate");
    n->set_name("frob_1");
    n->add_input()->push_back('x');
    n->add_output()->push_back('y');
    const QString path = tmp_.filePath("unsupported.onnx");
    {
      std::ofstream f(path.toStdString(), std::ios::binary);
      QVERIFY(m.SerializeToOstream(&f));
    }
    MainWindow window;
    window.setPersistent(false);
    window.show();
    QSignalSpy failed(&window, &MainWindow::modelFailed);
    window.setModelPath(path);
    QVERIFY(failed.wait(60000));
    QMessageBox* box = visibleErrorDialog(window);
    QVERIFY(box);
    QVERIFY2(box->text().contains("unsupported op 'Frobnicate' in node 'frob_1'"), qPrintable(box->text()));
    QVERIFY2(box->text().contains("unsupported.onnx"), qPrintable(box->text()));
#endif
  }

  // Another process holds the database for writing: tuning fails at once
  // with a dialog that says so, and the studio goes on.
  void databaseBeingWrittenShowsErrorDialog() {
    const QString busy = tmp_.filePath("busy.db");
    auto writer = tessel::store::Database::open(busy.toStdString(), tessel::store::OpenMode::ReadWrite);
    MainWindow window;
    window.setPersistent(false);
    window.show();
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    QVERIFY(window.setDatabasePath(busy));
    QSignalSpy done(&window, &MainWindow::tuningFinished);
    window.startTuning();
    QVERIFY(done.wait(60000));  // the window's signal: the dialog is up by then
    QVERIFY(!done.at(0).at(0).toBool());
    QMessageBox* box = visibleErrorDialog(window);
    QVERIFY(box);
    QVERIFY2(box->text().contains("being written by another Tessel process"), qPrintable(box->text()));
    QVERIFY(window.findChild<QAction*>("actionStart")->isEnabled());
  }

  // A tuning killed with SIGKILL leaves its session `running` in the file:
  // the studio shows it `interrupted` with why (and writes nothing while it
  // only reads), reopens it, and Start takes it over to the end.
  void interruptedSessionIsShownAndResumed() {
    const QString db = tmp_.filePath("killed.db");
    QProcess cli;
    cli.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    cli.start(TESSEL_CLI_PATH, {"tune", "tiny_cnn", "--trials", "100000", "--db", db, "--quiet"});
    QVERIFY(cli.waitForStarted());
    QElapsedTimer clock;
    clock.start();
    while (scalar(db, "SELECT count(*) FROM records").toInt() < 8 && clock.elapsed() < 120000)
      QTest::qWait(200);
    ::kill(static_cast<pid_t>(cli.processId()), SIGKILL);
    QVERIFY(cli.waitForFinished(30000));
    const int killedAt = scalar(db, "SELECT count(*) FROM records").toInt();
    QVERIFY2(killedAt >= 8, qPrintable(QString::number(killedAt)));
    QCOMPARE(scalar(db, "SELECT status FROM sessions"), QString("running"));  // as the killed process left it
    const qint64 session = scalar(db, "SELECT id FROM sessions").toLongLong();

    MainWindow window;
    window.setPersistent(false);
    QVERIFY(window.setDatabasePath(db));
    tessel::ui::SessionsDialog* dialog = window.showSessions();
    QVERIFY(dialog);
    QSignalSpy loaded(dialog, &tessel::ui::SessionsDialog::loaded);
    QVERIFY(dialog->isLoaded() || loaded.wait(30000));
    QStandardItemModel* rows = dialog->sessionsModel();
    QCOMPARE(rows->rowCount(), 1);
    QStandardItem* status = rows->item(0, tessel::ui::SessionsDialog::Status);
    QCOMPARE(status->text(), QString("interrupted"));
    QVERIFY2(status->toolTip().contains("process ended"), qPrintable(status->toolTip()));
    dialog->close();
    QCOMPARE(scalar(db, "SELECT status FROM sessions"), QString("running"));  // a reader writes nothing

    QSignalSpy reopened(&window, &MainWindow::sessionReopened);
    window.reopenSession(session);
    QVERIFY(reopened.wait(60000));
    QCOMPARE(window.resumableSession(), session);
    window.setTrialBudget(16);
    QSignalSpy done(&window, &MainWindow::tuningFinished);
    window.startTuning();
    QVERIFY(done.wait(300000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(scalar(db, "SELECT count(*) FROM sessions"), QString("1"));
    QCOMPARE(scalar(db, "SELECT status FROM sessions"), QString("finished"));
    QVERIFY(scalar(db, "SELECT count(*) FROM records").toInt() >= killedAt + 16);
  }

  // tessel-studio --db FILE --reopen SESSION --screenshot: the reopened session.
  void screenshotOfAReopenedSession() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", tmp_.filePath("child-config"));
    QProcess studio;
    studio.setProcessEnvironment(env);
    const QString png = tmp_.filePath("session.png");
    studio.start(TESSEL_STUDIO_EXE, {"--db", db_, "--reopen", QString::number(modelSession_), "--screenshot", png});
    QVERIFY(studio.waitForFinished(120000));
    QVERIFY2(studio.exitCode() == 0, studio.readAllStandardError().constData());
    QImage image;
    QVERIFY(image.load(png, "PNG"));
    QVERIFY(image.width() > 0);

    // A database that cannot be used stops the studio before anything runs.
    const QString junk = tmp_.filePath("junk.db");
    {
      QFile f(junk);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray(8192, 'x'));
    }
    studio.start(TESSEL_STUDIO_EXE, {"tiny_cnn", "--db", junk, "--tune", "16", "--screenshot", png});
    QVERIFY(studio.waitForFinished(60000));
    QVERIFY(studio.exitCode() != 0);
    QVERIFY(studio.readAllStandardError().contains("cannot use --db"));

    // --tune resumes model sessions only.
    studio.start(TESSEL_STUDIO_EXE,
                 {"--db", db_, "--reopen", QString::number(taskSession_), "--tune", "16", "--screenshot", png});
    QVERIFY(studio.waitForFinished(60000));
    QVERIFY(studio.exitCode() != 0);
    QVERIFY(studio.readAllStandardError().contains("cannot be resumed"));

    studio.start(TESSEL_STUDIO_EXE, {"tiny_cnn", "--reopen", "3", "--screenshot", png});
    QVERIFY(studio.waitForFinished(60000));
    QVERIFY(studio.exitCode() != 0);
    QVERIFY(studio.readAllStandardError().contains("--reopen"));
  }
};

QTEST_MAIN(TestSessions)
#include "test_sessions.moc"
