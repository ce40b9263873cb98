// The sessions of a tuning database: a sortable table (id, kind, subject,
// status, start, duration, trials, valid programs, best latency) and, below
// it, a plot that compares the selected sessions by their objective curves
// (the estimated end-to-end latency of a model session, the best latency of
// a task session, against trials). Reopen (or a double click) hands a
// session to the main window; Compare... hands it two (ui/compare_dialog.h).
// The sessions and their curves are read on a worker thread with a database
// connection of its own.
#pragma once

#include <QDialog>
#include <QList>
#include <QString>
#include <vector>

class QCustomPlot;
class QLabel;
class QPushButton;
class QStandardItemModel;
class QTableView;

namespace tessel::store {
struct SessionRow;
}

namespace tessel::ui {

class SessionsDialog : public QDialog {
  Q_OBJECT

 public:
  enum Column { Id, Kind, Subject, Status, Started, Duration, Trials, Valid, BestMs, ColumnCount };

  explicit SessionsDialog(const QString& database, QWidget* parent = nullptr);

  // Reads the sessions on a worker thread: loaded() follows, or loadFailed()
  // naming the problem when the database cannot be read. Nothing is written.
  void load();
  bool isLoaded() const { return loaded_; }
  QString database() const { return database_; }

  // Selects these sessions in the table (the plot then compares them).
  void selectSessions(const QList<qint64>& ids);
  QList<qint64> selectedSessions() const;
  // Curves drawn by the latest comparison (one per selected session that
  // has a finite objective).
  int comparedCurves() const;

  QTableView* table() const { return table_; }
  QStandardItemModel* sessionsModel() const { return model_; }
  QCustomPlot* comparePlot() const { return plot_; }
  QPushButton* reopenButton() const { return reopen_; }
  QPushButton* compareButton() const { return compare_; }

 signals:
  void reopenRequested(qint64 session);
  // Compare... with two sessions selected (in the table's order).
  void compareRequested(qint64 a, qint64 b);
  void loaded();
  void loadFailed(const QString& message);
  void comparisonReady();  // the plot shows the current selection

 private:
  void fill(const std::vector<store::SessionRow>& sessions);
  void compareSelected();
  void reopenSelected();

  QString database_;
  bool loaded_ = false;
  QStandardItemModel* model_;
  QTableView* table_;
  QCustomPlot* plot_;
  QLabel* note_;
  QPushButton* reopen_;
  QPushButton* compare_;
  quint64 generation_ = 0;  // bumps on every comparison; stale results are dropped
};

}  // namespace tessel::ui
