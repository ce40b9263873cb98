// The roofline of the open model's tasks on this machine, drawn as Nsight
// Compute draws a kernel's: achieved GFLOP/s against arithmetic intensity
// (FLOP per compulsory byte: each input read once, each output written
// once), both axes logarithmic, under the machine's ceilings
// (measure/machine_ceilings.h): the peak FMA throughput, and the roofs of
// the memory and of the last-level cache bandwidth. Each task's best program
// is a point; the selected task's measured programs are a column of dots at
// its intensity (programs of one task move the same compulsory bytes, so
// they differ only in height). The attainable GFLOP/s of each task is what
// the tasks table's "of roof" column divides by.
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>
#include <vector>

#include "measure/machine_ceilings.h"

class QCustomPlot;
class QCPGraph;
class QLabel;

namespace tessel::ui {

struct RooflineTask {
  QString name;
  double flops = 0;  // of one run
  double bytes = 0;  // compulsory traffic of one run (0: unknown, not drawn)
};

class RooflineView : public QWidget {
  Q_OBJECT

 public:
  explicit RooflineView(QWidget* parent = nullptr);

  void setCeilings(const measure::MachineCeilings& ceilings);
  bool hasCeilings() const { return hasCeilings_; }
  const measure::MachineCeilings& ceilings() const { return ceilings_; }
  // "" clears the reason; otherwise shown instead of the plot's ceilings (a CUDA target).
  void setUnavailable(const QString& why);

  // Another model: its tasks, no program yet.
  void setTasks(const std::vector<RooflineTask>& tasks);
  // Measured seconds of `task`'s programs (NaN or <= 0: failed, left out).
  void addPrograms(int task, const QVector<double>& seconds);
  void clearPrograms();
  void selectTask(int task);  // -1: none

  // What each task can reach here (GFLOP/s, by task; empty without ceilings).
  QVector<double> attainable() const;
  double intensity(int task) const;   // FLOP/byte (NaN: unknown)
  double bestGflops(int task) const;  // NaN: none measured
  int bestPointCount() const;
  int programPointCount() const;
  QCustomPlot* plot() const { return plot_; }
  QString summary() const;

 private:
  void redraw();

  measure::MachineCeilings ceilings_;
  bool hasCeilings_ = false;
  QString unavailable_;
  std::vector<RooflineTask> tasks_;
  std::vector<std::vector<double>> seconds_;  // by task: its valid measured programs
  int selected_ = -1;
  QCustomPlot* plot_;
  QCPGraph* dram_;
  QCPGraph* llc_;
  QCPGraph* best_;
  QCPGraph* programs_;
  QCPGraph* selectedBest_;
  QLabel* summary_;
};

}  // namespace tessel::ui
