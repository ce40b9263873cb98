#include "ui/tuning_controller.h"

#include <QDateTime>
#include <QLabel>
#include <QPointer>
#include <QProgressBar>
#include <QStatusBar>
#include <cmath>

#include "fleet/fleet_measurer.h"
#include "fleet/redis_url.h"
#include "frontend/model_loader.h"
#include "store/session_history.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/model_loader.h"
#include "ui/plots_panel.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_session.h"

namespace tessel::ui {

TuningController::TuningController(ModelLoader* loader, const StudioViews& views, QObject* parent)
    : QObject(parent), loader_(loader), views_(views), session_(new TuningSession(this)) {
  views_.tasks->follow(session_);  // first: a round's shares are read from the panel it updates
  connect(session_, &TuningSession::logMessage, views_.log, &LogPanel::appendMessage);
  // What the tuning starts from: in the log and, for a while, the status bar.
  connect(session_, &TuningSession::warmStarted, this, [this](bool, const QString& summary) {
    views_.log->appendMessage(summary);
    views_.status->showMessage(summary, 20000);
  });
  connect(session_, &TuningSession::roundFinished, this, &TuningController::onRound);
  connect(session_, &TuningSession::programsMeasured, views_.plots, &PlotsPanel::addPrograms);
  // A trained model ranking a task's programs worse than chance: said in the log too.
  connect(views_.plots, &PlotsPanel::modelFlagged, views_.log,
          [log = views_.log](int, const QString& message) { log->appendMessage(message); });
  connect(session_, &TuningSession::bestProgramFound, this, &TuningController::onBestProgram);
  connect(session_, &TuningSession::sessionStarted, this, &TuningController::onSessionStarted);
  connect(session_, &TuningSession::finished, this, &TuningController::onFinished);
  // The loader's tasks have no best program yet; a session it reads has its own.
  connect(loader_, &ModelLoader::tasksChanged, this,
          [this] { best_ = QVector<BestProgram>(int(loader_->tasks().size())); });
  connect(loader_, &ModelLoader::historyRead, this, &TuningController::showHistory);
}

bool TuningController::isRunning() const {
  return session_->isRunning();
}

bool TuningController::isPaused() const {
  return session_->isPaused();
}

bool TuningController::canStart() const {
  return !loader_->modelPath().isEmpty() && !isTuning();
}

bool TuningController::start(const TuningChoices& choices, QString* refused) {
  if (!canStart()) return false;
  tuning_ = true;
  stopRequested_ = false;
  views_.graph->setHeatMode(GraphView::HeatMode::Estimate);  // the tuning's shares, live
  TuningRequest request;
  if (!makeRequest(choices, request, refused)) {
    tuning_ = false;
    return false;
  }
  // After a reopened (or stopped) session of this model, Start goes on with
  // it: the budget is trials to add, and its curves continue.
  const qint64 resumed = loader_->resumableSession();
  if (resumed) {
    request.resumeSession = resumed;
    request.config.trials = loader_->resumedTrials() + trialBudget_;
  } else {
    loader_->beginSession();
    views_.plots->clear();
    plottedSession_ = 0;  // until the new session starts
  }
  clock_.start();
  // A time budget's progress is its time, in seconds.
  views_.progress->setRange(0, timeBudgetMinutes_ > 0 ? int(timeBudgetMinutes_ * 60) : trialBudget_);
  views_.progress->setFormat(timeBudgetMinutes_ > 0 ? tr("%v / %m s") : tr("%v / %m trials"));
  views_.progress->setValue(0);
  views_.progress->show();
  views_.rate->clear();
  const QString model = loader_->modelPath();
  views_.log->appendMessage(
      timeBudgetMinutes_ > 0 ? tr("Tuning %1: %2 minutes (at most %3 trials) into %4")
                                   .arg(model)
                                   .arg(timeBudgetMinutes_)
                                   .arg(trialBudget_)
                                   .arg(request.database)
                             : tr("Tuning %1: %2 trials into %3").arg(model).arg(trialBudget_).arg(request.database));
  if (!resumed) clearTrials();  // a new session starts from no trials
  emit starting();
  session_->start(request);
  views_.status->showMessage(tr("Preparing %1...").arg(model));
  emit stateChanged();
  return true;
}

bool TuningController::makeRequest(const TuningChoices& choices, TuningRequest& request, QString* refused) const {
  tuning::TuningConfig& c = request.config;
  c.model = loader_->modelPath().toStdString();
  c.inputShapes = loader_->inputShapes().toStdString();
  c.trials = trialBudget_;
  c.fusion = choices.fusion.toStdString();
  c.costModel = choices.costModel.toStdString();
  c.cold = !choices.warmStart;
  c.costModelFile = choices.costModelFile.toStdString();
  c.target = loader_->target();
  c.minutes = timeBudgetMinutes_;
  const TuningDetails& d = choices.details;
  c.search = d.search.toStdString();
  c.seed = uint64_t(d.seed);
  c.batch = d.batch;
  c.population = d.population;
  c.cacheState = d.cacheState;
  c.transfer = d.transfer;
  c.timeoutSeconds = d.timeoutSeconds;
  const QString measure = choices.measure.trimmed();
  if (!measure.isEmpty() && measure != QLatin1String("local")) {
    fleet::FleetOptions f;
    try {
      f.redis = fleet::parseRedisUrl(measure.toStdString());
    } catch (const std::invalid_argument& e) {
      if (refused) *refused = QString::fromStdString(e.what());
      return false;
    }
    // From the tuning thread: queued to the log.
    f.log = [log = QPointer<LogPanel>(views_.log)](const std::string& line) {
      if (log)
        QMetaObject::invokeMethod(log, "appendMessage", Qt::QueuedConnection,
                                  Q_ARG(QString, QStringLiteral("fleet: ") + QString::fromStdString(line)));
    };
    c.measure = f.redis.str();
    c.makeMeasurer = fleet::fleetMeasurerFactory(f);
  }
  request.database = loader_->effectiveDatabase();
  // The model as shown: tuned without preparing it again.
  if (const auto prepared = loader_->prepared(); prepared && prepared->fusion == c.fusion) request.prepared = prepared;
  return true;
}

void TuningController::togglePause() {
  if (session_->isPaused())
    session_->resume();
  else
    session_->pause();
  views_.log->appendMessage(session_->isPaused() ? tr("Paused (the round in flight is tuned again on resume)")
                                                 : tr("Resumed"));
  emit stateChanged();
}

void TuningController::stop() {
  stopRequested_ = true;  // no run after it
  session_->stop();
  views_.log->appendMessage(tr("Stopping"));
}

void TuningController::onSessionStarted(qint64 session, bool resumed) {
  loader_->continueSession(session);  // Start after a stop goes on with this session
  plottedSession_ = session;
  emit sessionStarted(session);
  views_.log->appendMessage(resumed ? tr("Resuming session %1").arg(session)
                                    : tr("Recording into session %1").arg(session));
}

void TuningController::onRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials) {
  const double elapsed = clock_.elapsed() / 1e3;
  // The plots' time is wall time since the session started, as a reopened
  // session's history has it, so resumed runs continue its curve.
  const QDateTime started = loader_->sessionStart();
  const double sessionTime = started.isValid() ? started.msecsTo(QDateTime::currentDateTimeUtc()) / 1e3 : elapsed;
  views_.plots->addRound(task, taskTrials, bestSeconds, estimateSeconds, sessionTime);
  runTrials_ = totalTrials;
  const double budgetSeconds = timeBudgetMinutes_ * 60;
  QProgressBar* progress = views_.progress;
  progress->setValue(std::min(budgetSeconds > 0 ? int(elapsed) : totalTrials, progress->maximum()));
  if (elapsed > 0 && totalTrials > 0) {
    const double rate = totalTrials / elapsed;
    const double trialsLeft = (trialBudget_ - totalTrials) / rate;
    const int left = int(std::max(0.0, budgetSeconds > 0 ? std::min(budgetSeconds - elapsed, trialsLeft) : trialsLeft));
    views_.rate->setText(
        tr("%1 trials/s, %2:%3 left").arg(rate, 0, 'f', 2).arg(left / 60).arg(left % 60, 2, 10, QLatin1Char('0')));
  }
  refreshShares(estimateSeconds);
  views_.status->showMessage(std::isfinite(estimateSeconds)
                                 ? tr("%1 of %2 trials; task %3; estimated end-to-end %4 ms")
                                       .arg(totalTrials)
                                       .arg(trialBudget_)
                                       .arg(task)
                                       .arg(estimateSeconds * 1e3, 0, 'f', 3)
                                 : tr("%1 of %2 trials; task %3").arg(totalTrials).arg(trialBudget_).arg(task));
}

