// Tessel Studio's main window, its Run part: the Run and Stop-run actions,
// the Run dock, and which model, database, fusion and session a run is of.
// The run itself (the child process, the panel, the graph's measured heat,
// storing) is RunController's.
#include <QAction>
#include <QDockWidget>
#include <QKeySequence>
#include <QSettings>
#include <QStyle>

#include "frontend/model_loader.h"
#include "store/session_history.h"
#include "ui/graph_view.h"
#include "ui/main_window.h"
#include "ui/model_run.h"
#include "ui/run_controller.h"
#include "ui/run_panel.h"
#include "ui/tuning_session.h"

namespace tessel::ui {

namespace {

QSettings runSettings() {
  return QSettings(MainWindow::kSettingsOrganization, MainWindow::kSettingsApplication);
}

// "1,3,224,224;1,16": the model's input shapes as --input-shapes takes them.
QString inputShapesOf(const graph::Graph& g) {
  QStringList inputs;
  for (const graph::ValueInfo& in : g.inputs) {
    QStringList dims;
    for (int64_t d : in.shape)
      dims << QString::number(d);
    inputs << dims.join(',');
  }
  return inputs.join(';');
}

}  // namespace

void MainWindow::createRunActions() {
  QStyle* s = style();
  runAction_ = new QAction(s->standardIcon(QStyle::SP_MediaSeekForward), tr("&Run"), this);
  runAction_->setObjectName(QStringLiteral("actionRun"));
  runAction_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  runAction_->setStatusTip(tr("Run the model with its best tuned kernels against LibTorch (tessel run --profile)"));
  runAction_->setEnabled(false);
  connect(runAction_, &QAction::triggered, this, &MainWindow::startRun);

  stopRunAction_ = new QAction(s->standardIcon(QStyle::SP_BrowserStop), tr("Stop r&un"), this);
  stopRunAction_->setObjectName(QStringLiteral("actionStopRun"));
  stopRunAction_->setStatusTip(tr("Stop the run in progress (its process is killed)"));
  stopRunAction_->setEnabled(false);
  connect(stopRunAction_, &QAction::triggered, this, &MainWindow::stopRun);

  // For the demo: a tuning that ends normally is run against LibTorch at once.
  runAfterTuningAction_ = new QAction(tr("Run &when a tuning ends"), this);
  runAfterTuningAction_->setObjectName(QStringLiteral("actionRunAfterTuning"));
  runAfterTuningAction_->setCheckable(true);
  runAfterTuningAction_->setChecked(runSettings().value(kRunAfterTuningKey, true).toBool());
  runAfterTuningAction_->setStatusTip(
      tr("Run the model against LibTorch as soon as a tuning finishes (not when it "
         "is stopped)"));
  connect(runAfterTuningAction_, &QAction::toggled, this, [this](bool on) {
    if (persistent_) runSettings().setValue(kRunAfterTuningKey, on);
  });
}

void MainWindow::createRunDock(QDockWidget* tabbedWith) {
  runPanel_ = new RunPanel(this);
  runPanel_->setRepeats(runSettings().value(kRunRepeatsKey, kDefaultRunRepeats).toInt());
  runPanel_->setActions(runAction_, stopRunAction_);
  run_ = new RunController(runPanel_, graph_, log_, this);
  QDockWidget* dock = addPanel(tr("Run"), "runDock", runPanel_, Qt::RightDockWidgetArea);
  tabifyDockWidget(tabbedWith, dock);
  connect(run_, &RunController::runningChanged, this, &MainWindow::updateActions);
  // A run's result is what the user waits for: bring it to the front.
  connect(run_, &RunController::runFinished, dock, [dock] { dock->raise(); });
}

void MainWindow::updateRunActions() {
  const bool tuningNow = tuning_ || session_->isRunning();
  const bool running = run_->isRunning();
  runAction_->setEnabled(prepared_ && !tuningNow && !running);
  stopRunAction_->setEnabled(running);
  runAction_->setToolTip(
      tuningNow    ? tr("Not while tuning: the run would disturb the tuning's measurements, and be disturbed by them")
      : !prepared_ ? tr("Open a model to run it against LibTorch")
      : running    ? tr("A run is in progress (Stop run ends it)")
                   : tr("Run %1 with the database's best kernels against LibTorch (Ctrl+R)").arg(model_));
}

void MainWindow::startRun() {
  if (!prepared_ || tuning_ || session_->isRunning() || run_->isRunning()) return;
  RunRequest request;
  request.model = model_;
  request.database = effectiveDatabase();
  request.fusion = QString::fromStdString(prepared_->fusion);
  request.target = QString::fromStdString(target_.str());
  request.repeats = runPanel_->repeats();
  request.session = shownSession_;
  // TorchScript does not record its input shapes: give the ones it was opened with.
  if (model_.endsWith(QLatin1String(".pt"), Qt::CaseInsensitive)) request.inputShapes = inputShapesOf(prepared_->graph);
  if (persistent_) runSettings().setValue(kRunRepeatsKey, request.repeats);
  run_->start(request);
}

void MainWindow::stopRun() {
  run_->cancel(tr("stopped"));
}

void MainWindow::showStoredRun(const store::SessionHistory& history) {
  shownSession_ = history.session.kind == "model" ? history.session.id : 0;
  if (run_->isRunning()) {
    if (shownSession_ && run_->process()->request().model == model_) return;  // its own result comes next
    run_->cancel(tr("another session is shown"));
  }
  if (shownSession_)
    run_->showStoredRun(effectiveDatabase(), shownSession_);
  else
    run_->clear();
}

}  // namespace tessel::ui
