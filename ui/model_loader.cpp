#include "ui/model_loader.h"

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
#include "ui/plots_panel.h"
#include "ui/search_space_view.h"
#include "ui/studio_settings.h"
#include "ui/tasks_panel.h"

namespace tessel::ui {

ModelLoader::ModelLoader(const target::Target& target, const StudioViews& views, std::function<bool()> tuningRunning,
                         QObject* parent)
    : QObject(parent), target_(target), views_(views), tuningRunning_(std::move(tuningRunning)) {}

void ModelLoader::open(const QString& model, const QString& fusion, const QString& inputShapes) {
  if (tuningRunning_()) {
    emit errorOccurred(tr("Cannot open %1").arg(model), tr("a tuning is running: stop it first"));
    return;
  }
  model_ = model;
  inputShapes_ = inputShapes;
  views_.log->appendMessage(inputShapes.isEmpty() ? tr("Model: %1").arg(model)
                                                  : tr("Model: %1, input shapes %2").arg(model, inputShapes));
  // Another model (or fusion): a reopened session no longer applies, unless
  // this is its model being opened for it.
  if (!pendingHistory_ || QString::fromStdString(pendingHistory_->session.subject) != model) pendingHistory_.reset();
  resumable_ = shown_ = 0;
  prepared_.reset();
  emit modelOpening(model);
  rememberModel(model);
  tasks_.clear();
  emit tasksChanged();
  views_.graph->clear();
  views_.space->clear();
  views_.code->clear();
  views_.status->showMessage(tr("Preparing %1...").arg(model));
  // Loading, folding and fusion take a while on big models: off the UI thread.
  const int generation = ++preparing_;
  using Prepared = std::pair<std::shared_ptr<const frontend::PreparedModel>, QString>;
  auto future = QtConcurrent::run([path = model.toStdString(), shapes = inputShapes.toStdString(),
                                   fusion = fusion.toStdString(), target = target_] {
    Prepared out;
    try {
      out.first = std::make_shared<const frontend::PreparedModel>(frontend::prepareModel(path, shapes, fusion, target));
    } catch (const std::exception& e) {
      out.second = QString::fromStdString(e.what());
    }
    return out;
  });
  auto* watcher = new QFutureWatcher<Prepared>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
    watcher->deleteLater();
    if (generation != preparing_) return;  // a newer model was opened
    auto [prepared, error] = watcher->result();
    onModelPrepared(prepared, error);
  });
  watcher->setFuture(future);
}

void ModelLoader::onModelPrepared(std::shared_ptr<const frontend::PreparedModel> model, const QString& error) {
  if (!model) {
    pendingHistory_.reset();  // its model did not open
    views_.status->showMessage(tr("Cannot open %1").arg(model_));
    emit errorOccurred(tr("Cannot open the model"), tr("%1: %2").arg(model_, error));
    emit modelFailed(error);
    return;
  }
  prepared_ = model;
  if (!inputShapes_.isEmpty()) rememberInputShapes(model_, inputShapes_);  // they opened it
  QVector<TaskInfo> infos;
  QStringList names;
  for (const fusion::GraphTask& t : model->tasks) {
    const QString label = QString::fromStdString(fusion::taskLabel(t));
    infos.push_back({QString::fromStdString(t.key), label, double(t.weight), t.flops, t.dag.compulsoryBytes()});
    names << label;
    tasks_.push_back(fusion::toSearchTask(t, target_));
  }
  emit tasksChanged();
  views_.tasks->model()->setTasks(infos);
  views_.plots->setTasks(names);
  views_.graph->setModel(model);
  // The nodes the graph view draws (after folding), as its header counts them.
  const size_t shown = model->graph.nodes.size();
  views_.log->appendMessage(tr("%1: %2 nodes%3, %4 tasks, %5 GFLOP")
                                .arg(QString::fromStdString(model->name))
                                .arg(shown)
                                .arg(model->nodes != shown
                                         ? tr(" (%1 as loaded; constants and batch norms folded)").arg(model->nodes)
                                         : QString())
                                .arg(model->tasks.size())
                                .arg(model->flops / 1e9, 0, 'f', 3));
  views_.status->showMessage(tr("%1 tasks; press Start to tune").arg(model->tasks.size()));
  emit modelReady();
  if (HistoryPtr h = std::exchange(pendingHistory_, nullptr))
    applyHistory(*h);
  else
    showStoredTuning();
}

