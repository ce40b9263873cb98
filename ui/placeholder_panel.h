// A stand-in for a studio panel that is not implemented yet: it says what
// will go there.
#pragma once

#include <QString>
#include <QWidget>

class QLabel;

namespace tessel::ui {

class PlaceholderPanel : public QWidget {
  Q_OBJECT

 public:
  PlaceholderPanel(const QString& title, const QString& description, QWidget* parent = nullptr);

  QString description() const;

 private:
  QLabel* description_ = nullptr;
};

}  // namespace tessel::ui
