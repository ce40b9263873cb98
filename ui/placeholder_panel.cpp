#include "ui/placeholder_panel.h"

#include <QLabel>
#include <QPalette>
#include <QVBoxLayout>

namespace tessel::ui {

PlaceholderPanel::PlaceholderPanel(const QString& title, const QString& description, QWidget* parent)
    : QWidget(parent) {
  auto* heading = new QLabel(title, this);
  QFont headingFont = heading->font();
  headingFont.setBold(true);
  heading->setFont(headingFont);
  heading->setAlignment(Qt::AlignCenter);

  description_ = new QLabel(description, this);
  description_->setAlignment(Qt::AlignCenter);
  description_->setWordWrap(true);
  description_->setForegroundRole(QPalette::PlaceholderText);

  auto* layout = new QVBoxLayout(this);
  layout->addStretch();
  layout->addWidget(heading);
  layout->addWidget(description_);
  layout->addStretch();
}

QString PlaceholderPanel::description() const {
  return description_->text();
}

}  // namespace tessel::ui
