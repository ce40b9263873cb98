#include "ui/code_view.h"

#include <QApplication>
#include <QClipboard>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

#include "search/space_summary.h"
#include "ui/cpp_highlighter.h"

namespace tessel::ui {

namespace {

struct Generated {
  QString code, error;
};

}  // namespace

CodeView::CodeView(QWidget* parent) : QWidget(parent) {
  titleLabel_ = new QLabel(tr("No program"), this);
  titleLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  titleLabel_->setTextFormat(Qt::PlainText);
  copy_ = new QPushButton(tr("Copy"), this);
  copy_->setToolTip(tr("Copy the whole program to the clipboard"));
  copy_->setEnabled(false);
  connect(copy_, &QPushButton::clicked, this, &CodeView::copyToClipboard);
  editor_ = new QPlainTextEdit(this);
  editor_->setReadOnly(true);
  editor_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleHint(QFont::Monospace);
  editor_->setFont(mono);
  highlighter_ = new CppHighlighter(editor_->document());
  if (editor_->palette().color(QPalette::Base).lightness() < 128) highlighter_->setDarkBackground(true);

  auto* top = new QHBoxLayout;
  top->addWidget(titleLabel_, 1);
  top->addWidget(copy_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(top);
  layout->addWidget(editor_, 1);
}

void CodeView::setTitle(const QString& title, const QString& note) {
  title_ = title;
  titleLabel_->setText(note.isEmpty() ? title : title + QStringLiteral(" — ") + note);
}

void CodeView::showProgram(const task::SearchTask& task, const QString& title, const QString& decisionsJson,
                           const QString& stepsJson) {
  const quint64 gen = ++generation_;
  ready_ = false;
  setTitle(title, tr("generating…"));
  editor_->setPlainText(QString());
  copy_->setEnabled(false);
  // Lowering and printing a large fused kernel takes a while: off the UI thread.
  auto work = [task, json = decisionsJson.toStdString(), steps = stepsJson.toStdString()]() -> Generated {
    try {
      std::string src = !steps.empty() ? search::storedProgramSource(task, steps)
                        : json.empty() ? search::naiveProgramSource(task)
                                       : search::programSource(task, json);
      return {QString::fromStdString(src), {}};
    } catch (const std::exception& e) {
      return {{}, QString::fromUtf8(e.what())};
    }
  };
  auto* watcher = new QFutureWatcher<Generated>(this);
  connect(watcher, &QFutureWatcher<Generated>::finished, this, [this, watcher, gen, title] {
    watcher->deleteLater();
    if (gen != generation_) return;  // superseded
    Generated g = watcher->result();
    ready_ = true;
    if (!g.error.isEmpty()) {
      setTitle(title, tr("failed"));
      editor_->setPlainText(tr("// Cannot generate the program: ") + QString(g.error).replace('\n', "\n// "));
      copy_->setEnabled(false);
      emit failed(g.error);
      return;
    }
    setTitle(title);
    editor_->setPlainText(g.code);
    copy_->setEnabled(true);
    emit ready();
  });
  watcher->setFuture(QtConcurrent::run(work));
}

void CodeView::showText(const QString& title, const QString& code) {
  ++generation_;
  setTitle(title);
  editor_->setPlainText(code);
  copy_->setEnabled(!code.isEmpty());
  ready_ = true;
}

void CodeView::clear() {
  ++generation_;
  setTitle(tr("No program"));
  title_.clear();
  editor_->setPlainText(QString());
  copy_->setEnabled(false);
  ready_ = false;
}

QString CodeView::code() const {
  return editor_->toPlainText();
}

void CodeView::copyToClipboard() {
  if (QClipboard* c = QGuiApplication::clipboard()) c->setText(code());
}

}  // namespace tessel::ui