void ModelLoader::setDatabase(const QString& database) {
  database_ = database;
  resumable_ = shown_ = 0;
  pendingHistory_.reset();
  showStoredTuning();  // what this database holds of the open model
}

QString ModelLoader::effectiveDatabase() const {
  return database_.isEmpty() ? QString::fromStdString(store::defaultDatabasePath()) : database_;
}

QString ModelLoader::checkDatabase(const QString& database) {
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

void ModelLoader::showStoredTuning() {
  if (!prepared_ || !QFileInfo::exists(effectiveDatabase())) return;
  const std::string path = effectiveDatabase().toStdString();
  const std::string model = prepared_->name, fusion = prepared_->fusion, shapes = inputShapes_.toStdString();
  const int generation = preparing_;
  // The model's last session tuned with the fusion and input shapes shown, read off the UI thread.
  auto future = QtConcurrent::run([path, model, fusion, shapes, target = target_.str()]() -> HistoryPtr {
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadOnly);
      int64_t last = 0;
      for (const store::SessionRow& s : db->sessions().all()) {
        const nlohmann::json config = nlohmann::json::parse(s.config, nullptr, false);
        if (s.kind == "model" && s.subject == model && s.records > 0 && config.is_object() &&
            config.value("fusion", "") == fusion && config.value("target", "") == target &&
            config.value("input_shapes", "") == shapes)
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
    if (!h || generation != preparing_ || !prepared_ || tuningRunning_()) return;
    views_.log->appendMessage(tr("%1 was tuned before in this database: showing its last session")
                                  .arg(QString::fromStdString(prepared_->name)));
    applyHistory(*h);
  });
  watcher->setFuture(future);
}

void ModelLoader::reopenSession(qint64 session) {
  const std::string path = effectiveDatabase().toStdString();
  views_.status->showMessage(tr("Reading session %1...").arg(session));
  using Read = std::pair<HistoryPtr, QString>;
  auto future = QtConcurrent::run([path, session]() -> Read {
    try {
      auto db = store::Database::open(path, store::OpenMode::ReadOnly);
      return {std::make_shared<const store::SessionHistory>(store::loadSessionHistory(*db, session)), {}};
    } catch (const std::exception& e) {
      return {nullptr, QString::fromStdString(e.what())};
    }
  });
  auto* watcher = new QFutureWatcher<Read>(this);
  connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, session] {
    watcher->deleteLater();
    auto [history, error] = watcher->result();
    onSessionRead(session, history, error);
  });
  watcher->setFuture(future);
}

void ModelLoader::onSessionRead(qint64 session, HistoryPtr history, const QString& error) {
  if (!history) {
    failReopen(session, error);
    return;
  }
  if (tuningRunning_()) {
    failReopen(session, tr("a tuning is running: stop it first"));
    return;
  }
  const store::SessionRow& row = history->session;
  if (row.kind != "model") {
    showOperatorSession(session, *history);
    return;
  }
  // The session's model, fused as it was tuned, then its history.
  const QString model = QString::fromStdString(row.subject);
  const QString fusion = QString::fromStdString(history->fusion.empty() ? "dp" : history->fusion);
  const QString shapes = QString::fromStdString(history->inputShapes);
  if (prepared_ && model_ == model && QString::fromStdString(prepared_->fusion) == fusion && inputShapes_ == shapes) {
    applyHistory(*history);
    return;
  }
  pendingHistory_ = history;
  emit fusionChosen(fusion);
  open(model, fusion, shapes);
}

