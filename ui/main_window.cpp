#include "ui/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFutureWatcher>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QSettings>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QToolBar>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "frontend/model_loader.h"
#include "ui/app_icon.h"
#include "ui/code_view.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/node_properties_panel.h"
#include "ui/plots_panel.h"
#include "ui/search_space_view.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_session.h"

namespace tessel::ui {
namespace {

// Bump when the docks change in a way an old saved state should not restore.
constexpr int kStateVersion = 2;
// The target the studio tunes for (the CUDA path is CLI-only for now).
constexpr const char* kTarget = "cpu";

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
  connect(session_, &TuningSession::programsMeasured, plots_, &PlotsPanel::addPrograms);
  connect(tasks_, &TasksPanel::taskSelected, this, &MainWindow::selectTask);
  connect(graph_, &GraphView::taskSelected, this, &MainWindow::selectTask);
  connect(plots_, &PlotsPanel::taskSelected, this, &MainWindow::selectTask);
  connect(space_, &SearchSpaceView::programSelected, this, [this](const QString& title, const QString& decisions) {
    code_->showProgram(selectedTask_, title, decisions);
  });
  connect(graph_, &GraphView::layoutFinished, this, [this](double layout, double scene) {
    log_->appendMessage(tr("Graph laid out in %1 s (scene %2 s)").arg(layout, 0, 'f', 3).arg(scene, 0, 'f', 3));
  });
  connect(graph_, &GraphView::layoutFailed, this,
          [this](const QString& message) { showError(tr("Graph layout failed"), message); });
  connect(space_, &SearchSpaceView::failed, log_, &LogPanel::appendMessage);
  connect(code_, &CodeView::failed, log_, &LogPanel::appendMessage);
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
  // Target, fusion, cost model and budget of the next tuning; kept in QSettings.
  QSettings settings = layoutSettings();
  targetBox_ = new QComboBox(this);
  targetBox_->setObjectName(QStringLiteral("targetBox"));
  targetBox_->addItem(QStringLiteral("cpu"));
  targetBox_->setToolTip(tr("Target (CUDA tuning is on the command line: tessel tune --target cuda)"));
  fusionBox_ = new QComboBox(this);
  fusionBox_->setObjectName(QStringLiteral("fusionBox"));
  fusionBox_->addItems({QStringLiteral("dp"), QStringLiteral("rule"), QStringLiteral("none")});
  fusionBox_->setToolTip(tr("Operator fusion: AutoGTCO's DP, TVM's rules, or none"));
  fusionBox_->setCurrentText(settings.value("tuning/fusion", "dp").toString());
  costModelBox_ = new QComboBox(this);
  costModelBox_->setObjectName(QStringLiteral("costModelBox"));
  costModelBox_->addItems({QStringLiteral("xgb"), QStringLiteral("random")});
  costModelBox_->setToolTip(tr("Cost model that guides the search"));
  costModelBox_->setCurrentText(settings.value("tuning/costModel", "xgb").toString());
  budgetBox_ = new QSpinBox(this);
  budgetBox_->setObjectName(QStringLiteral("budgetBox"));
  budgetBox_->setRange(16, 1000000);
  budgetBox_->setSingleStep(64);
  budgetBox_->setSuffix(tr(" trials"));
  budgetBox_->setToolTip(tr("Trial budget of the whole model"));
  trialBudget_ = settings.value("tuning/trials", 256).toInt();
  budgetBox_->setValue(trialBudget_);
  connect(budgetBox_, &QSpinBox::valueChanged, this, [this](int v) { trialBudget_ = v; });
  connect(fusionBox_, &QComboBox::currentTextChanged, this, [this] {
    if (!model_.isEmpty() && !session_->isRunning()) setModelPath(model_);  // re-fuse
  });
  toolBar_->addWidget(targetBox_);
  toolBar_->addWidget(fusionBox_);
  toolBar_->addWidget(costModelBox_);
  toolBar_->addWidget(budgetBox_);
  toolBar_->addSeparator();
  toolBar_->addAction(startAction_);
  toolBar_->addAction(pauseAction_);
  toolBar_->addAction(stopAction_);
  toolBar_->addSeparator();
  toolBar_->addAction(exportAction_);
}

void MainWindow::createDocks() {
  if (!session_) session_ = new TuningSession(this);
  graph_ = new GraphView(this);
  plots_ = new PlotsPanel(this);
  tasks_ = new TasksPanel(this);
  tasks_->follow(session_);
  space_ = new SearchSpaceView(this);
  code_ = new CodeView(this);
  log_ = new LogPanel(this);

  QDockWidget* graph = addPanel(tr("Graph"), "graphDock", graph_, Qt::LeftDockWidgetArea);
  QDockWidget* plots = addPanel(tr("Plots"), "plotsDock", plots_, Qt::LeftDockWidgetArea);
  QDockWidget* tasks = addPanel(tr("Tasks"), "tasksDock", tasks_, Qt::RightDockWidgetArea);
  QDockWidget* space = addPanel(tr("Search space"), "searchSpaceDock", space_, Qt::RightDockWidgetArea);
  QDockWidget* code = addPanel(tr("Code"), "codeDock", code_, Qt::RightDockWidgetArea);
  QDockWidget* props = addPanel(tr("Properties"), "propertiesDock", graph_->propertiesPanel(), Qt::RightDockWidgetArea);
  QDockWidget* log = addPanel(tr("Log"), "logDock", log_, Qt::BottomDockWidgetArea);

  // Graph above the plots on the left; tasks above the search space, code
  // and node properties (tabbed) on the right; the log along the bottom.
  tabifyDockWidget(space, code);
  tabifyDockWidget(code, props);
  space->raise();
  resizeDocks({graph, tasks}, {760, 520}, Qt::Horizontal);
  resizeDocks({graph, plots, tasks, space}, {420, 260, 260, 420}, Qt::Vertical);
  resizeDocks({log}, {110}, Qt::Vertical);
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
  recentMenu_ = file->addMenu(tr("Open &recent"));
  recentMenu_->setObjectName(QStringLiteral("recentMenu"));
  updateRecentMenu();
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
  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("tuningProgress"));
  progress_->setMaximumWidth(220);
  progress_->setFormat(tr("%v / %m trials"));
  progress_->setValue(0);
  progress_->hide();
  rateLabel_ = new QLabel(this);
  rateLabel_->setObjectName(QStringLiteral("rateLabel"));
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(rateLabel_);
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
  rememberModel(model);
  prepared_.reset();
  graph_->clear();
  space_->clear();
  statusBar()->showMessage(tr("Preparing %1...").arg(model));
  // Loading, folding and fusion take a while on big models: off the UI thread.
  const int generation = ++preparing_;
  const std::string path = model.toStdString();
  const std::string fusion = fusionBox_->currentText().toStdString();
  auto future = QtConcurrent::run([path, fusion] {
    std::pair<std::shared_ptr<const frontend::PreparedModel>, QString> out;
    try {
      out.first = std::make_shared<const frontend::PreparedModel>(frontend::prepareModel(path, "", fusion, kTarget));
    } catch (const std::exception& e) {
      out.second = QString::fromStdString(e.what());
    }
    return out;
  });
  auto* watcher = new QFutureWatcher<std::pair<std::shared_ptr<const frontend::PreparedModel>, QString>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    if (generation != preparing_) return;  // a newer model was opened
    auto [prepared, error] = watcher->result();
    onModelPrepared(prepared, error);
  });
  watcher->setFuture(future);
}

