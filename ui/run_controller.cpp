#include "ui/run_controller.h"

#include <QDateTime>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <memory>
#include <utility>

#include "store/database.h"
#include "store/run_store.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/run_panel.h"

namespace tessel::ui {

namespace {

struct StoredRun {
  store::RunRow row;
  QString error;
};

}  // namespace

RunController::RunController(RunPanel* panel, GraphView* graph, LogPanel* log, QObject* parent)
    : QObject(parent), panel_(panel), graph_(graph), log_(log), run_(new ModelRun(this)) {
  connect(run_, &ModelRun::finished, this, &RunController::onFinished);
  connect(run_, &ModelRun::failed, this, &RunController::onFailed);
}

bool RunController::start(const RunRequest& request) {
  if (run_->isRunning()) return false;
  runGeneration_ = ++generation_;  // a stored run still being read must not replace this one
  panel_->showRunning(tr("Running %1 against LibTorch (%2 repeats each)...").arg(request.model).arg(request.repeats));
  log_->appendMessage(tr("Run: %1").arg(run_->commandLine(request)));
  run_->start(request);  // its end (a failure to start too) follows in onFinished or onFailed
  if (run_->isRunning()) emit runningChanged(true);  // not if it failed already
  return true;
}

void RunController::cancel(const QString& why) {
  if (!run_->isRunning()) return;
  log_->appendMessage(tr("Stopping the run: %1").arg(why));
  run_->cancel();
}

void RunController::clear() {
  ++generation_;
  panel_->clear(tr("Not run yet: Run (Ctrl+R) runs the tuned model against LibTorch"));
  graph_->setMeasuredShares({});
}

void RunController::onFinished(const RunResult& r) {
  // Shown unless the panel moved on meanwhile (another model: the run was stopped).
  if (generation_ == runGeneration_) {
    panel_->showResult(r, QDateTime::currentDateTimeUtc(), run_->request().session, 0);
    showHeat(r);
  }
  log_->appendMessage(tr("Run of %1: Tessel %2 ms, LibTorch %3 ms (medians of %4): %5x LibTorch's speed, %6")
                          .arg(run_->request().model)
                          .arg(r.tesselMs, 0, 'f', 3)
                          .arg(r.libtorchMs, 0, 'f', 3)
                          .arg(r.repeats)
                          .arg(r.speedup, 0, 'f', 2)
                          .arg(r.correct ? tr("correct") : tr("WRONG (largest difference %1)").arg(r.maxAbsErr)));
  if (r.disturbed)
    log_->appendMessage(tr("Run disturbed: another process had the cores: do not read this ratio as a speed-up (%1)")
                            .arg(r.disturbance));
  emit runningChanged(false);
  store(r);
  emit runFinished(true, tr("Tessel %1 ms, LibTorch %2 ms").arg(r.tesselMs, 0, 'f', 3).arg(r.libtorchMs, 0, 'f', 3));
}

void RunController::onFailed(const QString& message) {
  if (generation_ == runGeneration_) {
    panel_->showError(message);
    graph_->setMeasuredShares({});
  }
  log_->appendMessage(tr("Run failed: %1").arg(message));
  emit runningChanged(false);
  emit runFinished(false, message);
}

void RunController::showHeat(const RunResult& r) {
  graph_->setMeasuredShares(r.groupShares());
  graph_->setHeatMode(GraphView::HeatMode::Measured);
}

void RunController::store(const RunResult& r) {
  const RunRequest& request = run_->request();
  store::RunRow row;
  row.sessionId = request.session;
  row.model = request.model.toStdString();
  row.target = request.target.toStdString();
  row.fusion = request.fusion.toStdString();
  row.result = r.json.toStdString();
  const std::string path = request.database.toStdString();
  const int generation = generation_;
  // Opening for writing checks the file and takes the writer lock: off the UI thread.
  auto future = QtConcurrent::run([path, row]() -> std::pair<qint64, QString> {
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadWrite);
      return {db->runs().add(row), {}};
    } catch (const std::exception& e) {
      return {0, QString::fromStdString(e.what())};
    }
  });
  auto* watcher = new QFutureWatcher<std::pair<qint64, QString>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    const auto [id, error] = watcher->result();
    if (id)
      log_->appendMessage(tr("Run stored in the database as run %1").arg(id));
    else
      log_->appendMessage(tr("The run was not stored: %1").arg(error));
    if (generation == generation_) panel_->setStored(id, error);
    emit runStored(id, error);
  });
  watcher->setFuture(future);
}

void RunController::showStoredRun(const QString& database, qint64 session) {
  const int generation = ++generation_;
  const std::string path = database.toStdString();
  auto future = QtConcurrent::run([path, session]() -> StoredRun {
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadOnly);
      if (auto row = db->runs().latestOfSession(session)) return {*row, {}};
      return {};
    } catch (const std::exception& e) {
      return {{}, QString::fromStdString(e.what())};
    }
  });
  auto* watcher = new QFutureWatcher<StoredRun>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation, session] {
    watcher->deleteLater();
    if (generation != generation_ || run_->isRunning()) return;  // something newer is shown
    const StoredRun stored = watcher->result();
    QString error = stored.error;
    std::optional<RunResult> result;
    if (stored.row.id) result = parseRunJson(QByteArray::fromStdString(stored.row.result), &error);
    if (!result) {
      if (!error.isEmpty()) log_->appendMessage(tr("Cannot show the session's last run: %1").arg(error));
      panel_->clear(
          tr("Session %1 has no stored run: Run (Ctrl+R) runs the tuned model against LibTorch").arg(session));
      graph_->setMeasuredShares({});
      emit storedRunShown(0);
      return;
    }
    const QDateTime taken = QDateTime::fromString(QString::fromStdString(stored.row.created), Qt::ISODateWithMs);
    panel_->showResult(*result, taken, session, stored.row.id);
    showHeat(*result);
    log_->appendMessage(tr("Showing run %1 of session %2, taken %3")
                            .arg(stored.row.id)
                            .arg(session)
                            .arg(QString::fromStdString(stored.row.created)));
    emit storedRunShown(stored.row.id);
  });
  watcher->setFuture(future);
}

}  // namespace tessel::ui
