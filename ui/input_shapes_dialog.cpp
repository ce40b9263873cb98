#include "ui/input_shapes_dialog.h"

#include <QDialogButtonBox>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "frontend/model_loader.h"

namespace tessel::ui {

bool InputShapesDialog::wellFormed(const QString& text) {
  static const QRegularExpression shape(QStringLiteral("^[1-9][0-9]*(,[1-9][0-9]*)*(;[1-9][0-9]*(,[1-9][0-9]*)*)*$"));
  return shape.match(text.trimmed().remove(' ')).hasMatch();
}

InputShapesDialog::InputShapesDialog(const QString& model, const QString& shapes, const QStringList& notes,
                                     QWidget* parent)
    : QDialog(parent), required_(frontend::needsInputShapes(model.toStdString())) {
  setObjectName(QStringLiteral("inputShapesDialog"));
  setWindowTitle(tr("Input shapes of %1").arg(QFileInfo(model).fileName()));
  auto* layout = new QVBoxLayout(this);
  auto* intro = new QLabel(
      required_ ? tr("<b>%1</b> is a TorchScript model: it does not record the shapes of forward()'s arguments. Give "
                     "them in order, dimensions separated by commas and inputs by semicolons "
                     "(<tt>1,3,224,224;1,16</tt>).")
                      .arg(model.toHtmlEscaped())
                : tr("The shapes of <b>%1</b>'s inputs, in order, dimensions separated by commas and inputs by "
                     "semicolons (<tt>4,3,224,224</tt>). They size its symbolic dimensions (a dynamic batch); "
                     "left empty, each symbolic dimension is taken as 1.")
                      .arg(model.toHtmlEscaped()),
      this);
  intro->setWordWrap(true);
  layout->addWidget(intro);
  if (!notes.isEmpty()) {
    auto* chosen = new QLabel(tr("As opened: %1").arg(notes.join(QStringLiteral("; ")).toHtmlEscaped()), this);
    chosen->setObjectName(QStringLiteral("inputShapesNotes"));
    chosen->setWordWrap(true);
    layout->addWidget(chosen);
  }
  edit_ = new QLineEdit(shapes, this);
  edit_->setObjectName(QStringLiteral("inputShapesEdit"));
  edit_->setPlaceholderText(required_ ? tr("e.g. 1,3,224,224") : tr("as the file declares them"));
  layout->addWidget(edit_);
  problem_ = new QLabel(this);
  problem_->setObjectName(QStringLiteral("inputShapesProblem"));
  layout->addWidget(problem_);
  buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons_->button(QDialogButtonBox::Ok)->setText(tr("Open"));
  layout->addWidget(buttons_);
  connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(edit_, &QLineEdit::textChanged, this, &InputShapesDialog::updateOk);
  updateOk();
  resize(520, sizeHint().height());
}

QString InputShapesDialog::shapes() const {
  return edit_->text().trimmed().remove(' ');
}

void InputShapesDialog::updateOk() {
  const QString text = shapes();
  QString problem;
  if (text.isEmpty() && required_)
    problem = tr("TorchScript needs the shapes of its inputs");
  else if (!text.isEmpty() && !wellFormed(text))
    problem = tr("not shapes: positive integers separated by commas, inputs by semicolons");
  problem_->setText(problem);
  problem_->setVisible(!problem.isEmpty());
  buttons_->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

}  // namespace tessel::ui