void MainWindow::onModelPrepared(std::shared_ptr<const frontend::PreparedModel> model, const QString& error) {
  if (!model) {
    statusBar()->showMessage(tr("Cannot open %1").arg(model_));
    showError(tr("Cannot open the model"), tr("%1: %2").arg(model_, error));
    emit modelFailed(error);
    return;
  }
  prepared_ = model;
  QVector<TaskInfo> infos;
  QStringList names;
  for (const fusion::GraphTask& t : model->tasks) {
    infos.push_back({QString::fromStdString(t.key), QString::fromStdString(t.name), double(t.weight), t.flops});
    names << QString::fromStdString(t.name);
  }
  tasks_->model()->setTasks(infos);
  plots_->setTasks(names);
  graph_->setModel(model);
  log_->appendMessage(tr("%1: %2 nodes, %3 tasks, %4 GFLOP")
                          .arg(QString::fromStdString(model->name))
                          .arg(model->nodes)
                          .arg(model->tasks.size())
                          .arg(model->flops / 1e9, 0, 'f', 3));
  statusBar()->showMessage(tr("%1 tasks; press Start to tune").arg(model->tasks.size()));
  if (!model->tasks.empty()) selectTask(0);
  emit modelReady();
}

void MainWindow::selectTask(int task) {
  if (!prepared_ || task < 0 || task >= int(prepared_->tasks.size())) return;
  selectedTask_ = fusion::toSearchTask(prepared_->tasks[size_t(task)], kTarget);
  graph_->selectTask(task);
  plots_->selectTask(task);
  const double bestMs =
      tasks_->model()->data(tasks_->model()->index(task, TasksModel::BestMs), Qt::UserRole).toDouble();
  // The best program's decisions come with the session's records; until
  // then the space's samples are shown.
  space_->showTask(selectedTask_, QString(), bestMs > 0 ? bestMs / 1e3 : std::nan(""));
}

