// The studio's Run, end to end: starts `tessel run` (ModelRun) for the model
// shown, shows its result in the Run panel and its partitions' measured
// share as the graph's heat, writes the log, and keeps each finished run in
// the database with the session shown (store/run_store.h; written and read
// off the UI thread). A session shown again gets its latest stored run back.
#pragma once

#include <QObject>
#include <QString>

#include "ui/model_run.h"

namespace tessel::ui {

class GraphView;
class LogPanel;
class RunPanel;

class RunController : public QObject {
  Q_OBJECT

 public:
  RunController(RunPanel* panel, GraphView* graph, LogPanel* log, QObject* parent = nullptr);

  ModelRun* process() const { return run_; }
  bool isRunning() const { return run_->isRunning(); }
  // Starts a run (false if one is running); runFinished follows.
  bool start(const RunRequest& request);
  // Kills the run in flight; runFinished(false, ...) follows. `why` goes to the log.
  void cancel(const QString& why);
  // The panel empty (another model or database): a stored run still being
  // read is dropped.
  void clear();
  // Reads the latest run stored with `session` in `database` off the UI
  // thread and shows it, or clears the panel when it has none;
  // storedRunShown follows (0: none).
  void showStoredRun(const QString& database, qint64 session);

 signals:
  void runningChanged(bool running);
  // After the panel shows the run's end.
  void runFinished(bool ok, const QString& message);
  // A finished run written to the database (its id), or why it was not (id 0).
  void runStored(qint64 run, const QString& error);
  void storedRunShown(qint64 run);

 private:
  void onFinished(const RunResult& result);
  void onFailed(const QString& message);
  void store(const RunResult& result);
  void showHeat(const RunResult& result);

  RunPanel* panel_;
  GraphView* graph_;
  LogPanel* log_;
  ModelRun* run_;
  // Of what the panel shows: a stored run read, or a run, that ends after
  // something newer was shown is not shown.
  int generation_ = 0;
  int runGeneration_ = 0;  // the run in flight's
};

}  // namespace tessel::ui
