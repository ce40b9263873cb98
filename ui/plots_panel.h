// The studio's live plots (QCustomPlot):
//  - best latency (ms) against trials: the selected task, or every task
//    when none is selected, as step lines (log y by default);
//  - estimated end-to-end latency (ms) against wall time (s);
//  - the cost model's predicted score against measured throughput, with
//    the diagonal and Spearman's rho (with its 95 % interval);
//  - that rho round by round (ui/model_quality_plot.h), in a tab beside
//    the scatter.
//
// Scatter semantics. The cost model's job is to rank a task's programs
// (higher score = faster), and its scores may crowd together (a model's
// scores of 0.97 to 1.0 would put every point at x = 1 on a ratio scale), so
// both axes are ranks within the task, as fractions (0 the task's worst,
// 1 its best; ties share their average rank):
//   x = rank of the predicted score, y = rank of the measured throughput.
// y = x is a perfect ranking and is drawn as a line, tasks are comparable
// when all are shown, and Spearman's rho is exactly what the plot shows.
// Programs with a non-finite (failed) or non-positive measurement or a
// non-finite prediction are left out. Scores of an untrained model (the
// first round of a cold start) say nothing of the model: they are drawn
// grey, ranked among themselves, and left out of rho. A trained model that
// ranks a task's programs worse than chance over its last rounds
// (model_quality.h) is flagged in the rounds plot and by modelFlagged.
//
// Updates are batched: data calls only record the data and mark plots dirty;
// a single-shot timer (kReplotIntervalMs) rebuilds and replots the dirty
// ones with QCustomPlot::rpQueuedReplot. The timer is started when the first
// change arrives and is not restarted by later ones, so a steady stream of
// updates still redraws about 4 times a second instead of never. The
// contents of the QCustomPlot graphs are those of the last replot;
// rankCorrelation() and scatterPointCount() are always current.
//
// Every program knows its place in its task's session (its ordinal: the
// session's first program of the task is 0, failed ones counted), so a
// click on a point of the scatter, or on a round of the best-latency curve
// (the best program after that many trials), names the program it stands
// for: programPicked, which the window opens in the program inspector.
#pragma once

#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>
#include <vector>

#include "ui/model_quality.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QCPGraph;
class QCPTextElement;
class QSplitter;
class QTabWidget;

namespace tessel::ui {

class ModelQualityPlot;

// A task's measured program: its task and ordinal in the session (-1: none).
struct PickedProgram {
  int task = -1, ordinal = -1;
  bool valid() const { return task >= 0 && ordinal >= 0; }
};

class PlotsPanel : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kReplotIntervalMs = 250;

  explicit PlotsPanel(QWidget* parent = nullptr);
  ~PlotsPanel() override;

  void setTasks(const QStringList& taskNames);  // clears everything, selects all tasks (-1)
  QStringList tasks() const { return taskNames_; }
  void clear();  // drops the data, keeps the tasks and the selection

