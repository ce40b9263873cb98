// Tessel Studio's main window, its sessions part: reopening a stored session
// (from the sessions dialog, --reopen, or a model the database has tuned
// before) and showing its history as the live tuning showed it.
#include <QComboBox>
#include <QDateTime>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>
#include <cmath>
#include <nlohmann/json.hpp>

#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "store/database.h"
#include "store/session_history.h"
#include "store/task_rows.h"
#include "ui/code_view.h"
#include "ui/graph_view.h"
#include "ui/log_panel.h"
#include "ui/main_window.h"
#include "ui/plots_panel.h"
#include "ui/search_space_view.h"
#include "ui/tasks_panel.h"
#include "ui/tuning_session.h"

namespace tessel::ui {

void MainWindow::showStoredTuning() {
  if (!prepared_ || !QFileInfo::exists(effectiveDatabase())) return;
  const std::string path = effectiveDatabase().toStdString();
  const std::string model = prepared_->name, fusion = prepared_->fusion;
  const int generation = preparing_;
  // The model's last session tuned with the fusion shown, read off the UI thread.
  auto future = QtConcurrent::run([path, model, fusion, target = target_.str()]() -> HistoryPtr {
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadOnly);
      int64_t last = 0;
      for (const store::SessionRow& s : db->sessions().all()) {
        const nlohmann::json config = nlohmann::json::parse(s.config, nullptr, false);
        if (s.kind == "model" && s.subject == model && s.records > 0 && config.is_object() &&
            config.value("fusion", "") == fusion && config.value("target", "") == target)
          last = s.id;
      }
      if (!last) return nullptr;
      return std::make_shared<const store::SessionHistory>(store::loadSessionHistory(*db, last));
    } catch (const std::exception&) {
      return nullptr;  // an unreadable database is reported when it is used
    }
  });
  auto* watcher = new QFutureWatcher<HistoryPtr>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    HistoryPtr h = watcher->result();
    if (!h || generation != preparing_ || !prepared_ || session_->isRunning() || tuning_) return;
    log_->appendMessage(tr("%1 was tuned before in this database: showing its last session")
                            .arg(QString::fromStdString(prepared_->name)));
    applyHistory(*h);
  });
  watcher->setFuture(future);
}

void MainWindow::reopenSession(qint64 session) {
  const std::string path = effectiveDatabase().toStdString();
  statusBar()->showMessage(tr("Reading session %1...").arg(session));
  auto future = QtConcurrent::run([path, session]() -> std::pair<HistoryPtr, QString> {
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadOnly);
      return {std::make_shared<const store::SessionHistory>(store::loadSessionHistory(*db, session)), {}};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what())};
    }
  });
  auto* watcher = new QFutureWatcher<std::pair<HistoryPtr, QString>>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, session] {
    watcher->deleteLater();
    auto [history, error] = watcher->result();
    if (!history) {
      failReopen(session, error);
      return;
    }
    if (session_->isRunning()) {
      failReopen(session, tr("a tuning is running: stop it first"));
      return;
    }
    const store::SessionRow& row = history->session;
    if (row.kind == "model") {
      // The session's model, fused as it was tuned, then its history.
      const QString model = QString::fromStdString(row.subject);
      const QString fusion = QString::fromStdString(history->fusion.empty() ? "dp" : history->fusion);
      if (prepared_ && model_ == model && QString::fromStdString(prepared_->fusion) == fusion) {
        applyHistory(*history);
        return;
      }
      pendingHistory_ = history;
      {
        const QSignalBlocker quiet(fusionBox_);  // no re-fuse of the current model
        fusionBox_->setCurrentText(fusion);
      }
      setModelPath(model);
      return;
    }
    // A session of one operator (tessel tune-op): its task alone, no graph.
    task::SearchTask task;
    const store::TaskRow& t = history->tasks.empty() ? store::TaskRow{} : history->tasks.front().task;
    try {
      if (history->tasks.empty()) throw std::runtime_error("the session has no record");
      task = store::operatorTaskOf(t);
    } catch (const std::exception& e) {
      failReopen(session, QString::fromStdString(e.what()));
      return;
    }
    ++preparing_;  // a model still being prepared is not wanted any more
    pendingHistory_.reset();
    model_.clear();
    prepared_.reset();
    graph_->clear();
    space_->clear();
    code_->clear();
    selected_ = -1;
    searchTasks_ = {task};
    best_ = QVector<BestProgram>(1);
    const QString name = QString::fromStdString(fusion::taskLabel(t.op, t.shape));
    tasks_->model()->setTasks({{QString::fromStdString(t.key), name, 1.0, t.flops}});
    plots_->setTasks({name});
    updateTitle();
    applyHistory(*history);
  });
  watcher->setFuture(future);
}

