// A tuning of the model Tessel Studio has open, from Start to its end. It
// builds the request (the toolbar's choices, the loader's model, the
// session to resume, the trial and time budgets), starts, pauses, resumes
// and stops it (TuningSession, on a worker thread), shows each round as it
// comes (the tasks' trials, the plots, the graph's shares, the progress bar,
// the rate and time left, the status bar) and keeps each task's best
// program. A stored session the loader reads is replayed into the same
// views, as the live tuning showed it.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QVector>

#include "ui/studio_views.h"
#include "ui/tuning_dialog.h"

namespace tessel::store {
struct SessionHistory;
}

namespace tessel::ui {

class ModelLoader;
class TuningSession;
struct TuningRequest;

// What the toolbar chose for the next tuning, as `tessel tune` takes it.
struct TuningChoices {
  QString fusion;         // dp, rule or none
  QString costModel;      // "": the knowledge base's pre-trained model
  QString costModelFile;  // a trained model to start from ("": a fresh one)
  bool warmStart = true;  // false: --cold
  QString measure;        // "local" (or ""), or a fleet's Redis URL
  TuningDetails details;  // the Options dialog's (its time budget is the controller's)
};

class TuningController : public QObject {
  Q_OBJECT

 public:
  // A task's best program known to the studio (from the tuning or a reopened session).
  struct BestProgram {
    QString decisions, steps;
    double seconds = 0;  // 0: none
  };

  // Tunes what `loader` has open, for its target; replays the sessions it reads.
  TuningController(ModelLoader* loader, const StudioViews& views, QObject* parent = nullptr);

  TuningSession* session() const { return session_; }
  // The tuning thread runs (until its end is delivered).
  bool isRunning() const;
  bool isPaused() const;
  // From start() to the handling of the tuning's end.
  bool isTuning() const { return tuning_ || isRunning(); }
  // A model is open and no tuning runs.
  bool canStart() const;
  // Starts (or, after a reopened or stopped session of the model, resumes)
  // a tuning with `choices`; false if it did not start: nothing to tune, or
  // `refused` says why (a measure URL that does not parse).
  bool start(const TuningChoices& choices, QString* refused);
  void togglePause();
  void stop();
  // Stop was pressed during the tuning in progress (or the last one).
  bool stopRequested() const { return stopRequested_; }

  // Trials of the next tuning (the toolbar's budget).
  void setTrialBudget(int trials) { trialBudget_ = trials; }
  int trialBudget() const { return trialBudget_; }
  // A wall-clock budget beside the trials (minutes; 0: none), as `tessel
  // tune --minutes`: no round starts once it is spent.
  void setTimeBudget(double minutes) { timeBudgetMinutes_ = minutes; }
  double timeBudget() const { return timeBudgetMinutes_; }

  BestProgram bestProgram(int task) const { return best_.value(task); }
  // The database session whose programs the plots show: the tuning's, or
  // the reopened one (0: none), which the program inspector reads.
  qint64 plottedSession() const { return plottedSession_; }

 signals:
  // The request is made from the choices, and the tuning thread starts next.
  void starting();
  // Started, paused or resumed: the window's actions follow.
  void stateChanged();
  // The database session the tuning records into (new or resumed).
  void sessionStarted(qint64 session);
  // bestProgram(task) changed during the tuning.
  void bestProgramChanged(int task);
  // The controller has taken in the end of a tuning (after every round it reported).
  void finished(bool ok, const QString& message);
  void errorOccurred(const QString& title, const QString& message);

 private:
  // The tuning's request from the choices; false (with `refused`) if where to measure does not parse.
  bool makeRequest(const TuningChoices& choices, TuningRequest& request, QString* refused) const;
  void onRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, int totalTrials);
  void onBestProgram(int task, const QString& decisions, const QString& steps, double seconds);
  void onSessionStarted(qint64 session, bool resumed);
  void onFinished(bool ok, const QString& message);
  // The tasks panel with no trials, as a new session starts.
  void clearTrials();
  // The graph's heat: each task's share of the estimate (none while there is no estimate).
  void refreshShares(double estimateSeconds);
  void showHistory(const store::SessionHistory& history, const QVector<int>& taskOf);

  ModelLoader* const loader_;
  const StudioViews views_;
  TuningSession* session_;
  QVector<BestProgram> best_;  // per task of the loader's
  int trialBudget_ = 256;
  double timeBudgetMinutes_ = 0;
  bool tuning_ = false;         // from start() to the handling of its end
  bool stopRequested_ = false;  // Stop was pressed during the tuning in progress
  int runTrials_ = 0;           // trials measured by the tuning in progress
  qint64 plottedSession_ = 0;
  QElapsedTimer clock_;
};

}  // namespace tessel::ui