// A session of one operator (tessel tune-op): its task alone, no graph.
void ModelLoader::showOperatorSession(qint64 session, const store::SessionHistory& history) {
  task::SearchTask task;
  const store::TaskRow& t = history.tasks.empty() ? store::TaskRow{} : history.tasks.front().task;
  try {
    if (history.tasks.empty()) throw std::runtime_error("the session has no record");
    task = store::operatorTaskOf(t);
  } catch (const std::exception& e) {
    failReopen(session, QString::fromStdString(e.what()));
    return;
  }
  ++preparing_;  // a model still being prepared is not wanted any more
  pendingHistory_.reset();
  model_.clear();
  prepared_.reset();
  views_.graph->clear();
  views_.space->clear();
  views_.code->clear();
  tasks_ = {task};
  emit tasksChanged();
  const QString name = QString::fromStdString(fusion::taskLabel(t.op, t.shape));
  views_.tasks->model()->setTasks({{QString::fromStdString(t.key), name, 1.0, t.flops, task.dag.compulsoryBytes()}});
  views_.plots->setTasks({name});
  applyHistory(history);
}

void ModelLoader::failReopen(qint64 session, const QString& message) {
  views_.status->clearMessage();  // not "Reading session..." any more
  emit errorOccurred(tr("Cannot reopen session %1").arg(session), message);
  emit sessionFailed(message);
}

void ModelLoader::applyHistory(const store::SessionHistory& h) {
  // The session's tasks where the open model has them (by workload key).
  QVector<int> taskOf;
  int missing = 0;
  for (const store::SessionTask& t : h.tasks) {
    int found = -1;
    for (size_t i = 0; i < tasks_.size(); ++i)
      if (tasks_[i].key == t.task.key) found = int(i);
    taskOf << found;
    missing += found < 0;
  }
  emit historyRead(h, taskOf);  // the tasks' trials, plots and bests as a live tuning reported them

  // Start resumes a model session whose tasks are all those shown; one of
  // another target, or fused otherwise than now, is shown only.
  const bool model = h.session.kind == "model";
  shown_ = model ? h.session.id : 0;
  resumable_ = model && h.target == target_.str() && missing == 0 ? h.session.id : 0;
  resumedTrials_ = int(h.programs.size());
  sessionStart_ = QDateTime::fromString(QString::fromStdString(h.session.started), Qt::ISODateWithMs);
  const QString subject = QString::fromStdString(h.session.subject);
  views_.log->appendMessage(tr("Reopened session %1 (%2, %3): %4 trials, %5 tasks")
                                .arg(h.session.id)
                                .arg(subject, QString::fromStdString(h.session.status))
                                .arg(h.programs.size())
                                .arg(h.tasks.size()));
  if (missing)
    views_.log->appendMessage(tr("%1 of the session's tasks are not tasks of %2 as it is fused now; they are not shown")
                                  .arg(missing)
                                  .arg(subject));
  const double estimate = h.rounds.empty() ? std::nan("") : h.rounds.back().estimateSeconds;
  views_.status->showMessage(std::isfinite(estimate)
                                 ? tr("Session %1: %2 trials, estimated end-to-end %3 ms")
                                       .arg(h.session.id)
                                       .arg(h.programs.size())
                                       .arg(estimate * 1e3, 0, 'f', 3)
                                 : tr("Session %1: %2 trials").arg(h.session.id).arg(h.programs.size()));
  emit sessionReopened(h.session.id);
}

void ModelLoader::beginSession() {
  resumedTrials_ = 0;
  sessionStart_ = QDateTime::currentDateTimeUtc();
}

void ModelLoader::endTuning(bool ok, int trials) {
  resumedTrials_ += trials;
  if (!ok) resumable_ = 0;
}

QStringList ModelLoader::recentModels() const {
  return studioSettings().value(kRecentModelsKey).toStringList();
}

QString ModelLoader::rememberedInputShapes(const QString& model) const {
  return studioSettings().value(kInputShapesKey).toMap().value(QFileInfo(model).absoluteFilePath()).toString();
}

void ModelLoader::rememberInputShapes(const QString& model, const QString& shapes) {
  if (!persistent_) return;
  QSettings settings = studioSettings();
  QVariantMap known = settings.value(kInputShapesKey).toMap();
  known.insert(QFileInfo(model).absoluteFilePath(), shapes);
  settings.setValue(kInputShapesKey, known);
}

void ModelLoader::rememberModel(const QString& model) {
  QStringList recent = recentModels();
  recent.removeAll(model);
  recent.prepend(model);
  while (recent.size() > 8)
    recent.removeLast();
  if (!persistent_) return;
  studioSettings().setValue(kRecentModelsKey, recent);
  emit recentModelsChanged();
}

}  // namespace tessel::ui