void MainWindow::failReopen(qint64 session, const QString& message) {
  statusBar()->clearMessage();  // not "Reading session..." any more
  showError(tr("Cannot reopen session %1").arg(session), message);
  emit sessionFailed(message);
}

void MainWindow::applyHistory(const store::SessionHistory& h) {
  // The session's tasks where the open model has them (by workload key).
  QVector<int> index;
  int missing = 0;
  for (const store::SessionTask& t : h.tasks) {
    int found = -1;
    for (size_t i = 0; i < searchTasks_.size(); ++i)
      if (searchTasks_[i].key == t.task.key) found = int(i);
    index << found;
    missing += found < 0;
  }
  // Fresh tasks panel and plots, then the history as a live tuning reported it.
  QVector<TaskInfo> infos;
  for (int i = 0; i < tasks_->model()->rowCount(); ++i)
    infos << tasks_->model()->task(i);
  tasks_->model()->setTasks(infos);
  plots_->clear();
  best_ = QVector<BestProgram>(int(searchTasks_.size()));
  for (const store::SessionRound& r : h.rounds) {
    const int task = index[int(r.task)];
    if (task < 0) continue;
    tasks_->model()->updateTask(task, r.taskTrials, r.bestSeconds);
    plots_->addRound(task, r.taskTrials, r.bestSeconds, r.estimateSeconds, r.elapsedSeconds);
  }
  QVector<int> programTask;
  QVector<double> predicted, measured;
  for (const store::SessionProgram& p : h.programs) {
    if (index[int(p.task)] < 0) continue;
    programTask << index[int(p.task)];
    predicted << p.predicted;
    measured << p.seconds;
  }
  plots_->addProgramsBulk(programTask, predicted, measured);
  for (size_t i = 0; i < h.tasks.size(); ++i)
    if (index[int(i)] >= 0 && h.tasks[i].best) {
      const store::RecordRow& b = *h.tasks[i].best;
      best_[index[int(i)]] = {QString::fromStdString(b.decisions), QString::fromStdString(b.steps), b.medianCost()};
    }
  const double estimate = h.rounds.empty() ? std::nan("") : h.rounds.back().estimateSeconds;
  refreshShares(estimate);

  // Start resumes a model session whose tasks are all those shown; one of
  // another target, or fused otherwise than now, is shown only.
  resumable_ = h.session.kind == "model" && h.target == target_.str() && missing == 0 ? h.session.id : 0;
  resumedTrials_ = int(h.programs.size());
  sessionStart_ = QDateTime::fromString(QString::fromStdString(h.session.started), Qt::ISODateWithMs);
  const QString subject = QString::fromStdString(h.session.subject);
  log_->appendMessage(tr("Reopened session %1 (%2, %3): %4 trials, %5 tasks")
                          .arg(h.session.id)
                          .arg(subject, QString::fromStdString(h.session.status))
                          .arg(h.programs.size())
                          .arg(h.tasks.size()));
  if (missing)
    log_->appendMessage(tr("%1 of the session's tasks are not tasks of %2 as it is fused now; they are not shown")
                            .arg(missing)
                            .arg(subject));
  statusBar()->showMessage(std::isfinite(estimate)
                               ? tr("Session %1: %2 trials, estimated end-to-end %3 ms")
                                     .arg(h.session.id)
                                     .arg(h.programs.size())
                                     .arg(estimate * 1e3, 0, 'f', 3)
                               : tr("Session %1: %2 trials").arg(h.session.id).arg(h.programs.size()));
  updateActions();
  showStoredRun(h);  // its latest run against LibTorch, if it has one
  selectTask(selected_ >= 0 ? selected_ : 0);
  emit sessionReopened(h.session.id);
}

}  // namespace tessel::ui
