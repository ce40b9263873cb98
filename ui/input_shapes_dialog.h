// The shapes of a model file's inputs, asked for where the file does not
// hold them: a TorchScript .pt records none for forward()'s arguments, an
// ONNX file may leave dimensions symbolic (a dynamic batch, taken as 1 until
// sized). As `--input-shapes` takes them: "1,3,224,224;1,16", dimensions
// separated by commas, inputs by semicolons, in the model's input order.
#pragma once

#include <QDialog>
#include <QString>
#include <QStringList>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace tessel::ui {

class InputShapesDialog : public QDialog {
  Q_OBJECT

 public:
  // `shapes`: the ones to start from (remembered, or the model's as open);
  // `notes`: what the import chose where the file was silent (Graph::assumptions).
  InputShapesDialog(const QString& model, const QString& shapes, const QStringList& notes, QWidget* parent = nullptr);

  QString shapes() const;
  // Whether `text` reads as shapes (positive integers, commas, semicolons);
  // whether the model loads with them is the import's to say.
  static bool wellFormed(const QString& text);

 private:
  void updateOk();

  const bool required_;  // a .pt cannot be opened without them
  QLineEdit* edit_;
  QLabel* problem_;
  QDialogButtonBox* buttons_;
};

}  // namespace tessel::ui
