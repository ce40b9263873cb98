#include "ui/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QStyle>
#include <QToolBar>
#include <QToolButton>
#include <cmath>

#include "frontend/model_loader.h"
#include "graph/zoo.h"
#include "ui/app_icon.h"
#include "ui/code_view.h"
#include "ui/compare_dialog.h"
#include "ui/export_dialog.h"
#include "ui/fleet_panel.h"
#include "ui/graph_view.h"
#include "ui/input_shapes_dialog.h"
#include "ui/log_panel.h"
#include "ui/node_properties_panel.h"
#include "ui/plots_panel.h"
#include "ui/roofline_view.h"
#include "ui/run_controller.h"
#include "ui/run_panel.h"
#include "ui/search_space_view.h"
#include "ui/sessions_dialog.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_options_bar.h"
#include "ui/tuning_session.h"

namespace tessel::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("MainWindow"));
  setWindowIcon(appIcon());
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks | QMainWindow::AllowNestedDocks);

  createViews();
  const StudioViews views{log_, statusBar(), tasks_, graph_, plots_, space_, code_, progress_, rateLabel_};
  auto tuningRunning = [this] { return tuning_->isTuning(); };  // the model and its session stay meanwhile
  options_ = new TuningOptionsBar(this);
  loader_ = new ModelLoader(options_->target(), views, tuningRunning, this);
  tuning_ = new TuningController(loader_, views, this);
  tuning_->setTrialBudget(options_->trials());
  createActions();
  createToolBar();
  createDocks();
  createMenus();
  createStatusBar();
  updateTitle();
  connectLoader();
  connectTuning();
  connectViews();

  resize(1280, 800);
  defaultState_ = saveState(kStateVersion);
}

void MainWindow::createViews() {
  graph_ = new GraphView(this);
  plots_ = new PlotsPanel(this);
  tasks_ = new TasksPanel(this);
  space_ = new SearchSpaceView(this);
  code_ = new CodeView(this);
  log_ = new LogPanel(this);
  fleet_ = new FleetPanel(this);
  progress_ = new QProgressBar(this);
  rateLabel_ = new QLabel(this);
}

void MainWindow::connectLoader() {
  connect(loader_, &ModelLoader::errorOccurred, this, &MainWindow::showError);
  connect(loader_, &ModelLoader::modelOpening, this, &MainWindow::onModelOpening);
  connect(loader_, &ModelLoader::tasksChanged, this, [this] {
    selected_ = -1;
    updateTitle();
  });
  connect(loader_, &ModelLoader::modelReady, this, &MainWindow::onModelReady);
  connect(loader_, &ModelLoader::modelFailed, this, &MainWindow::modelFailed);
  // No re-fuse of the current model: the session's model opens with its fusion.
  connect(loader_, &ModelLoader::fusionChosen, options_, &TuningOptionsBar::showFusion);
  connect(loader_, &ModelLoader::sessionReopened, this, &MainWindow::onSessionReopened);
  connect(loader_, &ModelLoader::sessionFailed, this, &MainWindow::sessionFailed);
  connect(loader_, &ModelLoader::recentModelsChanged, this, &MainWindow::updateRecentMenu);
}

