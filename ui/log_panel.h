// The log panel: read-only, one time-stamped line per message.
#pragma once

#include <QPlainTextEdit>
#include <QString>

namespace tessel::ui {

class LogPanel : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit LogPanel(QWidget* parent = nullptr);

 public slots:
  void appendMessage(const QString& message);
};

}  // namespace tessel::ui
