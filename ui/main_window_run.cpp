// Tessel Studio's main window, its Run part: the Run and Stop-run actions,
// the Run dock, and which model, database, fusion and session a run is of.
// The run itself (the child process, the panel, the graph's measured heat,
// storing) is RunController's.
#include <QAction>
#include <QDockWidget>
#include <QKeySequence>
#include <QStyle>

#include "frontend/model_loader.h"
#include "ui/graph_view.h"
#include "ui/main_window.h"
#include "ui/model_run.h"
#include "ui/run_controller.h"
#include "ui/run_panel.h"

namespace tessel::ui {

void MainWindow::createRunActions() {
  QStyle* s = style();
  runAction_ = createAction(s->standardIcon(QStyle::SP_MediaSeekForward), tr("&Run"), "actionRun",
                            QKeySequence(Qt::CTRL | Qt::Key_R),
                            tr("Run the model with its best tuned kernels against LibTorch (tessel run --profile)"));
  connect(runAction_, &QAction::triggered, this, &MainWindow::startRun);
  stopRunAction_ = createAction(s->standardIcon(QStyle::SP_BrowserStop), tr("Stop r&un"), "actionStopRun", {},
                                tr("Stop the run in progress (its process is killed)"));
  connect(stopRunAction_, &QAction::triggered, this, &MainWindow::stopRun);
  runAction_->setEnabled(false);
  stopRunAction_->setEnabled(false);

  // For the demo: a tuning that ends normally is run against LibTorch at once.
  runAfterTuningAction_ =
      createAction({}, tr("Run &when a tuning ends"), "actionRunAfterTuning", {},
                   tr("Run the model against LibTorch as soon as a tuning finishes (not when it is stopped)"));
  runAfterTuningAction_->setCheckable(true);
  runAfterTuningAction_->setChecked(studioSettings().value(kRunAfterTuningKey, true).toBool());
  connect(runAfterTuningAction_, &QAction::toggled, this, [this](bool on) {
    if (persistent_) studioSettings().setValue(kRunAfterTuningKey, on);
  });
}

void MainWindow::createRunDock(QDockWidget* tabbedWith) {
  runPanel_ = new RunPanel(this);
  runPanel_->setRepeats(studioSettings().value(kRunRepeatsKey, kDefaultRunRepeats).toInt());
  runPanel_->setActions(runAction_, stopRunAction_);
  run_ = new RunController(runPanel_, graph_, log_, this);
  QDockWidget* dock = addPanel(tr("Run"), "runDock", runPanel_, Qt::RightDockWidgetArea);
  tabifyDockWidget(tabbedWith, dock);
  connect(run_, &RunController::runningChanged, this, &MainWindow::updateActions);
  // A run's result is what the user waits for: bring it to the front.
  connect(run_, &RunController::runFinished, dock, [dock] { dock->raise(); });
}

void MainWindow::updateRunActions() {
  const bool tuningNow = tuning_->isTuning();
  const bool running = run_->isRunning();
  const bool prepared = loader_->prepared() != nullptr;
  const bool cpu = loader_->target().isCpu();  // tessel run executes on the CPU
  runAction_->setEnabled(prepared && !tuningNow && !running && cpu);
  stopRunAction_->setEnabled(running);
  runAction_->setToolTip(
      tuningNow   ? tr("Not while tuning: the run would disturb the tuning's measurements, and be disturbed by them")
      : !cpu      ? tr("Runs execute on the CPU: choose a cpu target to run the model against LibTorch")
      : !prepared ? tr("Open a model to run it against LibTorch")
      : running   ? tr("A run is in progress (Stop run ends it)")
                  : tr("Run %1 with the database's best kernels against LibTorch (Ctrl+R)").arg(modelPath()));
}

void MainWindow::startRun() {
  const std::shared_ptr<const frontend::PreparedModel> prepared = loader_->prepared();
  if (!prepared || tuning_->isTuning() || run_->isRunning() || !loader_->target().isCpu()) return;
  RunRequest request;
  request.model = modelPath();
  request.database = effectiveDatabase();
  request.fusion = QString::fromStdString(prepared->fusion);
  request.target = QString::fromStdString(loader_->target().str());
  request.repeats = runPanel_->repeats();
  request.session = shownSession();
  // The shapes it was prepared with (a .pt needs them, a .onnx's symbolic dimensions follow them).
  if (frontend::takesInputShapes(request.model.toStdString()))
    request.inputShapes = QString::fromStdString(prepared->inputShapes);
  if (persistent_) studioSettings().setValue(kRunRepeatsKey, request.repeats);
  run_->start(request);
}

void MainWindow::stopRun() {
  run_->cancel(tr("stopped"));
}

void MainWindow::showStoredRun() {
  const qint64 shown = shownSession();
  if (run_->isRunning()) {
    if (shown && run_->process()->request().model == modelPath()) return;  // its own result comes next
    run_->cancel(tr("another session is shown"));
  }
  if (shown)
    run_->showStoredRun(effectiveDatabase(), shown);
  else
    run_->clear();
}

}  // namespace tessel::ui