void MainWindow::connectTuning() {
  connect(tuning_, &TuningController::errorOccurred, this, &MainWindow::showError);
  // The choices a tuning starts with are the next one's; a time budget's trials are the command line's.
  connect(tuning_, &TuningController::starting, this, [this] {
    if (persistent_) options_->save(tuning_->timeBudget() > 0 ? 0 : tuning_->trialBudget());
  });
  connect(tuning_, &TuningController::stateChanged, this, &MainWindow::updateActions);
  // A session recorded into: the database exists now, Export can read it.
  connect(tuning_, &TuningController::sessionStarted, this, &MainWindow::updateActions);
  connect(tuning_, &TuningController::bestProgramChanged, this, [this](int task) {
    const BestProgram b = tuning_->bestProgram(task);
    if (task == selected_) space_->setBest(b.decisions, b.seconds, b.steps);
  });
  connect(tuning_, &TuningController::finished, this, &MainWindow::onTuningFinished);
  connect(options_, &TuningOptionsBar::trialsChanged, tuning_, &TuningController::setTrialBudget);
  connect(options_, &TuningOptionsBar::fusionChanged, this, [this] {
    if (!modelPath().isEmpty() && !tuning_->isRunning()) setModelPath(modelPath());  // re-fuse
  });
  // Another target: the model is prepared again (its image layouts follow
  // the target) and its stored sessions for that target are shown.
  connect(options_, &TuningOptionsBar::targetChanged, this, [this] {
    loader_->setTarget(options_->target());
    log_->appendMessage(tr("Target: %1").arg(QString::fromStdString(loader_->target().str())));
    if (!modelPath().isEmpty() && !tuning_->isRunning()) setModelPath(modelPath());
    updateActions();
  });
  connect(options_, &TuningOptionsBar::costModelFileRequested, this, &MainWindow::setCostModelFile);
  // The dialog's time budget is the tuning's (as --tune-minutes is).
  connect(options_, &TuningOptionsBar::detailsChanged, this,
          [this] { tuning_->setTimeBudget(options_->details().minutes); });
}

void MainWindow::connectViews() {
  connect(tasks_, &TasksPanel::taskSelected, this, &MainWindow::selectTask);
  connect(graph_, &GraphView::taskSelected, this, &MainWindow::selectTask);
  connect(plots_, &PlotsPanel::taskSelected, this, &MainWindow::selectTask);
  connect(this, &MainWindow::modelReady, this, &MainWindow::updateActions);  // Run needs the model prepared
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
}

QAction* MainWindow::createAction(const QIcon& icon, const QString& text, const char* name,
                                  const QKeySequence& shortcut, const QString& tip) {
  auto* action = new QAction(icon, text, this);
  action->setObjectName(QLatin1String(name));
  action->setShortcut(shortcut);
  action->setStatusTip(tip);
  return action;
}