void TuningController::onBestProgram(int task, const QString& decisions, const QString& steps, double seconds) {
  if (task < 0 || task >= best_.size()) return;
  best_[task] = {decisions, steps, seconds};
  emit bestProgramChanged(task);
}

void TuningController::onFinished(bool ok, const QString& message) {
  views_.progress->hide();
  // Start goes on with this session and its trials so far; after a failure
  // (the database busy, say) it begins a new one.
  loader_->endTuning(ok, runTrials_);
  runTrials_ = 0;
  views_.status->showMessage(ok ? message : tr("Tuning failed: %1").arg(message));
  if (!ok) emit errorOccurred(tr("Tuning failed"), message);
  tuning_ = false;
  emit finished(ok, message);
}

void TuningController::clearTrials() {
  TasksModel* tasks = views_.tasks->model();
  QVector<TaskInfo> infos;
  for (int i = 0; i < tasks->rowCount(); ++i)
    infos << tasks->task(i);
  tasks->setTasks(infos);
}

void TuningController::refreshShares(double estimateSeconds) {
  TasksModel* tasks = views_.tasks->model();
  QVector<double> shares;
  for (int i = 0; i < tasks->rowCount(); ++i) {
    const double share = tasks->data(tasks->index(i, TasksModel::Share), Qt::UserRole).toDouble();
    shares.push_back(std::isfinite(estimateSeconds) ? share : std::nan(""));
  }
  views_.graph->setTaskShares(shares);
}

