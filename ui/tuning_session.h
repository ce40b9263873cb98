// The studio's one adapter to the core: runs tuning::ModelTuning on a worker
// thread and turns its events into Qt signals, delivered on the UI thread.
// Pause and stop take effect at once: the round in flight is abandoned (its
// compilers and the kernel being measured are killed, nothing of it is
// recorded), and a paused round is tuned again on resume.
// Threads: start/pause/resume/stop and isRunning/isPaused are for the UI
// thread. The pause and stop flags change under the mutex the tuning thread
// waits with, so neither a wake-up nor a pause that lands while a round
// starts is lost; isRunning() is the UI thread's own state, cleared when
// the finished signal is delivered.
#pragma once

#include <QObject>
#include <QString>
#include <QVector>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "tuning/tuning_config.h"

namespace tessel::frontend {
struct PreparedModel;
}

namespace tessel::ui {

struct TuningRequest {
  // As `tessel tune` takes it; command "studio". An empty workerPath is
  // tessel-worker beside the running executable.
  tuning::TuningConfig config = studioConfig();
  QString database;  // SQLite file (created if missing)
  // A model session of this model to continue (0: a new session).
  qint64 resumeSession = 0;
  // The model as the window prepared it (same fusion and target): not
  // prepared a second time. Null: prepared on the tuning thread.
  std::shared_ptr<const frontend::PreparedModel> prepared;

  static tuning::TuningConfig studioConfig() {
    tuning::TuningConfig c;
    c.command = "studio";
    return c;
  }
};

struct TaskInfo {
  QString key, name;
  double weight = 0, flops = 0;
  double bytes = 0;  // compulsory traffic of one run (te::ComputeDAG::compulsoryBytes; 0: unknown)
};

class TuningSession : public QObject {
  Q_OBJECT

 public:
  explicit TuningSession(QObject* parent = nullptr);
  ~TuningSession() override;  // stops the tuning and waits for the thread

  // Starts on a worker thread and returns at once (false if one is running).
  bool start(const TuningRequest& request);
  void pause();
  void resume();
  void stop();
  bool isRunning() const { return running_; }
  bool isPaused() const;
  // Tests only: called by the tuning thread inside its locked check of the
  // pause and stop flags, where a race would need a resume (before it
  // waits) or a pause (before it starts the next round) to slip in.
  enum class RaceWindow { BeforeWait, BeforeGoingOn };
  void setRaceWindowForTesting(std::function<void(RaceWindow)> hook) { raceWindow_ = std::move(hook); }

 signals:
  void tasksReady(const QVector<tessel::ui::TaskInfo>& tasks);
  // After each measured round: the task, its trials and best latency, the
  // estimated end-to-end latency (NaN while a task has no valid program),
  // and the trials of the whole model so far.
  void roundFinished(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials);
  // The round's programs: the cost model's score and the measured seconds
  // (NaN when it failed); `untrained`: the scores came from a model that had
  // learned nothing yet (neither loaded trained nor updated).
  void programsMeasured(int task, const QVector<double>& predicted, const QVector<double>& measuredSeconds,
                        bool untrained);
  // A task's new best program: its serialised decisions and steps, and its seconds.
  void bestProgramFound(int task, const QString& decisions, const QString& steps, double seconds);
  // The database session the tuning records into (new or resumed).
  void sessionStarted(qint64 session, bool resumed);
  void logMessage(const QString& text);
  // What the tuning starts from, before its first round (its one-line summary:
  // "started from 1,204 stored programs of 14 similar tasks: ...", or why cold).
  void warmStarted(bool warm, const QString& summary);
  // On the UI thread, once the tuning thread has ended (isRunning() is false).
  void finished(bool ok, const QString& message);
  // From the tuning thread as its last act; turned into finished() on the UI thread.
  void runEnded(bool ok, const QString& message, QPrivateSignal);

 private:
  void run(TuningRequest request);
  bool waitWhilePaused();  // on the tuning thread; false once stopped
  void onRunEnded(bool ok, const QString& message);

  std::thread thread_;
  bool running_ = false;  // UI thread only
  // Guarded by mutex_; the tuning thread waits on wake_ for them.
  bool paused_ = false, stop_ = false;
  // Set by pause and stop (under mutex_): cuts the round in flight short
  // (TuneOptions::cancel); cleared by the tuning thread only when it goes on.
  std::shared_ptr<std::atomic<bool>> interrupt_ = std::make_shared<std::atomic<bool>>(false);
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void(RaceWindow)> raceWindow_;
};

}  // namespace tessel::ui

Q_DECLARE_METATYPE(tessel::ui::TaskInfo)
