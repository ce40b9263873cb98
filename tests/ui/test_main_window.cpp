// Tessel Studio's main window, in process, and the tessel-studio executable,
// run as a real process (its path comes from CMake: TESSEL_STUDIO_EXE).
#include <qcustomplot.h>

#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMenu>
#include <QMessageBox>
#include <QProcess>
#include <QSet>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "cost/learned/learned_models.h"
#include "frontend/model_loader.h"
#include "knowledge/knowledge_base.h"
#include "measure/target_check.h"
#include "store/database.h"
#include "store/session_store.h"
#include "target/target.h"
#include "tessel_test.h"
#include "tuning/knowledge_build.h"
#include "ui/code_view.h"
#include "ui/fleet_panel.h"
#include "ui/graph_layout.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/main_window.h"
#include "ui/node_properties_panel.h"
#include "ui/plots_panel.h"
#include "ui/roofline_view.h"
#include "ui/run_panel.h"
#include "ui/search_space_view.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_dialog.h"
#include "ui/tuning_session.h"
#include "ui_thread_gaps.h"

using tessel::ui::LogPanel;
using tessel::ui::MainWindow;
using tessel::ui::test::UiThreadGaps;

namespace {

const QStringList kDockTitles = {"Graph", "Tasks", "Search space", "Code", "Properties",
                                 "Plots", "Run",   "Roofline",     "Log",  "Fleet"};

struct ProcessResult {
  bool finished = false;
  QProcess::ExitStatus exitStatus = QProcess::CrashExit;
  int exitCode = -1;
  QString out;
  QString err;
};

QDockWidget* dockTitled(const MainWindow& window, const QString& title) {
  for (QDockWidget* dock : window.findChildren<QDockWidget*>()) {
    if (dock->windowTitle() == title) return dock;
  }
  return nullptr;
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private:
  // Runs tessel-studio offscreen, with its configuration directory in the
  // temporary directory so that it cannot touch the user's settings.
  ProcessResult runStudio(const QStringList& arguments) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("QT_QPA_PLATFORM", "offscreen");
    env.insert("XDG_CONFIG_HOME", childConfigDir());
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(TESSEL_STUDIO_EXE), arguments);
    ProcessResult result;
    result.finished = process.waitForFinished(60000);
    if (!result.finished) process.kill();
    result.exitStatus = process.exitStatus();
    result.exitCode = process.exitCode();
    result.out = QString::fromLocal8Bit(process.readAllStandardOutput());
    result.err = QString::fromLocal8Bit(process.readAllStandardError());
    return result;
  }

  QString childConfigDir() const { return tmp_.filePath("child-config"); }
  QString settingsFile() const {
    return tmp_.filePath("settings/Tessel/Tessel Studio.conf");  // QSettings::setPath below
  }

  QTemporaryDir tmp_;

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    QVERIFY(QFileInfo(QStringLiteral(TESSEL_STUDIO_EXE)).isExecutable());
    // Every QSettings of this process lives in the temporary directory.
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, tmp_.filePath("settings"));
    // The default database too (it does not exist: Export starts disabled).
    qputenv("TESSEL_DB", tmp_.filePath("default.db").toUtf8());
    QVERIFY(QDir().mkpath(childConfigDir()));
  }

  void init() {
    QSettings settings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
    settings.clear();
    // A run after each tuning would compete with these tests' timings (test_run_panel tests it).
    settings.setValue(MainWindow::kRunAfterTuningKey, false);
  }

  void hasItsDocks() {
    MainWindow window;
    const QList<QDockWidget*> docks = window.findChildren<QDockWidget*>();
    QStringList titles;
    QSet<QString> names;
    for (QDockWidget* dock : docks) {
      titles << dock->windowTitle();
      names << dock->objectName();  // saveState() needs unique names
      QVERIFY2(dock->widget() != nullptr, qPrintable(dock->windowTitle()));
      QCOMPARE(window.dockWidgetArea(dock) != Qt::NoDockWidgetArea, true);
    }
    QStringList expected = kDockTitles;
    titles.sort();
    expected.sort();
    QCOMPARE(titles, expected);
    QCOMPARE(names.size(), kDockTitles.size());
    QVERIFY(!names.contains(QString()));

    // Each dock holds its view.
    QVERIFY(qobject_cast<LogPanel*>(dockTitled(window, "Log")->widget()));
    QVERIFY(qobject_cast<tessel::ui::FleetPanel*>(dockTitled(window, "Fleet")->widget()));
    QVERIFY(qobject_cast<tessel::ui::TasksPanel*>(dockTitled(window, "Tasks")->widget()));
    QVERIFY(qobject_cast<tessel::ui::GraphView*>(dockTitled(window, "Graph")->widget()));
    QVERIFY(qobject_cast<tessel::ui::PlotsPanel*>(dockTitled(window, "Plots")->widget()));
    QVERIFY(qobject_cast<tessel::ui::SearchSpaceView*>(dockTitled(window, "Search space")->widget()));
    QVERIFY(qobject_cast<tessel::ui::CodeView*>(dockTitled(window, "Code")->widget()));
    QVERIFY(qobject_cast<tessel::ui::NodePropertiesPanel*>(dockTitled(window, "Properties")->widget()));
    QVERIFY(qobject_cast<tessel::ui::RunPanel*>(dockTitled(window, "Run")->widget()));
    QVERIFY(qobject_cast<tessel::ui::RooflineView*>(dockTitled(window, "Roofline")->widget()));

    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    for (QDockWidget* dock : docks)
      QVERIFY2(dock->isVisible(), qPrintable(dock->windowTitle()));
  }

  void toolbarHasTheActions() {
    MainWindow window;
    auto* toolBar = window.findChild<QToolBar*>("mainToolBar");
    QVERIFY(toolBar);
    const QList<QAction*> onToolBar = toolBar->actions();

    const QList<std::pair<QString, bool>> expected = {
        {"actionOpenModel", true}, {"actionSessions", true}, {"actionStart", false},   {"actionPause", false},
        {"actionStop", false},     {"actionRun", false},     {"actionStopRun", false}, {"actionExport", false}};
    for (const auto& [name, enabled] : expected) {
      auto* action = window.findChild<QAction*>(name);
      QVERIFY2(action, qPrintable(name));
      QVERIFY2(onToolBar.contains(action), qPrintable(name));
      QVERIFY(!action->text().isEmpty());
      QVERIFY(!action->icon().isNull());
      QCOMPARE(action->isEnabled(), enabled);
    }
    QCOMPARE(window.findChild<QAction*>("actionOpenModel")->shortcut(), QKeySequence(QKeySequence::Open));
    // The zoo from the toolbar: every zoo model, and picking one opens it.
    auto* zoo = window.findChild<QMenu*>("zooMenu");
    QVERIFY(zoo);
    QStringList zooNames;
    for (QAction* a : zoo->actions())
      zooNames << a->text();
    QVERIFY2(zooNames.contains("resnet18") && zooNames.contains("bert_base") && zooNames.contains("tiny_cnn"),
             qPrintable(zooNames.join(',')));
    QSignalSpy ready(&window, &MainWindow::modelReady);
    zoo->actions().at(zooNames.indexOf("tiny_cnn"))->trigger();
    QVERIFY(ready.wait(60000));
    QCOMPARE(window.modelPath(), QString("tiny_cnn"));
  }

  void hasIconAndStatusBar() {
    MainWindow window;
    // The icon comes from the resources compiled into the static tessel_ui.
    QVERIFY(!window.windowIcon().isNull());
    QVERIFY(!window.windowIcon().pixmap(32, 32).isNull());
    QVERIFY(window.statusBar());
    QCOMPARE(window.statusBar()->currentMessage(), QString("Ready"));
  }

  void showsModelAndDatabase() {
    MainWindow window;
    QCOMPARE(window.windowTitle(), QString("Tessel Studio"));
    window.setModelPath("resnet18");
    window.setDatabasePath("/tmp/tuning.db");
    QCOMPARE(window.modelPath(), QString("resnet18"));
    QCOMPARE(window.databasePath(), QString("/tmp/tuning.db"));
    QVERIFY(window.windowTitle().contains("resnet18"));
    QVERIFY(window.windowTitle().contains("Tessel Studio"));
    const QString log = window.logPanel()->toPlainText();
    QVERIFY2(log.contains("resnet18"), qPrintable(log));
    QVERIFY2(log.contains("/tmp/tuning.db"), qPrintable(log));
  }

  // The cost-model box offers every model of the registry, the learned ones
  // (registered at start-up, as tessel-studio's main does) included.
  void offersTheLearnedCostModels() {
    tessel::cost::registerLearnedCostModels();
    MainWindow window;
    auto* box = window.findChild<QComboBox*>(QStringLiteral("costModelBox"));
    QVERIFY(box);
    QStringList items;
    for (int i = 0; i < box->count(); ++i)
      items << box->itemText(i);
    for (const tessel::cost::CostModelEntry& e : tessel::cost::costModels())
      QCOMPARE(items.contains(QString::fromStdString(e.name)), e.available);
#ifdef TESSEL_HAVE_LEARNED_COST
    for (const char* name : {"mlp", "gat", "atformer"})
      QVERIFY2(items.contains(name), qPrintable(items.join(", ")));
    QVERIFY(box->itemData(items.indexOf("atformer"), Qt::ToolTipRole).toString().contains("ATFormer"));
#endif
  }

  // A trained model file locks the box on its model; a file that is not one
  // is refused with a dialog naming the problem; "" goes back to fresh models.
  void startsFromATrainedCostModel() {
    if (!tessel::cost::findCostModel("xgb")->available)
      TESSEL_SKIP("xgboost", "this build has no XGBoost: no model to save");
    QTemporaryDir dir;
    const QString file = dir.filePath("m.tcm");
    {
      auto m = tessel::cost::makeCostModel("xgb", 1);
      std::vector<tessel::cost::ProgramFeatureSet> p(3);
      for (size_t i = 0; i < p.size(); ++i) {
        p[i].valid = true;
        p[i].stores = {std::vector<float>(8, float(i))};
      }
      m->updateFeatures({{"t", p, {1.0, 2.0, 3.0}}});
      tessel::cost::saveCostModelFile(file.toStdString(), *m);
    }
    MainWindow window;
    auto* box = window.findChild<QComboBox*>(QStringLiteral("costModelBox"));
    box->setCurrentText("random");
    QVERIFY(window.setCostModelFile(file));
    QCOMPARE(window.costModelFile(), file);
    QCOMPARE(box->currentText(), QString("xgb"));
    QVERIFY(!box->isEnabled());
    QVERIFY(window.findChild<QToolButton*>("costModelFileButton")->text().contains("m.tcm"));
    const QString notAModel = dir.filePath("not.tcm");
    QFile f(notAModel);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("hello");
    f.close();
    QVERIFY(!window.setCostModelFile(notAModel));
    QCOMPARE(window.costModelFile(), file);  // unchanged
    auto* error = window.findChild<QMessageBox*>("errorDialog");
    QVERIFY(error && error->text().contains("not a Tessel cost model file"));
    QVERIFY(window.setCostModelFile({}));
    QVERIFY(box->isEnabled());
  }

  void restoreWithoutSavedLayoutKeepsDefaults() {
    MainWindow window;
    const QSize before = window.size();
    QVERIFY(!window.restoreLayout());
    QCOMPARE(window.size(), before);
  }

  void layoutRoundTripsThroughSettings() {
    // Sizes within the offscreen platform's 800x600 screen, which
    // restoreGeometry() would otherwise shrink to fit.
    const QRect geometry(30, 40, 700, 500);
    {
      MainWindow window;
      window.setGeometry(geometry);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      dockTitled(window, "Code")->hide();
      dockTitled(window, "Plots")->setFloating(true);
      window.saveLayout();
    }
    QVERIFY2(QFile::exists(settingsFile()), qPrintable(settingsFile()));
    {
      QSettings settings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
      QVERIFY(!settings.value(MainWindow::kGeometryKey).toByteArray().isEmpty());
      QVERIFY(!settings.value(MainWindow::kStateKey).toByteArray().isEmpty());
    }

    MainWindow restored;
    QVERIFY(restored.size() != geometry.size());  // the default differs
    QVERIFY(restored.restoreLayout());
    restored.show();
    QVERIFY(QTest::qWaitForWindowExposed(&restored));
    QCOMPARE(restored.size(), geometry.size());
    QVERIFY(!dockTitled(restored, "Code")->isVisible());
    QVERIFY(dockTitled(restored, "Plots")->isFloating());
    QVERIFY(dockTitled(restored, "Graph")->isVisible());
    QVERIFY(!dockTitled(restored, "Graph")->isFloating());

    restored.resetLayout();
    for (const QString& title : kDockTitles) {
      QVERIFY2(dockTitled(restored, title)->isVisible(), qPrintable(title));
      QVERIFY2(!dockTitled(restored, title)->isFloating(), qPrintable(title));
    }
  }

  void closingSavesLayout() {
    {
      MainWindow window;
      window.resize(1100, 760);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      dockTitled(window, "Tasks")->hide();
      QVERIFY(window.close());
    }
    MainWindow restored;
    QVERIFY(restored.restoreLayout());
    QCOMPARE(restored.size(), QSize(1100, 760));
    QVERIFY(!dockTitled(restored, "Tasks")->isVisibleTo(&restored));
    QVERIFY(dockTitled(restored, "Log")->isVisibleTo(&restored));
  }

  void screenshotWritesPng() {
    const QString png = tmp_.filePath("shot.png");
    const ProcessResult result = runStudio({"resnet18", "--db", tmp_.filePath("tuning.db"), "--screenshot", png});
    QVERIFY2(result.finished, "tessel-studio --screenshot did not finish in 60 s");
    QCOMPARE(result.exitStatus, QProcess::NormalExit);
    QVERIFY2(result.exitCode == 0, qPrintable(result.err));
    QVERIFY(QFileInfo(png).size() > 0);

    QImage image;
    QVERIFY(image.load(png, "PNG"));
    QVERIFY(image.width() > 0 && image.height() > 0);
    // A rendered window, not a blank rectangle: many distinct colours.
    QSet<QRgb> colours;
    for (int y = 0; y < image.height(); y += 4) {
      for (int x = 0; x < image.width(); x += 4)
        colours.insert(image.pixel(x, y));
    }
    QVERIFY2(colours.size() > 10, qPrintable(QString::number(colours.size())));

    // A screenshot uses the default layout and saves no settings.
    QVERIFY(!QFile::exists(childConfigDir() + "/Tessel/Tessel Studio.conf"));
  }

  void screenshotToUnwritablePathFails() {
    const QString png = "/nonexistent/dir/x.png";
    const ProcessResult result = runStudio({"--screenshot", png});
    QVERIFY(result.finished);
    QCOMPARE(result.exitStatus, QProcess::NormalExit);
    QVERIFY(result.exitCode != 0);
    QVERIFY2(result.err.contains("cannot write screenshot"), qPrintable(result.err));
    QVERIFY2(result.err.contains(png), qPrintable(result.err));
    QVERIFY(!QFile::exists(png));
  }

  // Opening a zoo model fills the graph (an item per node, a cluster per
  // fused partition) and the tasks; selecting a task fills the search-space
  // and code views.
  void openModelShowsGraphTasksAndViews() {
    MainWindow window;
    QSignalSpy ready(&window, &MainWindow::modelReady);
    QSignalSpy laidOut(window.graphView(), &tessel::ui::GraphView::layoutFinished);
    window.setModelPath("resnet18");
    QVERIFY(ready.wait(60000));
    auto model = window.preparedModel();
    QVERIFY(model);
    QVERIFY(laidOut.wait(60000));
    QCOMPARE(window.graphView()->nodeItemCount(), int(model->graph.nodes.size()));
    QCOMPARE(window.graphView()->clusterItemCount(), int(tessel::ui::clusterGroups(*model).size()));
    QCOMPARE(window.tasksPanel()->model()->rowCount(), int(model->tasks.size()));
    QCOMPARE(window.recentModels().value(0), QString("resnet18"));  // File > Open recent

    QSignalSpy spaceReady(window.searchSpaceView(), &tessel::ui::SearchSpaceView::ready);
    QSignalSpy codeReady(window.codeView(), &tessel::ui::CodeView::ready);
    window.selectTask(1);
    QVERIFY(spaceReady.wait(60000) || window.searchSpaceView()->isReady());
    QVERIFY(!window.searchSpaceView()->summary().sketches.empty());
    QVERIFY(codeReady.wait(60000) || window.codeView()->isReady());
    QVERIFY(window.codeView()->code().contains("for ("));
    QVERIFY(!window.graphView()->scene()->selectedItems().isEmpty());
  }

  // A file that is not a model: an error dialog names the problem, the
  // window goes on.
  void badModelShowsErrorDialog() {
    QTemporaryDir dir;
    const QString bad = dir.filePath("broken.onnx");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a protobuf");
    f.close();
    MainWindow window;
    window.show();
    QSignalSpy failed(&window, &MainWindow::modelFailed);
    window.setModelPath(bad);
    QVERIFY(failed.wait(60000));
    auto* box = window.findChild<QMessageBox*>("errorDialog");
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QVERIFY2(box->text().contains("broken.onnx"), qPrintable(box->text()));
    QVERIFY(!window.preparedModel());
    box->accept();
    window.setModelPath("tiny_cnn");  // still usable
    QSignalSpy ready(&window, &MainWindow::modelReady);
    QVERIFY(ready.wait(60000));
  }

  // Start on a zoo model: the tasks panel fills, rounds land in the
  // database and both plots, the UI thread never blocks for long, Start
  // comes back when the tuning ends.
  void startTunesTheModel() {
    QTemporaryDir dir;
    MainWindow window;
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    window.setDatabasePath(dir.filePath("studio.db"));
    window.setTrialBudget(80);  // a round per task: then every task has a program and an estimate exists
    UiThreadGaps gaps;          // how long the UI thread is ever kept from its events
    gaps.start();
    auto* start = window.findChild<QAction*>("actionStart");
    QVERIFY(start->isEnabled());
    QSignalSpy done(&window, &MainWindow::tuningFinished);
    start->trigger();
    QVERIFY(!start->isEnabled());
    QCOMPARE(window.progressBar()->maximum(), 80);
    QVERIFY(window.progressBar()->isVisibleTo(&window));
    QVERIFY(window.findChild<QAction*>("actionStop")->isEnabled());
    QVERIFY(done.wait(240000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    tessel::ui::TasksModel* tasks = window.tasksPanel()->model();
    QCOMPARE(tasks->rowCount(), 5);
    int trials = 0;
    for (int i = 0; i < tasks->rowCount(); ++i)
      trials += tasks->data(tasks->index(i, tessel::ui::TasksModel::Trials), Qt::DisplayRole).toInt();
    QVERIFY2(trials >= 80 && trials < 80 + 16, qPrintable(QString::number(trials)));  // rounds are whole batches
    QVERIFY(start->isEnabled());
    QVERIFY(!window.findChild<QAction*>("actionStop")->isEnabled());
    QVERIFY(QFile::exists(dir.filePath("studio.db")));
    // Every task's points (the window shows the first task's, all scored by an untrained model).
    window.plotsPanel()->selectTask(-1);
    window.plotsPanel()->replotNow();
    QVERIFY(window.plotsPanel()->scatterPointCount() > 0);
    // A cold start: the first round's scores came from a model that had learned nothing.
    QVERIFY(window.plotsPanel()->untrainedPointCount() > 0);
    QVERIFY(window.plotsPanel()->scatterSummary().contains("untrained"));
    QVERIFY(window.plotsPanel()->estimatePlot()->graph(0)->dataCount() > 0);
    // The roofline: each task's best under this machine's roofs, and the tasks table's "of roof".
    tessel::ui::RooflineView* roofline = window.rooflineView();
    if (!roofline->hasCeilings()) {
      QSignalSpy ceilings(&window, &MainWindow::ceilingsReady);
      QVERIFY(ceilings.wait(60000));
    }
    QCOMPARE(roofline->bestPointCount(), 5);
    for (int i = 0; i < tasks->rowCount(); ++i) {
      const double f = tasks->roofFraction(i);
      // Finite and positive; above 1 is possible: a small task's data may sit
      // in L1 or L2, faster than the last-level cache's roof.
      QVERIFY2(std::isfinite(f) && f > 0, qPrintable(QString("task %1: %2 of its roof").arg(i).arg(f)));
    }
    gaps.stop();
    qInfo("longest UI-thread gap while tuning: %lld ms (%lld ms by the wall clock)", gaps.worstMs(),
          gaps.worstWallMs());
    // 250 ms, not 100: on a quiet machine the worst gap is 22-54 ms, but on a
    // CI machine whose two cores run other suites too it reached 109 ms with
    // the run-queue wait already taken out (page faults and I/O waits of a
    // loaded machine still count). A stall a user would feel fails it.
    QVERIFY2(gaps.worstMs() < 250, qPrintable(QString("the UI thread was blocked for %1 ms").arg(gaps.worstMs())));
  }

  // A tuning starts warm by default and says from what, in the log and the
  // status bar; unticked, it says it starts cold. The knowledge base here is
  // built from the committed dataset for this machine's class: tiny_cnn's
  // convolutions are none of its tasks but share ResNet's structure.
  void saysWhatTheTuningStartsFrom() {
    QTemporaryDir dir;
    tessel::tuning::KnowledgeBuildConfig c;
    c.datasets = {TESSEL_DATA_DIR "/cost-dataset-cpu-zen4.jsonl.gz"};
    const std::string cls = tessel::knowledge::targetClass(tessel::target::Target::host());
    tessel::knowledge::writeKnowledgeBase(
        dir.filePath(QString::fromStdString(tessel::knowledge::knowledgeFileName(cls))).toStdString(),
        tessel::tuning::buildKnowledgeBase(c, nullptr));
    const QByteArray before = qgetenv("TESSEL_KNOWLEDGE_DIR");
    qputenv("TESSEL_KNOWLEDGE_DIR", dir.path().toUtf8());
    MainWindow window;
    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    window.setDatabasePath(dir.filePath("studio.db"));
    window.setTrialBudget(20);
    auto* warm = window.findChild<QCheckBox*>("warmStartBox");
    QVERIFY(warm && warm->isChecked());
    auto* session = window.findChild<tessel::ui::TuningSession*>();
    QVERIFY(session);
    for (bool warmStart : {true, false}) {
      warm->setChecked(warmStart);
      QSignalSpy started(session, &tessel::ui::TuningSession::warmStarted);
      QSignalSpy done(&window, &MainWindow::tuningFinished);
      window.findChild<QAction*>("actionStart")->trigger();
      // Sent from the tuning thread, straight to the spy: it may come before
      // the wait, and then its queued delivery to the window is still due.
      QVERIFY(started.count() || started.wait(120000));
      QCoreApplication::sendPostedEvents();
      const QString status = window.statusBar()->currentMessage();
      QVERIFY(done.wait(240000));
      QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
      const QString log = window.logPanel()->toPlainText();
      QCOMPARE(started.at(0).at(0).toBool(), warmStart);
      if (warmStart) {
        QVERIFY2(log.contains("started from") && log.contains("similar tasks") && log.contains(".tkb"),
                 qPrintable(log));
        QVERIFY2(status.contains("started from"), qPrintable(status));
      } else {
        QVERIFY2(log.contains("cold start: --cold"), qPrintable(log));
      }
      window.setModelPath("tiny_cnn");  // a new session, not the one just tuned
      QVERIFY(ready.wait(60000));
    }
    qputenv("TESSEL_KNOWLEDGE_DIR", before);
  }

  // The target box lists this machine's CPU, each x86-64 level and its GPU;
  // what this machine cannot measure is disabled, with why. The Options
  // dialog's choices and the chosen target are the session's config, as
  // `tessel tune` stores them, and the next window starts from them.
  void tuningOptionsAndTargetReachTheSession() {
    QTemporaryDir dir;
    MainWindow window;
    auto* targets = window.findChild<QComboBox*>("targetBox");
    QVERIFY(targets);
    QCOMPARE(targets->itemText(0), QString("cpu"));
    auto* items = qobject_cast<QStandardItemModel*>(targets->model());
    for (const tessel::measure::TargetChoice& c : tessel::measure::targetChoices()) {
      const int row = targets->findText(QString::fromStdString(c.target.str()));
      QVERIFY2(row >= 0, c.target.str().c_str());
      QCOMPARE(items->item(row)->isEnabled(), c.unavailable.empty());
      if (!c.unavailable.empty())
        QVERIFY(targets->itemData(row, Qt::ToolTipRole).toString().contains(QString::fromStdString(c.unavailable)));
    }
    QVERIFY(targets->findText("cuda") >= 0);
    QVERIFY(items->item(targets->findText("cpu -arch=x86-64"))->isEnabled());  // every x86-64 CPU runs it

    QSignalSpy ready(&window, &MainWindow::modelReady);
    window.setModelPath("tiny_cnn");
    QVERIFY(ready.wait(60000));
    targets->setCurrentIndex(targets->findText("cpu -arch=x86-64-v2"));  // prepares the model again
    QVERIFY(ready.wait(60000));
    window.setDatabasePath(dir.filePath("options.db"));
    window.setTrialBudget(16);
    window.findChild<QCheckBox*>("warmStartBox")->setChecked(false);
    window.findChild<QComboBox*>("costModelBox")->setCurrentText("random");

    window.findChild<QToolButton*>("tuningOptionsButton")->click();
    auto* dialog = window.findChild<tessel::ui::TuningDialog*>("tuningDialog");
    QVERIFY(dialog && dialog->isVisible());
    dialog->findChild<QComboBox*>("searchBox")->setCurrentText("random");
    dialog->findChild<QSpinBox*>("seedBox")->setValue(7);
    dialog->findChild<QSpinBox*>("batchBox")->setValue(4);
    dialog->findChild<QSpinBox*>("populationBox")->setValue(64);
    dialog->findChild<QComboBox*>("cacheStateBox")->setCurrentText("off");
    dialog->findChild<QSpinBox*>("timeoutBox")->setValue(5);
    dialog->accept();
    QCOMPARE(window.tuningOptions()->details().batch, 4);

    QSignalSpy done(&window, &MainWindow::tuningFinished);
    window.findChild<QAction*>("actionStart")->trigger();
    QVERIFY(!targets->isEnabled());  // the tuning's target stays as it is
    QVERIFY(done.wait(240000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QVERIFY(targets->isEnabled());
    const auto db =
        tessel::store::Database::open(dir.filePath("options.db").toStdString(), tessel::store::OpenMode::ReadOnly);
    const auto sessions = std::as_const(*db).sessions().all();
    QCOMPARE(sessions.size(), size_t(1));
    const auto config = nlohmann::json::parse(sessions[0].config);
    QCOMPARE(config["target"].get<std::string>(), std::string("cpu -arch=x86-64-v2"));
    QCOMPARE(config["search"].get<std::string>(), std::string("random"));
    QCOMPARE(config["seed"].get<int>(), 7);
    QCOMPARE(config["batch"].get<int>(), 4);
    QCOMPARE(config["population"].get<int>(), 64);
    QCOMPARE(config["cache_flush"].get<std::string>(), std::string("off"));
    QCOMPARE(config["timeout_s"].get<double>(), 5.0);
    QCOMPARE(config["warm"].get<bool>(), false);

    // Saved as the tuning started (this window is persistent): the next one starts from them.
    MainWindow next;
    QCOMPARE(next.findChild<QComboBox*>("targetBox")->currentText(), QString("cpu -arch=x86-64-v2"));
    QCOMPARE(next.tuningOptions()->details(), window.tuningOptions()->details());
  }

  void rejectsBadArguments() {
    const ProcessResult unknown = runStudio({"--no-such-option"});
    QVERIFY(unknown.finished);
    QVERIFY(unknown.exitCode != 0);
    QVERIFY2(unknown.err.contains("no-such-option"), qPrintable(unknown.err));

    const ProcessResult twoModels = runStudio({"a.onnx", "b.onnx", "--screenshot", "x.png"});
    QVERIFY(twoModels.finished);
    QVERIFY(twoModels.exitCode != 0);
    QVERIFY2(twoModels.err.contains("MODEL"), qPrintable(twoModels.err));

    const ProcessResult help = runStudio({"--help"});
    QVERIFY(help.finished);
    QCOMPARE(help.exitCode, 0);
    QVERIFY2(help.out.contains("--screenshot"), qPrintable(help.out));
    QVERIFY(help.out.contains("--db"));
  }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