void MainWindow::createActions() {
  QStyle* s = style();
  openModelAction_ = createAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("&Open model..."), "actionOpenModel",
                                  QKeySequence::Open, tr("Open a model: a zoo name, an ONNX or a TorchScript file"));
  connect(openModelAction_, &QAction::triggered, this, &MainWindow::openModel);
  inputShapesAction_ = createAction({}, tr("Input &shapes..."), "actionInputShapes", {},
                                    tr("Give the shapes of the model's inputs (a TorchScript file's, an ONNX "
                                       "file's symbolic dimensions) and open it with them"));
  connect(inputShapesAction_, &QAction::triggered, this, [this] { askInputShapes(modelPath()); });
  openDatabaseAction_ =
      createAction(s->standardIcon(QStyle::SP_DriveHDIcon), tr("Open &database..."), "actionOpenDatabase",
                   QKeySequence(Qt::CTRL | Qt::Key_D), tr("Use a tuning database (SQLite) and browse its sessions"));
  connect(openDatabaseAction_, &QAction::triggered, this, &MainWindow::openDatabase);
  sessionsAction_ = createAction(s->standardIcon(QStyle::SP_FileDialogDetailedView), tr("&Sessions..."),
                                 "actionSessions", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S),
                                 tr("Browse, compare and reopen the sessions of the database"));
  connect(sessionsAction_, &QAction::triggered, this, &MainWindow::showSessions);
  compareAction_ = createAction({}, tr("&Compare sessions..."), "actionCompare", {},
                                tr("Two sessions side by side (of this database or two): curves and tasks"));
  connect(compareAction_, &QAction::triggered, this, [this] { showCompare(); });

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
  startAction_ = createAction(s->standardIcon(QStyle::SP_MediaPlay), tr("&Start"), "actionStart", Qt::Key_F5,
                              tr("Start or resume tuning"));
  connect(startAction_, &QAction::triggered, this, &MainWindow::startTuning);
  pauseAction_ = createAction(s->standardIcon(QStyle::SP_MediaPause), tr("&Pause"), "actionPause", Qt::Key_F6,
                              tr("Pause tuning after the batch in flight"));
  connect(pauseAction_, &QAction::triggered, this, &MainWindow::togglePause);
  stopAction_ = createAction(s->standardIcon(QStyle::SP_MediaStop), tr("S&top"), "actionStop",
                             QKeySequence(Qt::SHIFT | Qt::Key_F5), tr("Stop tuning"));
  connect(stopAction_, &QAction::triggered, this, &MainWindow::stopTuning);
  exportAction_ =
      createAction(s->standardIcon(QStyle::SP_DialogSaveButton), tr("&Export..."), "actionExport",
                   QKeySequence(Qt::CTRL | Qt::Key_E), tr("Export the tuned kernels or the records of the database"));
  connect(exportAction_, &QAction::triggered, this, &MainWindow::showExport);
  for (QAction* a : {inputShapesAction_, compareAction_, startAction_, pauseAction_, stopAction_, exportAction_})
    a->setEnabled(false);

  resetLayoutAction_ = createAction({}, tr("&Reset layout"), "actionResetLayout", {}, {});
  connect(resetLayoutAction_, &QAction::triggered, this, &MainWindow::resetLayout);
  quitAction_ = createAction({}, tr("&Quit"), "actionQuit", QKeySequence::Quit, {});
  quitAction_->setMenuRole(QAction::QuitRole);
  connect(quitAction_, &QAction::triggered, this, &QWidget::close);
  createRunActions();
  createInspectorAction();
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
  options_->addTo(toolBar_);
  toolBar_->addSeparator();
  toolBar_->addActions({startAction_, pauseAction_, stopAction_});
  toolBar_->addSeparator();
  toolBar_->addActions({runAction_, stopRunAction_});
  toolBar_->addSeparator();
  toolBar_->addAction(exportAction_);
}

void MainWindow::createDocks() {
  QDockWidget* graph = addPanel(tr("Graph"), "graphDock", graph_, Qt::LeftDockWidgetArea);
  QDockWidget* plots = addPanel(tr("Plots"), "plotsDock", plots_, Qt::LeftDockWidgetArea);
  QDockWidget* tasks = addPanel(tr("Tasks"), "tasksDock", tasks_, Qt::RightDockWidgetArea);
  QDockWidget* space = addPanel(tr("Search space"), "searchSpaceDock", space_, Qt::RightDockWidgetArea);
  QDockWidget* code = addPanel(tr("Code"), "codeDock", code_, Qt::RightDockWidgetArea);
  QDockWidget* props = addPanel(tr("Properties"), "propertiesDock", graph_->propertiesPanel(), Qt::RightDockWidgetArea);
  QDockWidget* log = addPanel(tr("Log"), "logDock", log_, Qt::BottomDockWidgetArea);
  QDockWidget* fleet = addPanel(tr("Fleet"), "fleetDock", fleet_, Qt::BottomDockWidgetArea);
  // The panel follows where to measure once an entry is done, not per keystroke.
  connect(options_, &TuningOptionsBar::measureChosen, fleet_, &FleetPanel::setMeasure);
  fleet_->setMeasure(options_->measure());

  // Graph above the plots on the left; tasks above the search space, code
  // and node properties (tabbed) on the right; the log along the bottom.
  tabifyDockWidget(space, code);
  tabifyDockWidget(code, props);
  createRunDock(props);  // a tab beside them: a run's figures need room, and no new tab bar
  createRooflineDock(findChild<QDockWidget*>("runDock"));
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
  file->addAction(inputShapesAction_);
  recentMenu_ = file->addMenu(tr("Open &recent"));
  recentMenu_->setObjectName(QStringLiteral("recentMenu"));
  updateRecentMenu();
  file->addSeparator();
  file->addActions({openDatabaseAction_, sessionsAction_, compareAction_, exportAction_});
  file->addSeparator();
  file->addAction(quitAction_);

  QMenu* tuning = menuBar()->addMenu(tr("&Tuning"));
  tuning->addActions({startAction_, pauseAction_, stopAction_});
  tuning->addSeparator();
  tuning->addActions({runAction_, stopRunAction_, runAfterTuningAction_});
  tuning->addSeparator();
  tuning->addAction(inspectAction_);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  for (QDockWidget* dock : docks_)
    view->addAction(dock->toggleViewAction());
  view->addAction(toolBar_->toggleViewAction());
  view->addSeparator();
  view->addAction(resetLayoutAction_);
}

