// The tasks panel: a model's tasks with weight, FLOPs, trials, best latency,
// GFLOP/s, how close that is to the machine's roof (the roofline's
// attainable GFLOP/s) and share of the estimated end-to-end latency,
// sortable; the selected task drives the other views.
#pragma once

#include <QAbstractTableModel>
#include <QVector>
#include <QWidget>

#include "ui/tuning_session.h"

class QSortFilterProxyModel;
class QTableView;

namespace tessel::ui {

class TasksModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { Name, Weight, Mflop, Trials, BestMs, Gflops, Roof, Share, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void setTasks(const QVector<TaskInfo>& tasks);
  // A task's progress (bestSeconds NaN: no valid program yet).
  void updateTask(int task, int trials, double bestSeconds);
  // Sum of weight x best latency over the tasks (NaN while one has none).
  double estimateSeconds() const;
  // The GFLOP/s each task can reach on this machine (the roofline's
  // attainable throughput, by task; empty: not known): the "of roof" column
  // is its best program's GFLOP/s over it.
  void setAttainable(const QVector<double>& gflops);
  double roofFraction(int task) const;  // NaN: no best or no ceiling yet
  const TaskInfo& task(int row) const { return rows_[row].info; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  struct Row {
    TaskInfo info;
    int trials = 0;
    double best = 0;  // seconds; 0 = none yet
  };
  QVector<Row> rows_;
  QVector<double> attainable_;
};

class TasksPanel : public QWidget {
  Q_OBJECT

 public:
  explicit TasksPanel(QWidget* parent = nullptr);
  TasksModel* model() const { return model_; }
  QTableView* view() const { return view_; }
  // Follows a tuning: its tasks and every round.
  void follow(TuningSession* session);

 signals:
  void taskSelected(int task);       // index into the model's tasks
  void programsRequested(int task);  // a double-click: inspect its programs

 private:
  TasksModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
};

}  // namespace tessel::ui
