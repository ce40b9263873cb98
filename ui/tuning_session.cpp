#include "ui/tuning_session.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaObject>
#include <cmath>
#include <memory>
#include <thread>

#include "knowledge/knowledge_base.h"
#include "target/target.h"
#include "tuning/model_tuning.h"

namespace tessel::ui {

TuningSession::TuningSession(QObject* parent) : QObject(parent) {
  qRegisterMetaType<tessel::ui::TaskInfo>();
  qRegisterMetaType<QVector<tessel::ui::TaskInfo>>();
  qRegisterMetaType<QVector<double>>();
  connect(this, &TuningSession::runEnded, this, &TuningSession::onRunEnded, Qt::QueuedConnection);
}

TuningSession::~TuningSession() {
  stop();
  if (thread_.joinable()) thread_.join();
}

bool TuningSession::start(const TuningRequest& request) {
  if (running_) return false;
  if (thread_.joinable()) thread_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = false;
    paused_ = false;
    *interrupt_ = false;
  }
  running_ = true;
  thread_ = std::thread([this, request] { run(request); });
  return true;
}

bool TuningSession::isPaused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return paused_;
}

void TuningSession::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
  *interrupt_ = true;  // the round in flight is abandoned, and tuned again on resume
}

void TuningSession::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
  }
  wake_.notify_all();
}

void TuningSession::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    *interrupt_ = true;
  }
  wake_.notify_all();
}

bool TuningSession::waitWhilePaused() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (paused_ && !stop_) {
    if (raceWindow_) raceWindow_(RaceWindow::BeforeWait);  // a resume() now must not be lost
    wake_.wait(lock);
  }
  if (stop_) return false;
  if (raceWindow_) raceWindow_(RaceWindow::BeforeGoingOn);  // a pause() now must not be lost
  // Under the lock: a pause() after this point sets the flag again, so the
  // round about to start is abandoned rather than the pause lost.
  *interrupt_ = false;
  return true;
}

void TuningSession::onRunEnded(bool ok, const QString& message) {
  if (thread_.joinable()) thread_.join();  // it has returned from run() or is about to
  running_ = false;
  emit finished(ok, message);
}

void TuningSession::run(TuningRequest request) {
  // Signals emitted here cross to the UI thread as queued connections.
  auto log = [this](const QString& text) { emit logMessage(text); };
  bool ok = false;
  QString message;
  try {
    const std::string binDir = QCoreApplication::applicationDirPath().toStdString();
    if (request.config.workerPath.empty())
      request.config.workerPath = QDir(QCoreApplication::applicationDirPath()).filePath("tessel-worker").toStdString();
    // The knowledge base shipped for the target's class, as `tessel tune` finds it.
    if (!request.config.cold && request.config.knowledge.empty())
      request.config.knowledge = knowledge::shippedKnowledgeBase(request.config.target, binDir);
    tuning::ModelTuning tuning(request.config, request.prepared);
    QVector<TaskInfo> infos;
    for (const fusion::GraphTask& t : tuning.model().tasks)
      infos.push_back({QString::fromStdString(t.key), QString::fromStdString(fusion::taskLabel(t)), double(t.weight),
                       t.flops, t.dag.compulsoryBytes()});
    emit tasksReady(infos);
    log(QString("%1: %2 tasks").arg(QString::fromStdString(request.config.model)).arg(infos.size()));

    tuning.openSession(request.database.toStdString(),
                       request.resumeSession ? request.resumeSession : tuning::kNewSession);
    emit sessionStarted(tuning.sessionId(), tuning.resumed());

    tuning::TuningEvents events;
    events.onRecords = [this](size_t i, const std::vector<search::TuneRecord>& batch) {
      QVector<double> predicted, measured;
      bool untrained = false;
      for (const search::TuneRecord& r : batch) {
        untrained = untrained || (r.modelTrainedOn == 0 && !r.modelPretrained);
        predicted.push_back(r.predicted);
        measured.push_back(r.result.ok() ? r.result.medianCost() : std::nan(""));
        if (!r.result.ok())
          emit logMessage(QString("task %1: %2").arg(i).arg(QString::fromStdString(r.result.message).left(200)));
      }
      emit programsMeasured(int(i), predicted, measured, untrained);
    };
    events.onBest = [this](size_t i, const search::TuneRecord& r) {
      emit bestProgramFound(int(i), QString::fromStdString(r.decisions), QString::fromStdString(r.steps),
                            r.result.medianCost());
    };
    events.onWarmStart = [this](const tuning::WarmStartSummary& w) {
      emit warmStarted(w.warm, QString::fromStdString(w.text()));
    };
    events.cancel = interrupt_;
    events.keepGoing = [this] { return waitWhilePaused(); };
    events.onRound = [this](size_t i, const search::TuneResult& r, double estimate,
                            const tuning::TuningProgress& progress) {
      emit roundFinished(int(i), r.trials, r.validTrials ? r.bestSeconds : std::nan(""),
                         std::isfinite(estimate) ? estimate : std::nan(""), progress.runTrials);
    };
    search::ModelTuneResult result = tuning.run(events);
    ok = true;
    message = result.stopped ? QString("stopped after %1 trials").arg(result.trials)
                             : QString("finished: %1 trials").arg(result.trials);
  } catch (const std::exception& e) {
    message = QString::fromStdString(e.what());
  }
  log(message);
  emit runEnded(ok, message, QPrivateSignal());
}

}  // namespace tessel::ui