void MainWindow::createStatusBar() {
  progress_->setObjectName(QStringLiteral("tuningProgress"));
  progress_->setMaximumWidth(220);
  progress_->setFormat(tr("%v / %m trials"));
  progress_->setValue(0);
  progress_->hide();
  rateLabel_->setObjectName(QStringLiteral("rateLabel"));
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(rateLabel_);
  modelLabel_ = new QLabel(this);
  databaseLabel_ = new QLabel(this);
  statusBar()->addPermanentWidget(modelLabel_);
  statusBar()->addPermanentWidget(databaseLabel_);
  statusBar()->showMessage(tr("Ready"));
}

void MainWindow::onModelOpening() {
  run_->cancel(tr("another model is opened"));
  run_->clear();
  updateTitle();
  updateActions();
}

void MainWindow::onModelReady() {
  // What the import chose where the file was silent (a symbolic batch taken as 1): said, with the way out.
  const std::vector<std::string>& assumed = loader_->prepared()->graph.assumptions;
  for (const std::string& a : assumed)
    log_->appendMessage(tr("Assumed: %1").arg(QString::fromStdString(a)));
  if (!assumed.empty())
    statusBar()->showMessage(
        tr("%1 symbolic dimension(s) taken as 1: File > Input shapes... sizes them").arg(assumed.size()));
  QHash<QString, QString> taskNames;  // the Run's table names tasks as the tasks panel does
  for (int i = 0; i < tasks_->model()->rowCount(); ++i) {
    const TaskInfo t = tasks_->model()->task(i);
    taskNames[t.key] = t.name;
  }
  runPanel_->setTaskNames(taskNames);
  selectTask(0);
  emit modelReady();
}

void MainWindow::onSessionReopened(qint64 session) {
  updateActions();
  showStoredRun();  // its latest run against LibTorch, if it has one
  selectTask(selected_ >= 0 ? selected_ : 0);
  emit sessionReopened(session);
}

void MainWindow::selectTask(int task) {
  const std::vector<task::SearchTask>& tasks = loader_->tasks();
  if (task < 0 || task >= int(tasks.size())) return;
  selected_ = task;
  selectedTask_ = tasks[size_t(task)];
  if (loader_->prepared()) graph_->selectTask(task);
  plots_->selectTask(task);
  roofline_->selectTask(task);
  // The best program so far (from the tuning or a reopened session), else
  // the space's samples.
  const BestProgram b = tuning_->bestProgram(task);
  space_->showTask(selectedTask_, b.decisions, b.seconds > 0 ? b.seconds : std::nan(""), b.steps);
}

void MainWindow::showError(const QString& title, const QString& message) {
  log_->appendMessage(tr("%1: %2").arg(title, message));
  auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
  box->setObjectName(QStringLiteral("errorDialog"));
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();  // window-modal, returns at once
}