  // After each measured round: the best latency (seconds, NaN = none yet) of
  // `task` after taskTrials trials; the estimated end-to-end latency
  // (seconds, NaN while a task has none) at elapsedSeconds since the start.
  void addRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, double elapsedSeconds);
  // A measured batch, one scoring round: predicted scores (higher = faster)
  // and measured seconds (NaN = failed, left out of the scatter);
  // `untrained`: an untrained model scored them.
  void addPrograms(int task, const QVector<double>& predicted, const QVector<double>& measuredSeconds,
                   bool untrained = false);
  // The whole history at once (reopening a session), one entry per record,
  // with its scoring round (store::SessionProgram) and whether an untrained
  // model scored it (empty: none did).
  void addProgramsBulk(const QVector<int>& task, const QVector<double>& predicted,
                       const QVector<double>& measuredSeconds, const QVector<int>& round = {},
                       const QVector<bool>& untrained = {});

  // The best-vs-trials plot and the scatter show this task; -1 = all tasks.
  void selectTask(int task);
  int selectedTask() const { return selected_; }

  // Log y axis on the best-vs-trials plot (default on: tuning improves
  // latency by orders of magnitude, and tasks differ as much).
  void setBestLogScale(bool on);
  bool bestLogScale() const;

  // Rebuilds and replots the dirty plots at once (tests, benchmarks).
  void replotNow();
  // Marks every plot dirty, so the next update cycle rebuilds all of them.
  void invalidateAll();
  // Batched update cycles that replotted at least one plot.
  int replotCount() const { return replotCount_; }

  QCustomPlot* bestPlot() const { return bestPlot_; }
  QCustomPlot* estimatePlot() const { return estimatePlot_; }
  QCustomPlot* scatterPlot() const { return scatterPlot_; }
  ModelQualityPlot* roundsPlot() const { return roundsPlot_; }
  QTabWidget* costModelTabs() const { return costTabs_; }
  QCPGraph* scatterGraph() const { return scatterGraph_; }

  // Spearman's rho of the trained model's points the scatter shows (NaN if
  // fewer than 2), and its 95 % interval.
  double rankCorrelation() const;
  Interval rankCorrelationInterval() const;
  int scatterPointCount() const;    // trained model's points
  int untrainedPointCount() const;  // drawn apart, not in rho
  // "Spearman ρ = 0.71 [0.68, 0.74] (n = 1234); 64 untrained scores grey,
  // not counted", the scatter's title.
  QString scatterSummary() const;
  // Tasks flagged: a trained model ranks them worse than chance.
  QList<int> flaggedTasks() const;

  // The program of the point within kPickRadius pixels of `pixel` (in the
  // plot's coordinates) on the scatter, or on the best-latency curve (the
  // best program of the task after that round's trials); none if no point is.
  static constexpr double kPickRadius = 8;
  PickedProgram scatterProgramAt(const QPointF& pixel) const;
  PickedProgram bestProgramAt(const QPointF& pixel) const;
  // The fastest of a task's first `trials` programs (-1: none valid).
  int bestOrdinal(int task, int trials) const;
  // Programs of the task the panel has seen (its next program's ordinal).
  int programCount(int task) const;

 signals:
  // The user picked a task in the panel's own selector (-1 = all tasks).
  void taskSelected(int task);
  // A task became flagged (once, until it recovers): `message` says why.
  void modelFlagged(int task, const QString& message);
  // A click on the scatter or the best-latency curve picked a program.
  void programPicked(int task, int ordinal);

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  struct TaskData {
    QVector<double> trials, bestMs;  // rounds with a finite best
    std::vector<double> seconds;     // every program's measurement, by ordinal (NaN: failed)
  };

  void markDirty(bool best, bool estimate, bool scatter, int delayMs = kReplotIntervalMs);
  void addProgram(int task, int round, double predicted, double measured, bool untrained);
  // Emits programPicked for a click (press and release within a few pixels) on the plots.
  void connectPicking(QCustomPlot* plot, PickedProgram (PlotsPanel::*at)(const QPointF&) const);
  // Flags (or unflags) the task by its latest rounds; emits modelFlagged.
  void checkModel(int task);
  void rebuildRoundsPlot();
  void runUpdateCycle(bool queued);
  void rebuildBestPlot();
  void rebuildEstimatePlot();
  void rebuildScatterPlot();
  void refreshScatterCache() const;
  void updateTaskSelector();
  bool validTask(int task) const { return task >= 0 && task < taskNames_.size(); }
  bool shown(int task) const { return selected_ < 0 || selected_ == task; }

  QStringList taskNames_;
  std::vector<TaskData> taskData_;
  QVector<double> estimateTime_, estimateMs_;
  std::vector<ScoredProgram> programs_;  // the scatter's: finite score, valid measurement
  int nextRound_ = 0;                    // the scoring round of the next addPrograms
  std::vector<QString> flags_;           // by task: why it is flagged ("" not)
  int selected_ = -1;

  bool bestDirty_ = false, estimateDirty_ = false, scatterDirty_ = false;
  int replotCount_ = 0;
  QTimer timer_;

  // The scatter's points (sorted by x) and rho, rebuilt lazily.
  mutable bool scatterStale_ = true;
  mutable std::vector<double> scatterX_, scatterY_;
  mutable std::vector<double> untrainedX_, untrainedY_;
  mutable std::vector<size_t> scatterProgram_, untrainedProgram_;  // index into programs_ of each point
  mutable double rho_ = 0;

  QSplitter* splitter_ = nullptr;
  QComboBox* taskCombo_ = nullptr;
  QCheckBox* logCheck_ = nullptr;
  QCustomPlot* bestPlot_ = nullptr;
  QCustomPlot* estimatePlot_ = nullptr;
  QCustomPlot* scatterPlot_ = nullptr;
  QCPGraph* estimateGraph_ = nullptr;
  QCPGraph* scatterGraph_ = nullptr;
  QCPGraph* untrainedGraph_ = nullptr;
  ModelQualityPlot* roundsPlot_ = nullptr;
  QTabWidget* costTabs_ = nullptr;  // the scatter and the rounds plot
  QCPGraph* diagonalGraph_ = nullptr;
  QCPTextElement* bestTitle_ = nullptr;
  QCPTextElement* scatterTitle_ = nullptr;
};

}  // namespace tessel::ui
