// The studio's program inspector: the measured programs of one task in one
// session, read from the database, in a table (number, median time,
// repeats, spread, the cost model's score, its rank by score and by time),
// and the selected one in detail: its measured time and repeats, score and
// rank, what scored it; its schedule steps in words, its loop nest, its
// generated code (replayed exactly from the stored steps), and its steps
// against those of the task's fastest program, line by line. Opened from a
// point of the scatter or of the best-latency curve, or from the tasks table.
#pragma once

#include <QDialog>
#include <QString>
#include <QStringList>
#include <memory>
#include <string>
#include <vector>

#include "schedule/state.h"
#include "store/program_listing.h"
#include "support/line_diff.h"
#include "task/search_task.h"

class QLabel;
class QPlainTextEdit;
class QTableWidget;
class QTabWidget;
class QTextEdit;

namespace tessel::ui {

class CodeView;

class ProgramInspector : public QDialog {
  Q_OBJECT

 public:
  enum Column { Number, Median, Repeats, Spread, Score, ScoreRank, TimeRank, TrainedOn, ColumnCount };
  enum Tab { StepsTab, LoopNestTab, CodeTab, DiffTab };

  explicit ProgramInspector(QWidget* parent = nullptr);
  ~ProgramInspector() override;

  // Reads the programs `session` measured for `task` from `database` and
  // shows program `ordinal` (the session's first of the task is 0; -1: the
  // fastest). False, with error() saying why, when they cannot be read.
  bool inspect(const QString& database, qint64 session, const task::SearchTask& task, const QString& taskLabel,
               int ordinal = -1);
  // Shows another program of the listing (false: no such program).
  bool showProgram(int ordinal);

  const store::ProgramListing& listing() const { return listing_; }
  int current() const { return current_; }  // ordinal shown; -1: none
  QString error() const { return error_; }
  // The program shown: its steps in words, and their diff with the fastest program's.
  QStringList stepLines() const;
  const std::vector<support::DiffLine>& diff() const { return diff_; }

  QLabel* summary() const { return summary_; }
  QTableWidget* table() const { return table_; }
  QTabWidget* tabs() const { return tabs_; }
  QPlainTextEdit* stepsText() const { return steps_; }
  QPlainTextEdit* loopNestText() const { return loops_; }
  QTextEdit* diffText() const { return diffText_; }
  CodeView* code() const { return code_; }

 signals:
  void programShown(int ordinal);

 private:
  // The program's steps in words, replayed once on the task (`end`, if
  // given, gets the state they lead to); an empty list and `why` for steps
  // that do not replay.
  std::vector<std::string> replayed(const store::RecordRow& record, schedule::State* end, QString* why) const;
  void fillTable();
  QString summaryText(const store::ListedProgram& p) const;
  void showDiff(const store::ListedProgram& p, const std::vector<std::string>& words);

  task::SearchTask task_;
  QString taskLabel_;
  store::ProgramListing listing_;
  std::vector<std::string> fastestWords_;
  std::vector<std::string> words_;
  std::vector<support::DiffLine> diff_;
  int current_ = -1;
  QString error_;

  QLabel* summary_;
  QTableWidget* table_;
  QTabWidget* tabs_;
  QPlainTextEdit* steps_;
  QPlainTextEdit* loops_;
  QTextEdit* diffText_;
  CodeView* code_;
};

}  // namespace tessel::ui
