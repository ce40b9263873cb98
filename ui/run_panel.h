// The studio's Run panel: the tuned model run against LibTorch (`tessel
// run`, see model_run.h), the figure Tessel is tuned for, and against the
// oneDNN executor. Tessel's, LibTorch's and oneDNN's medians with their
// fastest-slowest spread, the speed-ups,
// correct or WRONG with the largest error, a run flagged `disturbed` with
// its reason in a banner that says not to read the ratio as a speed-up, the
// tuned and naive task counts and the tuner's estimate; per partition a
// sortable table (step, task, measured ms, estimate ms, ratio) and a bar
// chart of measured against estimate. A view only: the run itself is
// RunController's.
#pragma once

#include <QDateTime>
#include <QHash>
#include <QString>
#include <QWidget>
#include <optional>

#include "ui/model_run.h"

class QAction;
class QCPBars;
class QCustomPlot;
class QLabel;
class QSortFilterProxyModel;
class QSpinBox;
class QStandardItemModel;
class QTableView;
class QToolButton;

namespace tessel::ui {

class RunPanel : public QWidget {
  Q_OBJECT

 public:
  enum Column { Step, Task, MeasuredMs, EstimateMs, Ratio, ColumnCount };

  explicit RunPanel(QWidget* parent = nullptr);

  // Buttons for the window's Run and Stop actions beside the repeats box.
  void setActions(QAction* run, QAction* stop);
  // Timed runs of each side (the repeats box).
  int repeats() const;
  void setRepeats(int repeats);
  // Workload key -> the task's name as the tasks panel shows it.
  void setTaskNames(const QHash<QString, QString>& names) { taskNames_ = names; }

  // Nothing to show: `hint` says why (no run yet, another model...).
  void clear(const QString& hint);
  void showRunning(const QString& what);
  // A run's result, taken at `taken` (UTC); `session` is the session it was
  // stored with (0: none), `storedRun` its id in the database (0: not stored).
  void showResult(const RunResult& result, const QDateTime& taken, qint64 session, qint64 storedRun);
  // Keeps the result shown, and says where it was stored or why it was not.
  void setStored(qint64 storedRun, const QString& error = {});
  // A run that failed: the message in the panel, the last result dropped.
  void showError(const QString& message);

  // What is shown (tests, the window).
  const std::optional<RunResult>& result() const { return result_; }
  QDateTime taken() const { return taken_; }
  qint64 storedRun() const { return storedRun_; }
  QString statusText() const;
  QString errorText() const;
  QLabel* disturbedBanner() const { return disturbed_; }
  QLabel* correctLabel() const { return correct_; }
  QLabel* contentionLabel() const { return contention_; }
  QStandardItemModel* partitionsModel() const { return rows_; }
  QTableView* partitionsView() const { return table_; }
  QCustomPlot* chart() const { return chart_; }
  QCPBars* measuredBars() const { return measuredBars_; }
  QCPBars* estimateBars() const { return estimateBars_; }

 private:
  void fillFigures(const RunResult& r);
  void fillPartitions(const RunResult& r);
  void fillChart(const RunResult& r);
  void updateStatus();

  QHash<QString, QString> taskNames_;
  std::optional<RunResult> result_;
  QDateTime taken_;
  qint64 session_ = 0, storedRun_ = 0;
  QString storeError_;

  QSpinBox* repeatsBox_;
  QToolButton* runButton_;
  QToolButton* stopButton_;
  QLabel* status_;
  QLabel* error_;
  QLabel* disturbed_;
  QLabel* tessel_;
  QLabel* libtorch_;
  QLabel* onednn_;
  QLabel* speedup_;
  QLabel* correct_;
  QLabel* tasks_;
  QLabel* estimate_;
  QLabel* contention_;
  QWidget* figures_;
  QStandardItemModel* rows_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QCustomPlot* chart_;
  QCPBars* measuredBars_;
  QCPBars* estimateBars_;
};

}  // namespace tessel::ui