bool MainWindow::setDatabasePath(const QString& database) {
  if (tuning_->isRunning()) {
    showError(tr("Cannot change the database"), tr("a tuning is running: stop it first"));
    return false;
  }
  if (const QString error = checkDatabase(database); !error.isEmpty()) {
    showError(tr("Cannot open the database"), error);
    return false;
  }
  loader_->setDatabase(database);
  run_->cancel(tr("another database is used"));
  run_->clear();
  log_->appendMessage(tr("Database: %1").arg(database));
  updateTitle();
  updateActions();
  return true;
}

bool MainWindow::setCostModelFile(const QString& path) {
  if (const QString error = options_->setCostModelFile(path); !error.isEmpty()) {
    showError(tr("Cannot use the cost model"), error);
    return false;
  }
  if (!path.isEmpty()) log_->appendMessage(tr("Cost model: %1, trained, from %2").arg(options_->costModel(), path));
  return true;
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
  connect(dialog, &SessionsDialog::compareRequested, this, [this, dialog](qint64 a, qint64 b) {
    dialog->accept();  // it is window-modal: the comparison is modeless, beside the window
    showCompare(a, b);
  });
  connect(dialog, &SessionsDialog::loadFailed, this, [this, dialog](const QString& message) {
    dialog->close();
    showError(tr("Cannot open the database"), message);
  });
  dialog->open();  // window-modal, returns at once; the sessions follow
  dialog->load();
  return dialog;
}

CompareDialog* MainWindow::showCompare(qint64 a, qint64 b) {
  auto* dialog = new CompareDialog(this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &CompareDialog::compared, this, [this, dialog] { showComparisonInGraph(dialog->comparison()); });
  dialog->setDatabase(CompareDialog::A, effectiveDatabase(), a ? a : shownSession());
  dialog->setDatabase(CompareDialog::B, effectiveDatabase(), b);
  dialog->show();
  return dialog;
}

void MainWindow::showComparisonInGraph(const store::SessionComparison& comparison) {
  QVector<double> shares;
  QStringList notes;
  bool any = false;
  for (const task::SearchTask& t : loader_->tasks()) {
    shares << comparison.differenceShare(t.key);
    any = any || std::isfinite(shares.back());
    QString note;
    for (const store::TaskComparison& c : comparison.tasks)
      if (c.task.key == t.key && std::isfinite(c.ratio()))
        note = tr("B %1x A, %2 ms to the model").arg(c.ratio(), 0, 'f', 3).arg(c.weightedDifference() * 1e3, 0, 'f', 4);
    notes << note;
  }
  // Sessions of another model: nothing of the graph to colour.
  graph_->setComparison(any ? shares : QVector<double>{}, notes);
  if (any) graph_->setHeatMode(GraphView::HeatMode::Comparison);
}

ExportDialog* MainWindow::showExport() {
  auto* dialog = new ExportDialog(effectiveDatabase(), this);
  ExportDialog::TaskDefinitions tasks;
  for (const task::SearchTask& t : loader_->tasks())
    tasks.emplace_back(t.key, t.dag);
  const bool prepared = loader_->prepared() != nullptr;
  dialog->setModelTasks(prepared ? modelPath() : QString(), tasks, selected_, loader_->target());
  if (!prepared && selected_ >= 0) dialog->setScope(ExportDialog::SelectedTaskScope);  // a task session
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &ExportDialog::exported, this, [this](bool ok, const QString& message) {
    log_->appendMessage(message);
    statusBar()->showMessage(ok ? tr("Exported") : tr("Export failed"));
  });
  dialog->open();
  return dialog;
}

