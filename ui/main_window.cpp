#include "ui/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QSettings>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <cmath>

#include "ui/app_icon.h"
#include "ui/log_panel.h"
#include "ui/placeholder_panel.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_session.h"

namespace tessel::ui {
namespace {

// Bump when the docks change in a way an old saved state should not restore.
constexpr int kStateVersion = 1;

QSettings layoutSettings() {
  return QSettings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("MainWindow"));
  setWindowIcon(appIcon());
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

  createActions();
  createToolBar();
  createDocks();
  createMenus();
  createStatusBar();
  updateTitle();
  connect(session_, &TuningSession::logMessage, log_, &LogPanel::appendMessage);
  connect(session_, &TuningSession::roundFinished, this, &MainWindow::onRound);
  connect(session_, &TuningSession::finished, this, &MainWindow::onFinished);
  connect(startAction_, &QAction::triggered, this, &MainWindow::startTuning);
  connect(pauseAction_, &QAction::triggered, this, &MainWindow::togglePause);
  connect(stopAction_, &QAction::triggered, this, &MainWindow::stopTuning);

  resize(1280, 800);
  defaultState_ = saveState(kStateVersion);
}

void MainWindow::createActions() {
  QStyle* s = style();

  openModelAction_ = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open model..."), this);
  openModelAction_->setObjectName(QStringLiteral("actionOpenModel"));
  openModelAction_->setShortcut(QKeySequence::Open);
  openModelAction_->setStatusTip(tr("Open a model: a zoo name, an ONNX or a TorchScript file"));
  connect(openModelAction_, &QAction::triggered, this, &MainWindow::openModel);

  // Tuning and export come with the tuning session adapter: disabled until then.
  startAction_ = new QAction(s->standardIcon(QStyle::SP_MediaPlay), tr("&Start"), this);
  startAction_->setObjectName(QStringLiteral("actionStart"));
  startAction_->setShortcut(Qt::Key_F5);
  startAction_->setStatusTip(tr("Start or resume tuning"));
  startAction_->setEnabled(false);

  pauseAction_ = new QAction(s->standardIcon(QStyle::SP_MediaPause), tr("&Pause"), this);
  pauseAction_->setObjectName(QStringLiteral("actionPause"));
  pauseAction_->setShortcut(Qt::Key_F6);
  pauseAction_->setStatusTip(tr("Pause tuning after the batch in flight"));
  pauseAction_->setEnabled(false);

  stopAction_ = new QAction(s->standardIcon(QStyle::SP_MediaStop), tr("S&top"), this);
  stopAction_->setObjectName(QStringLiteral("actionStop"));
  stopAction_->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  stopAction_->setStatusTip(tr("Stop tuning"));
  stopAction_->setEnabled(false);

  exportAction_ = new QAction(s->standardIcon(QStyle::SP_DialogSaveButton), tr("&Export..."), this);
  exportAction_->setObjectName(QStringLiteral("actionExport"));
  exportAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
  exportAction_->setStatusTip(tr("Export the tuned kernels"));
  exportAction_->setEnabled(false);

  resetLayoutAction_ = new QAction(tr("&Reset layout"), this);
  resetLayoutAction_->setObjectName(QStringLiteral("actionResetLayout"));
  connect(resetLayoutAction_, &QAction::triggered, this, &MainWindow::resetLayout);

  quitAction_ = new QAction(tr("&Quit"), this);
  quitAction_->setObjectName(QStringLiteral("actionQuit"));
  quitAction_->setShortcut(QKeySequence::Quit);
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);
}

void MainWindow::createToolBar() {
  toolBar_ = addToolBar(tr("Main"));
  toolBar_->setObjectName(QStringLiteral("mainToolBar"));
  toolBar_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toolBar_->addAction(openModelAction_);
  toolBar_->addSeparator();
  toolBar_->addAction(startAction_);
  toolBar_->addAction(pauseAction_);
  toolBar_->addAction(stopAction_);
  toolBar_->addSeparator();
  toolBar_->addAction(exportAction_);
}

void MainWindow::createDocks() {
  if (!session_) session_ = new TuningSession(this);
  auto* graphPanel =
      new PlaceholderPanel(tr("Computation graph"),
                           tr("The model's operators and tensors laid out by Graphviz, fused partitions as coloured "
                              "clusters; zoom, pan, search and properties of the selected operator."));
  auto* plotsPanel = new PlaceholderPanel(
      tr("Live plots"), tr("Best latency against trials per task, estimated end-to-end latency against time, and "
                           "the cost model's predicted against measured scores."));
  tasks_ = new TasksPanel(this);
  tasks_->follow(session_);
  auto* tasksPanel = tasks_;
  auto* spacePanel = new PlaceholderPanel(
      tr("Search space"), tr("The selected task's sketches as loop nests, the tunable parameters and their domains, "
                             "sampled annotations and the best program."));
  auto* codePanel = new PlaceholderPanel(tr("Generated code"), tr("The C++ or CUDA C kernel of the selected program."));
  log_ = new LogPanel(this);

  QDockWidget* graph = addPanel(tr("Graph"), "graphDock", graphPanel, Qt::LeftDockWidgetArea);
  QDockWidget* plots = addPanel(tr("Plots"), "plotsDock", plotsPanel, Qt::LeftDockWidgetArea);
  QDockWidget* tasks = addPanel(tr("Tasks"), "tasksDock", tasksPanel, Qt::RightDockWidgetArea);
  QDockWidget* space = addPanel(tr("Search space"), "searchSpaceDock", spacePanel, Qt::RightDockWidgetArea);
  QDockWidget* code = addPanel(tr("Code"), "codeDock", codePanel, Qt::RightDockWidgetArea);
  QDockWidget* log = addPanel(tr("Log"), "logDock", log_, Qt::BottomDockWidgetArea);

  // Graph above the plots on the left; tasks above the search space and the
  // code (tabbed) on the right; the log along the bottom.
  tabifyDockWidget(space, code);
  space->raise();
  resizeDocks({graph, tasks}, {760, 520}, Qt::Horizontal);
  resizeDocks({graph, plots, tasks, space}, {380, 240, 260, 360}, Qt::Vertical);
  resizeDocks({log}, {140}, Qt::Vertical);
}

