#include "ui/log_panel.h"

#include <QFontDatabase>
#include <QTime>

namespace tessel::ui {

LogPanel::LogPanel(QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setMaximumBlockCount(10000);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setPlaceholderText(tr("Messages of the tuning session: builds, measurements, errors."));
}

void LogPanel::appendMessage(const QString& message) {
  appendPlainText(QTime::currentTime().toString(QStringLiteral("HH:mm:ss  ")) + message);
}

}  // namespace tessel::ui
