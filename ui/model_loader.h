// The model Tessel Studio has open, and the stored sessions of it. It
// prepares a model (frontend::prepareModel: loaded, folded, fused, cut into
// tasks) on a worker thread, the latest request winning (a generation
// counter), and fills the graph, tasks and plots with it; it reopens a
// stored session of the database (read on a worker thread; a model's is
// opened fused as it was tuned, an operator's shows its one task), and shows
// the open model's last stored session when the database has one. It keeps
// the session Start resumes and the models opened recently. The rounds of a
// session read are replayed by the tuning controller (historyRead); what
// the window does around it follows its signals.
#pragma once

#include <QDateTime>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QVector>
#include <functional>
#include <memory>
#include <vector>

#include "target/target.h"
#include "task/search_task.h"
#include "ui/studio_views.h"

namespace tessel::frontend {
struct PreparedModel;
}
namespace tessel::store {
struct SessionHistory;
}

namespace tessel::ui {

class ModelLoader : public QObject {
  Q_OBJECT

 public:
  // QSettings key of the models opened before, newest first (at most 8).
  static constexpr const char* kRecentModelsKey = "recentModels";
  // QSettings key of the input shapes files opened well with (path -> shapes).
  static constexpr const char* kInputShapesKey = "modelInputShapes";

  // `tuningRunning` says whether a tuning runs: while one does, the model
  // and its session stay as they are (open and reopen are refused, a stored
  // tuning is not shown over it).
  ModelLoader(const target::Target& target, const StudioViews& views, std::function<bool()> tuningRunning,
              QObject* parent = nullptr);

  // Opens `model` (zoo name or file) fused with `fusion` ("dp", "rule",
  // "none"), its inputs shaped by `inputShapes` (as --input-shapes: a .pt
  // needs them, a .onnx's symbolic dimensions follow them; "": none):
  // prepared on a worker thread, then shown; modelReady or modelFailed
  // (with errorOccurred) follows, then the database's last session of it
  // tuned with those shapes, if any. Refused (errorOccurred) while a tuning
  // runs.
  void open(const QString& model, const QString& fusion, const QString& inputShapes);
  QString modelPath() const { return model_; }
  // The input shapes the model was opened with ("": none given).
  QString inputShapes() const { return inputShapes_; }
  // The shapes a file opened well with last time (QSettings, by absolute
  // path; "" if none).
  QString rememberedInputShapes(const QString& model) const;
  // The target models are prepared for (their image layouts follow it) and
  // stored sessions are matched with. Another one applies from the next
  // open(): the window opens the model again, as after another fusion.
  const target::Target& target() const { return target_; }
  void setTarget(const target::Target& target) { target_ = target; }
  // The prepared model (null until modelReady, and for an operator's session).
  std::shared_ptr<const frontend::PreparedModel> prepared() const { return prepared_; }
  // The tasks shown: the open model's, or a reopened operator session's one.
  const std::vector<task::SearchTask>& tasks() const { return tasks_; }

  // The database sessions are read from ("": the CLI's default). Another
  // database forgets the session shown, the one to resume and one waiting
  // for its model, and shows what it holds of the open model.
  void setDatabase(const QString& database);
  QString database() const { return database_; }
  // The database in use: the one set, else the CLI's default ($TESSEL_DB,
  // else ~/.local/share/tessel/tessel.db).
  QString effectiveDatabase() const;
  // Why a file cannot be used as the database ("" if it can: missing, empty
  // or a readable Tessel database).
  static QString checkDatabase(const QString& database);
  // Reads a session on a worker thread and shows it: a model's session with
  // its model (opened with the session's fusion: fusionChosen), an
  // operator's with its task alone. sessionReopened, or sessionFailed with
  // errorOccurred, follows.
  void reopenSession(qint64 session);

  // The model session shown (tuned or reopened), that runs are stored with (0: none).
  qint64 shownSession() const { return shown_; }
  // The session Start resumes (0: Start begins a new one), its trials so
  // far, and when it began (UTC; the plots' time origin).
  qint64 resumableSession() const { return resumable_; }
  int resumedTrials() const { return resumedTrials_; }
  QDateTime sessionStart() const { return sessionStart_; }
  // A tuning begins a new session: no trials yet, its time starts now.
  void beginSession();
  // The tuning records into `session`: Start after a stop goes on with it,
  // and it is the session shown.
  void continueSession(qint64 session) { resumable_ = shown_ = session; }
  // The tuning ended having measured `trials`; after a failure (the
  // database busy, say) Start begins a new session.
  void endTuning(bool ok, int trials);

  // Models opened before, newest first (QSettings, at most 8).
  QStringList recentModels() const;
  // false: nothing is written to QSettings.
  void setPersistent(bool persistent) { persistent_ = persistent; }

 signals:
  // open() began: the previous model is gone, `model` is being prepared.
  void modelOpening(const QString& model);
  // tasks() changed (cleared, the prepared model's, an operator's one).
  void tasksChanged();
  void modelReady();
  void modelFailed(const QString& message);
  // The fusion a reopened session's model is opened with (the window's box shows it).
  void fusionChosen(const QString& fusion);
  // A session read, to show as a live tuning reported it; taskOf maps its
  // tasks to tasks() (-1: not a task of the model as it is fused now).
  void historyRead(const store::SessionHistory& history, const QVector<int>& taskOf);
  // After the session's history is shown; resumableSession() says whether Start resumes it.
  void sessionReopened(qint64 session);
  void sessionFailed(const QString& message);
  void recentModelsChanged();
  // Something the user asked for failed: the window shows it in a dialog.
  void errorOccurred(const QString& title, const QString& message);

 private:
  using HistoryPtr = std::shared_ptr<const store::SessionHistory>;
  // The open model's last session in the database (same fusion and target),
  // if any, shown as a reopened one: its trials, bests and estimate.
  void showStoredTuning();
  void onModelPrepared(std::shared_ptr<const frontend::PreparedModel> model, const QString& error);
  void onSessionRead(qint64 session, HistoryPtr history, const QString& error);
  void showOperatorSession(qint64 session, const store::SessionHistory& history);
  // A session that cannot be reopened: the status bar is cleared, errorOccurred and sessionFailed say why.
  void failReopen(qint64 session, const QString& message);
  void applyHistory(const store::SessionHistory& history);
  void rememberModel(const QString& model);
  void rememberInputShapes(const QString& model, const QString& shapes);

  target::Target target_;
  const StudioViews views_;
  const std::function<bool()> tuningRunning_;
  QString model_;
  QString inputShapes_;
  QString database_;
  std::shared_ptr<const frontend::PreparedModel> prepared_;
  std::vector<task::SearchTask> tasks_;
  HistoryPtr pendingHistory_;  // shown once its model is open
  int preparing_ = 0;          // generation of the latest open()
  qint64 shown_ = 0;
  qint64 resumable_ = 0;
  int resumedTrials_ = 0;  // trials of the resumable session before the next tuning
  QDateTime sessionStart_;
  bool persistent_ = true;
};

}  // namespace tessel::ui
