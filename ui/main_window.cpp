#include "ui/main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "fleet/fleet_measurer.h"
#include "fleet/redis_url.h"
#include "frontend/model_loader.h"
#include "graph/zoo.h"
#include "store/database.h"
#include "store/session_history.h"
#include "store/task_rows.h"
#include "ui/app_icon.h"
#include "ui/code_view.h"
#include "ui/export_dialog.h"
#include "ui/fleet_panel.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/node_properties_panel.h"
#include "ui/plots_panel.h"
#include "ui/run_controller.h"
#include "ui/run_panel.h"
#include "ui/search_space_view.h"
#include "ui/sessions_dialog.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_session.h"

namespace tessel::ui {
namespace {

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
  // What the tuning starts from: in the log and, for a while, the status bar.
  connect(session_, &TuningSession::warmStarted, this, [this](bool, const QString& summary) {
    log_->appendMessage(summary);
    statusBar()->showMessage(summary, 20000);
  });
  connect(session_, &TuningSession::roundFinished, this, &MainWindow::onRound);
  connect(session_, &TuningSession::programsMeasured, plots_, &PlotsPanel::addPrograms);
  connect(tasks_, &TasksPanel::taskSelected, this, &MainWindow::selectTask);
  connect(graph_, &GraphView::taskSelected, this, &MainWindow::selectTask);
  connect(plots_, &PlotsPanel::taskSelected, this, &MainWindow::selectTask);
  connect(session_, &TuningSession::bestProgramFound, this, &MainWindow::onBestProgram);
  connect(this, &MainWindow::modelReady, this, &MainWindow::updateActions);  // Run needs the model prepared
  connect(session_, &TuningSession::sessionStarted, this, [this](qint64 id, bool resumed) {
    resumable_ = id;     // Start after a stop goes on with this session
    shownSession_ = id;  // a run after it is stored with it
    updateActions();     // the database exists now: Export can read it
    log_->appendMessage(resumed ? tr("Resuming session %1").arg(id) : tr("Recording into session %1").arg(id));
  });
  connect(space_, &SearchSpaceView::programSelected, this,
          [this](const QString& title, const QString& decisions, const QString& steps) {
            code_->showProgram(selectedTask_, title, decisions, steps);
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

  openDatabaseAction_ = new QAction(s->standardIcon(QStyle::SP_DriveHDIcon), tr("Open &database..."), this);
  openDatabaseAction_->setObjectName(QStringLiteral("actionOpenDatabase"));
  openDatabaseAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_D));
  openDatabaseAction_->setStatusTip(tr("Use a tuning database (SQLite) and browse its sessions"));
  connect(openDatabaseAction_, &QAction::triggered, this, &MainWindow::openDatabase);

  sessionsAction_ = new QAction(s->standardIcon(QStyle::SP_FileDialogDetailedView), tr("&Sessions..."), this);
  sessionsAction_->setObjectName(QStringLiteral("actionSessions"));
  sessionsAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  sessionsAction_->setStatusTip(tr("Browse, compare and reopen the sessions of the database"));
  connect(sessionsAction_, &QAction::triggered, this, &MainWindow::showSessions);

  // The built-in zoo, from the File menu and the toolbar.
  zooMenu_ = new QMenu(tr("Open from &zoo"), this);
  zooMenu_->setObjectName(QStringLiteral("zooMenu"));
  for (const graph::ZooEntry& e : graph::zooModels()) {
    const QString name = QString::fromStdString(e.name);
    QAction* a = zooMenu_->addAction(name);
    a->setStatusTip(QString::fromStdString(e.description));
    connect(a, &QAction::triggered, this, [this, name] { setModelPath(name); });
  }

  // Tuning needs a model: disabled until one is open.
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
  exportAction_->setStatusTip(tr("Export the tuned kernels or the records of the database"));
  exportAction_->setEnabled(false);
  connect(exportAction_, &QAction::triggered, this, &MainWindow::showExport);

  resetLayoutAction_ = new QAction(tr("&Reset layout"), this);
  resetLayoutAction_->setObjectName(QStringLiteral("actionResetLayout"));
  connect(resetLayoutAction_, &QAction::triggered, this, &MainWindow::resetLayout);

  quitAction_ = new QAction(tr("&Quit"), this);
  quitAction_->setObjectName(QStringLiteral("actionQuit"));
  quitAction_->setShortcut(QKeySequence::Quit);
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);
  createRunActions();
}

