// The studio's code view: the C++ kernel of the selected program, generated
// on a worker thread, shown highlighted, read-only and monospaced under a
// title line, with a button that copies it.
#pragma once

#include <QString>
#include <QWidget>

#include "task/search_task.h"

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace tessel::ui {

class CppHighlighter;

class CodeView : public QWidget {
  Q_OBJECT

 public:
  explicit CodeView(QWidget* parent = nullptr);

  // Generates the source (on a worker thread) and shows it: the stored
  // program's steps when given (replayed exactly), else the decisions; both
  // empty = the naive program. A newer call (or showText) supersedes a
  // pending one.
  void showProgram(const task::SearchTask& task, const QString& title, const QString& decisionsJson,
                   const QString& stepsJson = {});
  void showText(const QString& title, const QString& code);  // shows given code
  void clear();

  QString code() const;
  QString title() const { return title_; }
  // The latest showProgram finished (ready() or failed() was emitted), or
  // showText was called.
  bool isReady() const { return ready_; }
  void copyToClipboard();

  QPlainTextEdit* editor() const { return editor_; }
  CppHighlighter* highlighter() const { return highlighter_; }
  QPushButton* copyButton() const { return copy_; }

 signals:
  void ready();
  void failed(const QString& message);

 private:
  void setTitle(const QString& title, const QString& note = {});

  QLabel* titleLabel_;
  QPushButton* copy_;
  QPlainTextEdit* editor_;
  CppHighlighter* highlighter_;
  QString title_;
  quint64 generation_ = 0;  // bumps on every request; stale results are dropped
  bool ready_ = false;
};

}  // namespace tessel::ui