void MainWindow::updateActions() {
  const bool running = tuning_->isRunning();
  startAction_->setEnabled(!running && !modelPath().isEmpty());
  // The tuning in flight belongs to the open model and database.
  for (QAction* a : {openModelAction_, openDatabaseAction_})
    a->setEnabled(!running);
  zooMenu_->setEnabled(!running);
  inputShapesAction_->setEnabled(!running && frontend::takesInputShapes(modelPath().toStdString()));
  recentMenu_->setEnabled(!running && !recentModels().isEmpty());
  exportAction_->setEnabled(QFileInfo::exists(effectiveDatabase()));
  compareAction_->setEnabled(exportAction_->isEnabled());
  pauseAction_->setEnabled(running);
  pauseAction_->setText(tuning_->isPaused() ? tr("&Resume") : tr("&Pause"));
  stopAction_->setEnabled(running);
  options_->setTargetChangeable(!running);
  updateRunActions();
}

void MainWindow::startTuning() {
  if (!tuning_->canStart()) return;
  run_->cancel(tr("a tuning starts (it would disturb the run)"));
  QString refused;
  if (!tuning_->start(options_->choices(), &refused) && !refused.isEmpty())
    QMessageBox::warning(this, tr("Where to measure"), refused);
}

void MainWindow::onTuningFinished(bool ok, const QString& message) {
  updateActions();
  // For the demo: the tuned model against LibTorch, the figure it was tuned for.
  if (ok && !tuning_->stopRequested() && runAfterTuningAction_->isChecked()) startRun();
  emit tuningFinished(ok, message);
}

void MainWindow::updateTitle() {
  const QString app = tr("Tessel Studio");
  const QString model = modelPath(), database = databasePath();
  setWindowTitle(model.isEmpty() ? app : tr("%1 - %2").arg(model, app));
  modelLabel_->setText(model.isEmpty() ? tr("No model") : tr("Model: %1").arg(model));
  // Without --db the CLI's default is used: say which file that is.
  databaseLabel_->setText(database.isEmpty() ? tr("Database: %1 (default)").arg(effectiveDatabase())
                                             : tr("Database: %1").arg(database));
}

void MainWindow::setModelPath(const QString& model) {
  // The model open keeps its shapes (another fusion or target); another takes the ones remembered for it.
  const QString shapes = model == modelPath() ? loader_->inputShapes() : loader_->rememberedInputShapes(model);
  if (shapes.isEmpty() && frontend::needsInputShapes(model.toStdString()))
    askInputShapes(model);
  else
    setModelPath(model, shapes);
}

void MainWindow::setModelPath(const QString& model, const QString& inputShapes) {
  loader_->open(model, options_->fusion(), inputShapes);
}

void MainWindow::askInputShapes(const QString& model) {
  if (tuning_->isRunning() || !frontend::takesInputShapes(model.toStdString())) return;
  // Start from the shapes it was opened with, else from the ones remembered, else from the file's own.
  const auto prepared = loader_->prepared();
  const bool isOpen = prepared && model == modelPath();
  QString shapes = model == modelPath() ? loader_->inputShapes() : QString();
  if (shapes.isEmpty()) shapes = loader_->rememberedInputShapes(model);
  if (shapes.isEmpty() && isOpen) shapes = QString::fromStdString(prepared->inputShapes);
  QStringList notes;
  if (isOpen)
    for (const std::string& a : prepared->graph.assumptions)
      notes << QString::fromStdString(a);
  auto* dialog = new InputShapesDialog(model, shapes, notes, this);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog, model] { setModelPath(model, dialog->shapes()); });
  dialog->open();
}

void MainWindow::openModel() {
  const QString file =
      QFileDialog::getOpenFileName(this, tr("Open model"), QDir::homePath(),
                                   tr("Models (*.onnx *.pt);;ONNX (*.onnx);;TorchScript (*.pt);;All files (*)"));
  if (!file.isEmpty()) setModelPath(file);
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

// What the window keeps between starts: its layout (geometry, docks, toolbar).
void MainWindow::saveLayout() const {
  QSettings settings = studioSettings();
  settings.setValue(kGeometryKey, saveGeometry());
  settings.setValue(kStateKey, saveState(kStateVersion));
}

bool MainWindow::restoreLayout() {
  QSettings settings = studioSettings();
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