QDockWidget* MainWindow::addPanel(const QString& title, const QString& objectName, QWidget* panel,
                                  Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, this);
  dock->setObjectName(objectName);  // saveState() identifies docks by name
  dock->setWidget(panel);
  addDockWidget(area, dock);
  docks_.append(dock);
  return dock;
}

void MainWindow::createMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(openModelAction_);
  file->addAction(exportAction_);
  file->addSeparator();
  file->addAction(quitAction_);

  QMenu* tuning = menuBar()->addMenu(tr("&Tuning"));
  tuning->addAction(startAction_);
  tuning->addAction(pauseAction_);
  tuning->addAction(stopAction_);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* dock : docks_)
    view->addAction(dock->toggleViewAction());
  view->addAction(toolBar_->toggleViewAction());
  view->addSeparator();
  view->addAction(resetLayoutAction_);
}

void MainWindow::createStatusBar() {
  modelLabel_ = new QLabel(this);
  databaseLabel_ = new QLabel(this);
  statusBar()->addPermanentWidget(modelLabel_);
  statusBar()->addPermanentWidget(databaseLabel_);
  statusBar()->showMessage(tr("Ready"));
}

void MainWindow::setModelPath(const QString& model) {
  model_ = model;
  log_->appendMessage(tr("Model: %1").arg(model));
  updateTitle();
  updateActions();
}

void MainWindow::setDatabasePath(const QString& database) {
  database_ = database;
  log_->appendMessage(tr("Database: %1").arg(database));
  updateTitle();
}

void MainWindow::updateActions() {
  const bool running = session_->isRunning();
  startAction_->setEnabled(!running && !model_.isEmpty());
  pauseAction_->setEnabled(running);
  pauseAction_->setText(session_->isPaused() ? tr("&Resume") : tr("&Pause"));
  stopAction_->setEnabled(running);
}

void MainWindow::startTuning() {
  if (model_.isEmpty() || session_->isRunning()) return;
  TuningRequest request;
  request.model = model_;
  request.database =
      database_.isEmpty()
          ? QDir(QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)).filePath("tessel/tessel.db")
          : database_;
  request.trials = trialBudget_;
  log_->appendMessage(tr("Tuning %1: %2 trials into %3").arg(model_).arg(trialBudget_).arg(request.database));
  session_->start(request);
  statusBar()->showMessage(tr("Preparing %1...").arg(model_));
  updateActions();
}

void MainWindow::togglePause() {
  if (session_->isPaused())
    session_->resume();
  else
    session_->pause();
  log_->appendMessage(session_->isPaused() ? tr("Paused after the round in flight") : tr("Resumed"));
  updateActions();
}

void MainWindow::stopTuning() {
  session_->stop();
  log_->appendMessage(tr("Stopping after the round in flight"));
}

void MainWindow::onRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials) {
  Q_UNUSED(taskTrials);
  Q_UNUSED(bestSeconds);
  statusBar()->showMessage(std::isfinite(estimateSeconds)
                               ? tr("%1 of %2 trials; task %3; estimated end-to-end %4 ms")
                                     .arg(totalTrials)
                                     .arg(trialBudget_)
                                     .arg(task)
                                     .arg(estimateSeconds * 1e3, 0, 'f', 3)
                               : tr("%1 of %2 trials; task %3").arg(totalTrials).arg(trialBudget_).arg(task));
}

void MainWindow::onFinished(bool ok, const QString& message) {
  statusBar()->showMessage(ok ? message : tr("Tuning failed: %1").arg(message));
  if (!ok) log_->appendMessage(tr("Tuning failed: %1").arg(message));
  updateActions();
}

void MainWindow::updateTitle() {
  const QString app = tr("Tessel Studio");
  setWindowTitle(model_.isEmpty() ? app : tr("%1 - %2").arg(model_, app));
  modelLabel_->setText(model_.isEmpty() ? tr("No model") : tr("Model: %1").arg(model_));
  databaseLabel_->setText(database_.isEmpty() ? tr("No database") : tr("Database: %1").arg(database_));
}

void MainWindow::openModel() {
  const QString file =
      QFileDialog::getOpenFileName(this, tr("Open model"), QDir::homePath(),
                                   tr("Models (*.onnx *.pt);;ONNX (*.onnx);;TorchScript (*.pt);;All files (*)"));
  if (!file.isEmpty()) setModelPath(file);
}

void MainWindow::saveLayout() const {
  QSettings settings = layoutSettings();
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState(kStateVersion));
}

bool MainWindow::restoreLayout() {
  QSettings settings = layoutSettings();
  const QByteArray geometry = settings.value(kGeometryKey).toByteArray();
  const QByteArray state = settings.value(kStateKey).toByteArray();
  bool restored = !geometry.isEmpty() && restoreGeometry(geometry);
  restored = !state.isEmpty() && restoreState(state, kStateVersion) && restored;
  return restored;
}

void MainWindow::resetLayout() {
  restoreState(defaultState_, kStateVersion);
  for (QDockWidget* dock : docks_)
    dock->show();
}

void MainWindow::closeEvent(QCloseEvent* event) {
  saveLayout();
  event->accept();
}

}  // namespace tessel::ui