void MainWindow::showError(const QString& title, const QString& message) {
  log_->appendMessage(tr("%1: %2").arg(title, message));
  auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, returns at once
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
  request.fusion = fusionBox_->currentText();
  request.costModel = costModelBox_->currentText();
  tuningClock_.start();
  progress_->setRange(0, trialBudget_);
  progress_->setValue(0);
  progress_->show();
  rateLabel_->clear();
  if (persistent_) {
    QSettings settings = layoutSettings();
    settings.setValue("tuning/trials", trialBudget_);
    settings.setValue("tuning/fusion", request.fusion);
    settings.setValue("tuning/costModel", request.costModel);
  }
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
  log_->appendMessage(session_->isPaused() ? tr("Paused (the round in flight is tuned again on resume)")
                                           : tr("Resumed"));
  updateActions();
}

void MainWindow::stopTuning() {
  session_->stop();
  log_->appendMessage(tr("Stopping"));
}

void MainWindow::onRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials) {
  const double elapsed = tuningClock_.elapsed() / 1e3;
  plots_->addRound(task, taskTrials, bestSeconds, estimateSeconds, elapsed);
  progress_->setValue(std::min(totalTrials, progress_->maximum()));
  if (elapsed > 0 && totalTrials > 0) {
    const double rate = totalTrials / elapsed;
    const int left = int(std::max(0.0, (trialBudget_ - totalTrials) / rate));
    rateLabel_->setText(
        tr("%1 trials/s, %2:%3 left").arg(rate, 0, 'f', 2).arg(left / 60).arg(left % 60, 2, 10, QLatin1Char('0')));
  }
  QVector<double> shares;
  for (int i = 0; i < tasks_->model()->rowCount(); ++i) {
    const double share = tasks_->model()->data(tasks_->model()->index(i, TasksModel::Share), Qt::UserRole).toDouble();
    shares.push_back(std::isfinite(estimateSeconds) ? share : std::nan(""));
  }
  graph_->setTaskShares(shares);
  statusBar()->showMessage(std::isfinite(estimateSeconds)
                               ? tr("%1 of %2 trials; task %3; estimated end-to-end %4 ms")
                                     .arg(totalTrials)
                                     .arg(trialBudget_)
                                     .arg(task)
                                     .arg(estimateSeconds * 1e3, 0, 'f', 3)
                               : tr("%1 of %2 trials; task %3").arg(totalTrials).arg(trialBudget_).arg(task));
}

void MainWindow::onFinished(bool ok, const QString& message) {
  progress_->hide();
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

QStringList MainWindow::recentModels() const {
  return layoutSettings().value(kRecentModelsKey).toStringList();
}

void MainWindow::rememberModel(const QString& model) {
  QStringList recent = recentModels();
  recent.removeAll(model);
  recent.prepend(model);
  while (recent.size() > 8)
    recent.removeLast();
  if (!persistent_) return;
  layoutSettings().setValue(kRecentModelsKey, recent);
  updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
  if (!recentMenu_) return;
  recentMenu_->clear();
  const QStringList recent = recentModels();
  for (int i = 0; i < recent.size(); ++i) {
    QAction* a = recentMenu_->addAction(tr("&%1 %2").arg(i + 1).arg(recent[i]));
    const QString model = recent[i];
    connect(a, &QAction::triggered, this, [this, model] { setModelPath(model); });
  }
  recentMenu_->setEnabled(!recent.isEmpty());
}

void MainWindow::setTrialBudget(int trials) {
  trialBudget_ = trials;
  if (budgetBox_) budgetBox_->setValue(trials);
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
  if (persistent_) saveLayout();
  event->accept();
}

}  // namespace tessel::ui