void TuningController::showHistory(const store::SessionHistory& h, const QVector<int>& taskOf) {
  // Fresh tasks panel and plots, then the history as a live tuning reported it.
  clearTrials();
  views_.plots->clear();
  plottedSession_ = h.session.id;
  best_ = QVector<BestProgram>(int(loader_->tasks().size()));
  for (const store::SessionRound& r : h.rounds) {
    const int task = taskOf[int(r.task)];
    if (task < 0) continue;
    views_.tasks->model()->updateTask(task, r.taskTrials, r.bestSeconds);
    views_.plots->addRound(task, r.taskTrials, r.bestSeconds, r.estimateSeconds, r.elapsedSeconds);
  }
  QVector<int> programTask, round;
  QVector<double> predicted, measured;
  QVector<bool> untrained;
  for (const store::SessionProgram& p : h.programs) {
    if (taskOf[int(p.task)] < 0) continue;
    programTask << taskOf[int(p.task)];
    predicted << p.predicted;
    measured << p.seconds;
    round << p.scoringRound;
    untrained << p.untrained;
  }
  views_.plots->addProgramsBulk(programTask, predicted, measured, round, untrained);
  for (size_t i = 0; i < h.tasks.size(); ++i)
    if (taskOf[int(i)] >= 0 && h.tasks[i].best) {
      const store::RecordRow& b = *h.tasks[i].best;
      best_[taskOf[int(i)]] = {QString::fromStdString(b.decisions), QString::fromStdString(b.steps), b.medianCost()};
    }
  refreshShares(h.rounds.empty() ? std::nan("") : h.rounds.back().estimateSeconds);
}

}  // namespace tessel::ui
