// The studio's one adapter to the core: runs a model's tuning (its own
// database connection, Ansor's task scheduler) on a worker thread and turns
// its events into Qt signals, delivered on the UI thread. Pause and stop
// take effect at once: the round in flight is abandoned (its compilers and
// the kernel being measured are killed, nothing of it is recorded), and a
// paused round is tuned again on resume.
#pragma once

#include <QObject>
#include <QString>
#include <QVector>
#include <atomic>
#include <condition_variable>
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
  bool isPaused() const { return paused_; }

 signals:
  void tasksReady(const QVector<tessel::ui::TaskInfo>& tasks);
  // After each measured round: the task, its trials and best latency, the
  // estimated end-to-end latency (NaN while a task has no valid program),
  // and the trials of the whole model so far.
  void roundFinished(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials);
  // The round's programs: the cost model's score and the measured seconds (NaN when it failed).
  void programsMeasured(int task, const QVector<double>& predicted, const QVector<double>& measuredSeconds);
  // A task's new best program: its serialised decisions and steps, and its seconds.
  void bestProgramFound(int task, const QString& decisions, const QString& steps, double seconds);
  // The database session the tuning records into (new or resumed).
  void sessionStarted(qint64 session, bool resumed);
  void logMessage(const QString& text);
  void finished(bool ok, const QString& message);

 private:
  void run(TuningRequest request);
  bool waitWhilePaused();  // false once stopped

  std::thread thread_;
  std::atomic<bool> running_{false}, paused_{false}, stop_{false};
  // Set by pause and stop: cuts the round in flight short (TuneOptions::cancel).
  std::shared_ptr<std::atomic<bool>> interrupt_ = std::make_shared<std::atomic<bool>>(false);
  std::mutex mutex_;
  std::condition_variable wake_;
};

}  // namespace tessel::ui

Q_DECLARE_METATYPE(tessel::ui::TaskInfo)
