// Two tuning sessions side by side, each from a database of its own choice
// (one file or two): their objective curves overlaid (the estimated
// end-to-end latency of a model session, the best latency of a task
// session) against trials or wall time, and a table of every task with its
// best latency in each, the ratio B / A and what the difference costs the
// model (weight x (B - A)), the tasks that differ most first and marked.
// The window colours its graph by the same difference. Sessions and their
// histories are read on worker threads, each with a connection of its own.
#pragma once

#include <QDialog>
#include <QString>
#include <array>
#include <memory>

#include "store/session_comparison.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QLineEdit;
class QTableWidget;

namespace tessel::ui {

class CompareDialog : public QDialog {
  Q_OBJECT

 public:
  enum Side { A = 0, B = 1 };
  enum Axis { Trials = 0, WallTime = 1 };
  enum Column { TaskColumn, Weight, BestA, BestB, Ratio, ModelDelta, TrialsA, TrialsB, ColumnCount };

  explicit CompareDialog(QWidget* parent = nullptr);

  // Lists the sessions of `database` on that side (read on a worker thread:
  // sessionsListed or failed follows) and selects `session` (0: the newest
  // one that is not the other side's). Once both sides have one, they are
  // compared: compared follows.
  void setDatabase(Side side, const QString& database, qint64 wanted = 0);
  // Selects a listed session on that side (false if it is not listed).
  bool setSession(Side side, qint64 session);
  QString database(Side side) const;
  qint64 session(Side side) const;  // 0: none

  void setAxis(Axis axis);
  // The last comparison (empty until compared).
  const store::SessionComparison& comparison() const { return *comparison_; }
  // Table rows marked as the tasks the sessions differ most on.
  int markedRows() const;

  QTableWidget* table() const { return table_; }
  QCustomPlot* plot() const { return plot_; }
  QLabel* summary() const { return summary_; }
  QComboBox* sessionBox(Side side) const { return sides_[side].sessions; }

 signals:
  void sessionsListed(int side);
  void compared();
  void failed(const QString& message);

 private:
  struct SideWidgets {
    QLineEdit* database = nullptr;
    QComboBox* sessions = nullptr;
  };
  struct Histories;
  QWidget* createSideRow(Side side);
  void browse(Side side);
  void compareNow();
  void showComparison(const Histories& histories);
  void fillTable();
  void drawCurves();

  std::array<SideWidgets, 2> sides_;
  std::array<qint64, 2> wanted_{0, 0};  // the session to select once listed
  QComboBox* axis_;
  QCustomPlot* plot_;
  QTableWidget* table_;
  QLabel* summary_;
  std::shared_ptr<const Histories> histories_;
  std::shared_ptr<store::SessionComparison> comparison_;
  quint64 generation_ = 0;  // of comparisons: a stale one is dropped
};

}  // namespace tessel::ui
