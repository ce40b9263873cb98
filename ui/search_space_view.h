// The studio's search-space view of the selected task: its sketches (rules,
// loop nest, the tunable parameters with their domains), the size of the
// space, sampled annotations and the best program so far. The summary is
// computed on a worker thread; picking a sample or the best program asks
// the code view to show it (programSelected).
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QWidget>
#include <cmath>

#include "search/space_summary.h"

class QPlainTextEdit;
class QTreeWidget;
class QTreeWidgetItem;

namespace tessel::ui {

class SearchSpaceView : public QWidget {
  Q_OBJECT

 public:
  // QTreeWidgetItem data roles: what an item stands for, and the decisions
  // (serialised) of a sample or of the best program.
  static constexpr int kKindRole = Qt::UserRole + 1;       // "space", "sketch", "loops", "parameters", ...
  static constexpr int kDecisionsRole = Qt::UserRole + 2;  // QString, on "sample" and "best" items
  static constexpr int kStepsRole = Qt::UserRole + 3;      // QString, serialised steps of a stored best program

  explicit SearchSpaceView(QWidget* parent = nullptr);

  // Shows a task's space (computed on a worker thread via QtConcurrent; a
  // newer call supersedes an older one). bestDecisions: serialised decisions
  // of the best program so far ("" = none yet), bestSeconds NaN if none,
  // bestSteps its serialised steps when it comes from the database (the
  // code view then replays them exactly).
  void showTask(const task::SearchTask& task, const QString& bestDecisions, double bestSeconds,
                const QString& bestSteps = {});
  // Updates the best program of the task shown without recomputing the space.
  void setBest(const QString& bestDecisions, double bestSeconds, const QString& bestSteps = {});
  bool hasBest() const { return !bestDecisions_.isEmpty() || !bestSteps_.isEmpty(); }
  void clear();
  bool isReady() const { return ready_; }  // the latest showTask finished
  const search::SpaceSummary& summary() const { return summary_; }
  QTreeWidget* tree() const { return tree_; }
  QPlainTextEdit* details() const { return details_; }  // the selected item's text, monospaced

  // "1.2e9" above a million, the integer below.
  static QString formatCount(double n);

 signals:
  void ready();
  // The user picked the best program or a sample (also emitted once with the
  // best program, or the first sample when there is no best, when a task is
  // shown): the code view shows it.
  // stepsJson is set for a stored best program, "" otherwise.
  void programSelected(const QString& title, const QString& decisionsJson, const QString& stepsJson);
  void failed(const QString& message);

 private:
  void populate();
  void updateBestItem();
  void onItemActivated(QTreeWidgetItem* item);
  void onCurrentChanged(QTreeWidgetItem* item);

  QTreeWidget* tree_;
  QPlainTextEdit* details_;
  search::SpaceSummary summary_;
  QString taskKey_;
  QString bestDecisions_, bestSteps_;
  double bestSeconds_ = std::nan("");
  QTreeWidgetItem* bestItem_ = nullptr;
  QTreeWidgetItem* lastPicked_ = nullptr;  // only compared, never dereferenced
  QElapsedTimer pickClock_;
  quint64 generation_ = 0;  // bumps on every request; stale results are dropped
  bool ready_ = false;
};

}  // namespace tessel::ui
