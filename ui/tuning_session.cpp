#include "ui/tuning_session.h"

#include <QCoreApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMetaObject>
#include <cmath>
#include <memory>
#include <thread>

#include "frontend/model_loader.h"
#include "search/task_scheduler.h"
#include "store/tuning_recorder.h"

namespace tessel::ui {

TuningSession::TuningSession(QObject* parent) : QObject(parent) {
  qRegisterMetaType<tessel::ui::TaskInfo>();
  qRegisterMetaType<QVector<tessel::ui::TaskInfo>>();
  qRegisterMetaType<QVector<double>>();
}

TuningSession::~TuningSession() {
  stop();
  if (thread_.joinable()) thread_.join();
}

bool TuningSession::start(const TuningRequest& request) {
  if (running_) return false;
  if (thread_.joinable()) thread_.join();
  stop_ = false;
  paused_ = false;
  *interrupt_ = false;
  running_ = true;
  thread_ = std::thread([this, request] { run(request); });
  return true;
}

void TuningSession::pause() {
  paused_ = true;
  *interrupt_ = true;  // the round in flight is abandoned, and tuned again on resume
}

void TuningSession::resume() {
  paused_ = false;
  wake_.notify_all();
}

void TuningSession::stop() {
  stop_ = true;
  *interrupt_ = true;
  wake_.notify_all();
}

bool TuningSession::waitWhilePaused() {
  std::unique_lock<std::mutex> lock(mutex_);
  wake_.wait(lock, [this] { return !paused_ || stop_; });
  if (stop_) return false;
  *interrupt_ = false;
  return true;
}

void TuningSession::run(TuningRequest request) {
  // Signals emitted here cross to the UI thread as queued connections.
  auto log = [this](const QString& text) { emit logMessage(text); };
  bool ok = false;
  QString message;
  try {
    const std::string target = "cpu";
    frontend::PreparedModel m =
        frontend::prepareModel(request.model.toStdString(), "", request.fusion.toStdString(), target);
    QVector<TaskInfo> infos;
    std::vector<search::ModelTask> tasks;
    for (const fusion::GraphTask& t : m.tasks) {
      infos.push_back({QString::fromStdString(t.key), QString::fromStdString(t.name), double(t.weight), t.flops});
      tasks.push_back({fusion::toSearchTask(t, target), double(t.weight), t.name});
    }
    emit tasksReady(infos);
    log(QString("%1: %2 tasks").arg(request.model).arg(tasks.size()));

    auto db = store::Database::open(request.database.toStdString(), store::OpenMode::ReadWrite);
    int64_t modelId = db->ensureModel(m.name, m.name);
    for (const auto& t : tasks)
      db->setModelTask(modelId, db->ensureTask(store::taskRowOf(t.task)), t.weight);
    int64_t session = 0;
    if (request.resumeSession) {
      std::optional<store::SessionRow> s = db->session(request.resumeSession);
      if (!s || s->kind != "model" || s->modelId != modelId)
        throw std::runtime_error("session " + std::to_string(request.resumeSession) + " is not a session of " + m.name +
                                 ": it cannot be resumed with this model");
      session = s->id;
      db->reopenSession(session, request.trials);
    } else {
      const QJsonObject config{{"command", "studio"},
                               {"model", request.model},
                               {"target", QString::fromStdString(target)},
                               {"fusion", QString::fromStdString(m.fusion)},
                               {"trials", request.trials},
                               {"search", request.search},
                               {"cost_model", request.costModel},
                               {"batch", request.batch},
                               {"population", request.population},
                               {"tasks", qint64(tasks.size())},
                               {"cache_flush", measure::cacheStateName(request.cacheState)}};
      session = db->beginSession("model", 0, modelId,
                                 QJsonDocument(config).toJson(QJsonDocument::Compact).toStdString(), request.trials);
    }
    emit sessionStarted(session, request.resumeSession != 0);

    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    search::ModelTuneOptions o;
    o.trials = request.trials;
    o.perTask.batchSize = request.batch;
    o.perTask.search = request.search.toStdString();
    o.perTask.costModel = request.costModel.toStdString();
    o.perTask.evolution.population = request.population;
    o.perTask.hardware.cores = int(cores);
    o.perTask.measurer.build.jobs = int(cores);
    QString worker = request.workerPath;
    if (worker.isEmpty()) worker = QDir(QCoreApplication::applicationDirPath()).filePath("tessel-worker");
    o.perTask.measurer.run.workerPath = worker.toStdString();
    o.perTask.measurer.run.cacheState = request.cacheState;
    std::vector<std::unique_ptr<store::TuningRecorder>> recorders(tasks.size());
    int measuredTrials = 0;                            // this thread only
    std::vector<double> best(tasks.size(), INFINITY);  // per task, to report new bests
    o.prepareTask = [&](size_t i, search::TuneOptions& to) {
      recorders[i] = std::make_unique<store::TuningRecorder>(*db, tasks[i].task, session);
      recorders[i]->attach(to);
      for (const search::TuneRecord& r : to.previous)  // a resumed session's bests stand
        if (r.result.ok()) best[i] = std::min(best[i], r.result.medianCost());
      auto stored = to.onRecords;
      to.onRecords = [this, i, stored, &measuredTrials, &best](const std::vector<search::TuneRecord>& batch) {
        if (stored) stored(batch);
        measuredTrials += int(batch.size());
        QVector<double> predicted, measured;
        const search::TuneRecord* newBest = nullptr;
        for (const auto& r : batch) {
          predicted.push_back(r.predicted);
          measured.push_back(r.result.ok() ? r.result.medianCost() : std::nan(""));
          if (!r.result.ok())
            emit logMessage(QString("task %1: %2").arg(i).arg(QString::fromStdString(r.result.message).left(200)));
          else if (r.result.medianCost() < best[i])
            best[i] = r.result.medianCost(), newBest = &r;
        }
        emit programsMeasured(int(i), predicted, measured);
        if (newBest)
          emit bestProgramFound(int(i), QString::fromStdString(newBest->decisions),
                                QString::fromStdString(newBest->steps), best[i]);
      };
    };
    o.perTask.cancel = interrupt_;
    o.keepGoing = [this] { return waitWhilePaused(); };
    o.onRound = [&](size_t i, const search::TuneResult& r, double estimate) {
      emit roundFinished(int(i), r.trials, r.validTrials ? r.bestSeconds : std::nan(""),
                         std::isfinite(estimate) ? estimate : std::nan(""), measuredTrials);
    };
    search::ModelTuneResult result = search::tuneModel(tasks, o);
    db->endSession(session, result.stopped ? "stopped" : "finished");
    ok = true;
    message = result.stopped ? QString("stopped after %1 trials").arg(result.trials)
                             : QString("finished: %1 trials").arg(result.trials);
  } catch (const std::exception& e) {
    message = QString::fromStdString(e.what());
  }
  log(message);
  running_ = false;
  emit finished(ok, message);
}

}  // namespace tessel::ui