void MainWindow::createToolBar() {
  toolBar_ = addToolBar(tr("Main"));
  toolBar_->setObjectName(QStringLiteral("mainToolBar"));
  toolBar_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  toolBar_->addAction(openModelAction_);
  auto* zoo = new QToolButton(this);
  zoo->setObjectName(QStringLiteral("zooButton"));
  zoo->setText(tr("Zoo"));
  zoo->setToolTip(tr("Open a model of the built-in zoo"));
  zoo->setMenu(zooMenu_);
  zoo->setPopupMode(QToolButton::InstantPopup);
  toolBar_->addWidget(zoo);
  toolBar_->addAction(sessionsAction_);
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
  // First the knowledge base's model (none named: what `tessel tune` does
  // without --cost-model), then the models this build can make, from the
  // registry the CLI reads too.
  costModelBox_->addItem(tr("pre-trained"));
  costModelBox_->setItemData(0,
                             tr("The knowledge base's pre-trained model where one is shipped for this machine, "
                                "else %1")
                                 .arg(QString::fromStdString(cost::defaultCostModel())),
                             Qt::ToolTipRole);
  for (const cost::CostModelEntry& m : cost::costModels())
    if (m.available) {
      costModelBox_->addItem(QString::fromStdString(m.name));
      costModelBox_->setItemData(costModelBox_->count() - 1, QString::fromStdString(m.summary), Qt::ToolTipRole);
    }
  costModelBox_->setToolTip(tr("Cost model that guides the search"));
  costModelBox_->setCurrentText(settings.value("tuning/costModel", costModelBox_->itemText(0)).toString());
  // Whether a tuning starts from what Tessel knows (tessel tune without --cold).
  warmStartBox_ = new QCheckBox(tr("Warm start"), this);
  warmStartBox_->setObjectName(QStringLiteral("warmStartBox"));
  warmStartBox_->setToolTip(
      tr("Start from the knowledge base and this database's similar tasks: each task's first round measures the "
         "programs transferred to it (untick to start from nothing, for comparisons)"));
  warmStartBox_->setChecked(settings.value("tuning/warm", true).toBool());
  // A trained model to start from (tessel costmodel train): clicking again
  // goes back to a fresh one.
  costModelFileButton_ = new QToolButton(this);
  costModelFileButton_->setObjectName(QStringLiteral("costModelFileButton"));
  costModelFileButton_->setText(tr("Pre-trained..."));
  costModelFileButton_->setToolTip(tr("Start from a trained cost model (tessel costmodel train)"));
  connect(costModelFileButton_, &QToolButton::clicked, this, [this] {
    if (!costModelFile_.isEmpty()) {
      setCostModelFile({});
      return;
    }
    const QString path = QFileDialog::getOpenFileName(this, tr("Trained cost model"), QString(),
                                                      tr("Cost models (*.tcm);;All files (*)"));
    if (!path.isEmpty()) setCostModelFile(path);
  });
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
  // Where the programs are built and measured: here, or by a fleet's agents
  // (tessel-agent) through Redis, as --measure on the command line.
  measureBox_ = new QComboBox(this);
  measureBox_->setObjectName(QStringLiteral("measureBox"));
  measureBox_->setEditable(true);
  measureBox_->addItem(QStringLiteral("local"));
  measureBox_->setMinimumContentsLength(18);
  measureBox_->setToolTip(
      tr("Where programs are measured: local, or a fleet's Redis "
         "(redis://[:PASSWORD@]HOST:PORT) whose agents (tessel-agent) serve the target"));
  const QString measure = settings.value("tuning/measure", "local").toString();
  if (measure != QLatin1String("local")) measureBox_->addItem(measure);
  measureBox_->setCurrentText(measure);
  toolBar_->addWidget(targetBox_);
  toolBar_->addWidget(fusionBox_);
  toolBar_->addWidget(costModelBox_);
  toolBar_->addWidget(costModelFileButton_);
  toolBar_->addWidget(warmStartBox_);
  toolBar_->addWidget(measureBox_);
  toolBar_->addWidget(budgetBox_);
  toolBar_->addSeparator();
  toolBar_->addAction(startAction_);
  toolBar_->addAction(pauseAction_);
  toolBar_->addAction(stopAction_);
  toolBar_->addSeparator();
  toolBar_->addAction(runAction_);
  toolBar_->addAction(stopRunAction_);
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
  fleet_ = new FleetPanel(this);
  QDockWidget* fleet = addPanel(tr("Fleet"), "fleetDock", fleet_, Qt::BottomDockWidgetArea);
  // The panel follows the measure box once an entry is done, not per keystroke.
  auto showFleet = [this] { fleet_->setMeasure(measureBox_->currentText()); };
  connect(measureBox_, &QComboBox::activated, this, showFleet);
  connect(measureBox_->lineEdit(), &QLineEdit::editingFinished, this, showFleet);
  showFleet();

  // Graph above the plots on the left; tasks above the search space, code
  // and node properties (tabbed) on the right; the log along the bottom.
  tabifyDockWidget(space, code);
  tabifyDockWidget(code, props);
  createRunDock(props);  // a tab beside them: a run's figures need room, and no new tab bar
  tabifyDockWidget(log, fleet);
  space->raise();
  log->raise();
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
  file->addMenu(zooMenu_);
  recentMenu_ = file->addMenu(tr("Open &recent"));
  recentMenu_->setObjectName(QStringLiteral("recentMenu"));
  updateRecentMenu();
  file->addSeparator();
  file->addAction(openDatabaseAction_);
  file->addAction(sessionsAction_);
  file->addAction(exportAction_);
  file->addSeparator();
  file->addAction(quitAction_);

  QMenu* tuning = menuBar()->addMenu(tr("&Tuning"));
  tuning->addAction(startAction_);
  tuning->addAction(pauseAction_);
  tuning->addAction(stopAction_);
  tuning->addSeparator();
  tuning->addAction(runAction_);
  tuning->addAction(stopRunAction_);
  tuning->addAction(runAfterTuningAction_);

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
  if (session_->isRunning()) {
    showError(tr("Cannot open %1").arg(model), tr("a tuning is running: stop it first"));
    return;
  }
  model_ = model;
  log_->appendMessage(tr("Model: %1").arg(model));
  // Another model (or fusion): a reopened session no longer applies, unless
  // this is its model being opened for it.
  if (!pendingHistory_ || QString::fromStdString(pendingHistory_->session.subject) != model) pendingHistory_.reset();
  resumable_ = 0;
  prepared_.reset();
  run_->cancel(tr("another model is opened"));
  run_->clear();
  shownSession_ = 0;
  updateTitle();
  updateActions();
  rememberModel(model);
  searchTasks_.clear();
  best_.clear();
  selected_ = -1;
  graph_->clear();
  space_->clear();
  code_->clear();
  statusBar()->showMessage(tr("Preparing %1...").arg(model));
  // Loading, folding and fusion take a while on big models: off the UI thread.
  const int generation = ++preparing_;
  const std::string path = model.toStdString();
  const std::string fusion = fusionBox_->currentText().toStdString();
  auto future = QtConcurrent::run([path, fusion, target = target_] {
    std::pair<std::shared_ptr<const frontend::PreparedModel>, QString> out;
    try {
      out.first = std::make_shared<const frontend::PreparedModel>(frontend::prepareModel(path, "", fusion, target));
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
    pendingHistory_.reset();  // its model did not open
    statusBar()->showMessage(tr("Cannot open %1").arg(model_));
    showError(tr("Cannot open the model"), tr("%1: %2").arg(model_, error));
    emit modelFailed(error);
    return;
  }
  prepared_ = model;
  QVector<TaskInfo> infos;
  QStringList names;
  for (const fusion::GraphTask& t : model->tasks) {
    const QString label = QString::fromStdString(fusion::taskLabel(t));
    infos.push_back({QString::fromStdString(t.key), label, double(t.weight), t.flops});
    names << label;
    searchTasks_.push_back(fusion::toSearchTask(t, target_));
  }
  best_ = QVector<BestProgram>(int(searchTasks_.size()));
  tasks_->model()->setTasks(infos);
  plots_->setTasks(names);
  QHash<QString, QString> taskNames;  // the Run's table names tasks as this panel does
  for (const TaskInfo& t : infos)
    taskNames[t.key] = t.name;
  runPanel_->setTaskNames(taskNames);
  graph_->setModel(model);
  // The nodes the graph view draws (after folding), as its header counts them.
  const size_t shown = model->graph.nodes.size();
  log_->appendMessage(tr("%1: %2 nodes%3, %4 tasks, %5 GFLOP")
                          .arg(QString::fromStdString(model->name))
                          .arg(shown)
                          .arg(model->nodes != shown
                                   ? tr(" (%1 as loaded; constants and batch norms folded)").arg(model->nodes)
                                   : QString())
                          .arg(model->tasks.size())
                          .arg(model->flops / 1e9, 0, 'f', 3));
  statusBar()->showMessage(tr("%1 tasks; press Start to tune").arg(model->tasks.size()));
  if (!model->tasks.empty()) selectTask(0);
  emit modelReady();
  if (HistoryPtr h = std::exchange(pendingHistory_, nullptr))
    applyHistory(*h);
  else
    showStoredTuning();
}

void MainWindow::selectTask(int task) {
  if (task < 0 || task >= int(searchTasks_.size())) return;
  selected_ = task;
  selectedTask_ = searchTasks_[size_t(task)];
  if (prepared_) graph_->selectTask(task);
  plots_->selectTask(task);
  // The best program so far (from the tuning or a reopened session), else
  // the space's samples.
  const BestProgram b = best_.value(task);
  space_->showTask(selectedTask_, b.decisions, b.seconds > 0 ? b.seconds : std::nan(""), b.steps);
}

void MainWindow::onBestProgram(int task, const QString& decisions, const QString& steps, double seconds) {
  if (task < 0 || task >= best_.size()) return;
  best_[task] = {decisions, steps, seconds};
  if (task == selected_) space_->setBest(decisions, seconds, steps);
}

void MainWindow::showError(const QString& title, const QString& message) {
  log_->appendMessage(tr("%1: %2").arg(title, message));
  auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, returns at once
}

QString MainWindow::checkDatabase(const QString& database) {
  // A missing or empty file is made a database by the first tuning; an
  // existing one must be one Tessel can read (opened read-only: nothing is
  // written to it).
  if (QFileInfo(database).size() == 0) return {};
  try {
    store::Database::open(database.toStdString(), store::OpenMode::ReadOnly);
  } catch (const std::exception& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

bool MainWindow::setDatabasePath(const QString& database) {
  if (session_->isRunning()) {
    showError(tr("Cannot change the database"), tr("a tuning is running: stop it first"));
    return false;
  }
  if (const QString error = checkDatabase(database); !error.isEmpty()) {
    showError(tr("Cannot open the database"), error);
    return false;
  }
  database_ = database;
  resumable_ = 0;
  pendingHistory_.reset();
  run_->cancel(tr("another database is used"));
  run_->clear();
  shownSession_ = 0;
  log_->appendMessage(tr("Database: %1").arg(database));
  updateTitle();
  updateActions();
  showStoredTuning();  // what this database holds of the open model
  return true;
}

bool MainWindow::setCostModelFile(const QString& path) {
  if (!path.isEmpty()) {
    std::string name;
    try {
      name = cost::loadCostModelFile(path.toStdString())->name();
    } catch (const std::exception& e) {
      showError(tr("Cannot use the cost model"), QString::fromStdString(e.what()));
      return false;
    }
    costModelBox_->setCurrentText(QString::fromStdString(name));
    costModelFileButton_->setText(tr("Pre-trained: %1").arg(QFileInfo(path).fileName()));
    costModelFileButton_->setToolTip(tr("Starting from %1 (click for a fresh model)").arg(path));
    log_->appendMessage(tr("Cost model: %1, trained, from %2").arg(QString::fromStdString(name), path));
  } else {
    costModelFileButton_->setText(tr("Pre-trained..."));
    costModelFileButton_->setToolTip(tr("Start from a trained cost model (tessel costmodel train)"));
  }
  costModelFile_ = path;
  costModelBox_->setEnabled(path.isEmpty());  // the file says which model it is
  return true;
}

QString MainWindow::effectiveDatabase() const {
  return database_.isEmpty() ? QString::fromStdString(store::defaultDatabasePath()) : database_;
}

void MainWindow::openDatabase() {
  const QString file =
      QFileDialog::getOpenFileName(this, tr("Open tuning database"), QFileInfo(effectiveDatabase()).path(),
                                   tr("Tessel databases (*.db *.sqlite);;All files (*)"));
  if (!file.isEmpty() && setDatabasePath(file)) showSessions();
}

SessionsDialog* MainWindow::showSessions() {
  auto* dialog = new SessionsDialog(effectiveDatabase(), this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &SessionsDialog::reopenRequested, this, &MainWindow::reopenSession);
  connect(dialog, &SessionsDialog::loadFailed, this, [this, dialog](const QString& message) {
    dialog->close();
    showError(tr("Cannot open the database"), message);
  });
  dialog->open();  // window-modal, returns at once; the sessions follow
  dialog->load();
  return dialog;
}

ExportDialog* MainWindow::showExport() {
  auto* dialog = new ExportDialog(effectiveDatabase(), this);
  ExportDialog::TaskDefinitions tasks;
  for (const task::SearchTask& t : searchTasks_)
    tasks.emplace_back(t.key, t.dag);
  dialog->setModelTasks(prepared_ ? model_ : QString(), tasks, selected_);
  if (!prepared_ && selected_ >= 0) dialog->setScope(ExportDialog::SelectedTaskScope);  // a task session
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &ExportDialog::exported, this, [this](bool ok, const QString& message) {
    log_->appendMessage(message);
    statusBar()->showMessage(ok ? tr("Exported") : tr("Export failed"));
  });
  dialog->open();
  return dialog;
}

void MainWindow::refreshShares(double estimateSeconds) {
  QVector<double> shares;
  for (int i = 0; i < tasks_->model()->rowCount(); ++i) {
    const double share = tasks_->model()->data(tasks_->model()->index(i, TasksModel::Share), Qt::UserRole).toDouble();
    shares.push_back(std::isfinite(estimateSeconds) ? share : std::nan(""));
  }
  graph_->setTaskShares(shares);
}

void MainWindow::updateActions() {
  const bool running = session_->isRunning();
  startAction_->setEnabled(!running && !model_.isEmpty());
  // The tuning in flight belongs to the open model and database.
  for (QAction* a : {openModelAction_, openDatabaseAction_})
    a->setEnabled(!running);
  zooMenu_->setEnabled(!running);
  recentMenu_->setEnabled(!running && !recentModels().isEmpty());
  exportAction_->setEnabled(QFileInfo::exists(effectiveDatabase()));
  pauseAction_->setEnabled(running);
  pauseAction_->setText(session_->isPaused() ? tr("&Resume") : tr("&Pause"));
  stopAction_->setEnabled(running);
  updateRunActions();
}

void MainWindow::startTuning() {
  if (model_.isEmpty() || tuning_ || session_->isRunning()) return;
  run_->cancel(tr("a tuning starts (it would disturb the run)"));
  tuning_ = true;
  stopRequested_ = false;
  graph_->setHeatMode(GraphView::HeatMode::Estimate);  // the tuning's shares, live
  TuningRequest request;
  request.config.model = model_.toStdString();
  request.config.trials = trialBudget_;
  request.config.fusion = fusionBox_->currentText().toStdString();
  // The first entry names no model: the knowledge base's, where there is one.
  request.config.costModel = costModelBox_->currentIndex() == 0 ? "" : costModelBox_->currentText().toStdString();
  request.config.cold = !warmStartBox_->isChecked();
  request.config.costModelFile = costModelFile_.toStdString();
  request.config.target = target_;
  request.config.minutes = timeBudgetMinutes_;
  const QString measure = measureBox_->currentText().trimmed();
  if (!measure.isEmpty() && measure != QLatin1String("local")) {
    fleet::FleetOptions f;
    try {
      f.redis = fleet::parseRedisUrl(measure.toStdString());
    } catch (const std::invalid_argument& e) {
      tuning_ = false;
      QMessageBox::warning(this, tr("Where to measure"), QString::fromStdString(e.what()));
      return;
    }
    // From the tuning thread: queued to the log.
    f.log = [log = QPointer<LogPanel>(log_)](const std::string& line) {
      if (log)
        QMetaObject::invokeMethod(log, "appendMessage", Qt::QueuedConnection,
                                  Q_ARG(QString, QStringLiteral("fleet: ") + QString::fromStdString(line)));
    };
    request.config.measure = f.redis.str();
    request.config.makeMeasurer = fleet::fleetMeasurerFactory(f);
  }
  request.database = effectiveDatabase();
  // The model as shown: tuned without preparing it again.
  if (prepared_ && prepared_->fusion == request.config.fusion) request.prepared = prepared_;
  // After a reopened (or stopped) session of this model, Start goes on with
  // it: the budget is trials to add, and its curves continue.
  if (resumable_) {
    request.resumeSession = resumable_;
    request.config.trials = resumedTrials_ + trialBudget_;
  } else {
    resumedTrials_ = 0;
    sessionStart_ = QDateTime::currentDateTimeUtc();
    plots_->clear();
  }
  tuningClock_.start();
  // A time budget's progress is its time, in seconds.
  progress_->setRange(0, timeBudgetMinutes_ > 0 ? int(timeBudgetMinutes_ * 60) : trialBudget_);
  progress_->setFormat(timeBudgetMinutes_ > 0 ? tr("%v / %m s") : tr("%v / %m trials"));
  progress_->setValue(0);
  progress_->show();
  rateLabel_->clear();
  if (persistent_) {
    QSettings settings = layoutSettings();
    // A time budget's trials are the command line's, not the user's box.
    if (timeBudgetMinutes_ <= 0) settings.setValue("tuning/trials", trialBudget_);
    settings.setValue("tuning/fusion", fusionBox_->currentText());
    settings.setValue("tuning/costModel", costModelBox_->currentText());
    settings.setValue("tuning/warm", warmStartBox_->isChecked());
    settings.setValue("tuning/measure", measure.isEmpty() ? QStringLiteral("local") : measure);
  }
  log_->appendMessage(timeBudgetMinutes_ > 0
                          ? tr("Tuning %1: %2 minutes (at most %3 trials) into %4")
                                .arg(model_)
                                .arg(timeBudgetMinutes_)
                                .arg(trialBudget_)
                                .arg(request.database)
                          : tr("Tuning %1: %2 trials into %3").arg(model_).arg(trialBudget_).arg(request.database));
  if (!resumable_) {
    QVector<TaskInfo> infos;  // a new session starts from no trials
    for (int i = 0; i < tasks_->model()->rowCount(); ++i)
      infos << tasks_->model()->task(i);
    tasks_->model()->setTasks(infos);
  }
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
  stopRequested_ = true;  // no run after it
  session_->stop();
  log_->appendMessage(tr("Stopping"));
}

void MainWindow::onRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials) {
  const double elapsed = tuningClock_.elapsed() / 1e3;
  // The plots' time is wall time since the session started, as a reopened
  // session's history has it, so resumed runs continue its curve.
  const double sessionTime =
      sessionStart_.isValid() ? sessionStart_.msecsTo(QDateTime::currentDateTimeUtc()) / 1e3 : elapsed;
  plots_->addRound(task, taskTrials, bestSeconds, estimateSeconds, sessionTime);
  runTrials_ = totalTrials;
  const double budgetSeconds = timeBudgetMinutes_ * 60;
  progress_->setValue(std::min(budgetSeconds > 0 ? int(elapsed) : totalTrials, progress_->maximum()));
  if (elapsed > 0 && totalTrials > 0) {
    const double rate = totalTrials / elapsed;
    const double trialsLeft = (trialBudget_ - totalTrials) / rate;
    const int left = int(std::max(0.0, budgetSeconds > 0 ? std::min(budgetSeconds - elapsed, trialsLeft) : trialsLeft));
    rateLabel_->setText(
        tr("%1 trials/s, %2:%3 left").arg(rate, 0, 'f', 2).arg(left / 60).arg(left % 60, 2, 10, QLatin1Char('0')));
  }
  refreshShares(estimateSeconds);
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
  // Start goes on with this session and its trials so far; after a failure
  // (the database busy, say) it begins a new one.
  resumedTrials_ += runTrials_;
  runTrials_ = 0;
  if (!ok) resumable_ = 0;
  statusBar()->showMessage(ok ? message : tr("Tuning failed: %1").arg(message));
  if (!ok) showError(tr("Tuning failed"), message);
  tuning_ = false;
  updateActions();
  // For the demo: the tuned model against LibTorch, the figure it was tuned for.
  if (ok && !stopRequested_ && runAfterTuningAction_->isChecked()) startRun();
  emit tuningFinished(ok, message);
}

void MainWindow::updateTitle() {
  const QString app = tr("Tessel Studio");
  setWindowTitle(model_.isEmpty() ? app : tr("%1 - %2").arg(model_, app));
  modelLabel_->setText(model_.isEmpty() ? tr("No model") : tr("Model: %1").arg(model_));
  // Without --db the CLI's default is used: say which file that is.
  databaseLabel_->setText(database_.isEmpty() ? tr("Database: %1 (default)").arg(effectiveDatabase())
                                              : tr("Database: %1").arg(database_));
}

void MainWindow::openModel() {
  const QString file =
      QFileDialog::getOpenFileName(this, tr("Open model"), QDir::homePath(),
                                   tr("Models (*.onnx *.pt);;ONNX (*.onnx);;TorchScript (*.pt);;All files (*)"));
  if (!file.isEmpty()) setModelPath(file);
}

void MainWindow::setTrialBudget(int trials) {
  trialBudget_ = trials;
  if (budgetBox_) budgetBox_->setValue(trials);
}

}  // namespace tessel::ui
