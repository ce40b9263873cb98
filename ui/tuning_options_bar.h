// The toolbar's choices for the next tuning, as `tessel tune` takes them on
// its command line: the target, the fusion, the cost model (or a trained
// model file to start from), a warm or a cold start, where programs are
// measured (here, or by a fleet's agents through Redis) and the trial
// budget. The boxes are the window's widgets, placed on its toolbar by
// addTo(); each starts from the choice of the last tuning (QSettings,
// written by save() when a tuning starts).
#pragma once

#include <QObject>
#include <QString>

#include "ui/tuning_controller.h"

class QCheckBox;
class QComboBox;
class QSpinBox;
class QToolBar;
class QToolButton;
class QWidget;

namespace tessel::ui {

class TuningOptionsBar : public QObject {
  Q_OBJECT

 public:
  explicit TuningOptionsBar(QWidget* window);

  void addTo(QToolBar* toolBar) const;
  TuningChoices choices() const;
  // The choices as the next start's (QSettings), with `trials` unless it is
  // 0 (a time budget's trials are the command line's, not the user's box).
  void save(int trials) const;

  QString fusion() const;
  // Shows `fusion` without fusionChanged (a reopened session's model opens with it).
  void showFusion(const QString& fusion);
  QString measure() const;
  int trials() const;
  void setTrials(int trials);

  // A trained cost model (`tessel costmodel train`) the next tuning starts
  // from: the cost-model box then shows its model and is locked; "" goes
  // back to a fresh model. Returns why the file cannot be used ("" if it
  // can; then it is the one used).
  QString setCostModelFile(const QString& path);
  QString costModelFile() const { return costModelFile_; }
  // The cost-model box's model.
  QString costModel() const;

 signals:
  void fusionChanged();
  // Where to measure, once an entry is done (not per keystroke).
  void measureChosen(const QString& measure);
  void trialsChanged(int trials);
  // The user asked for a trained cost model file ("": a fresh model).
  void costModelFileRequested(const QString& path);

 private:
  void createCostModelBoxes(QWidget* window);
  void createMeasureBox(QWidget* window);

  QComboBox* targetBox_ = nullptr;
  QComboBox* fusionBox_ = nullptr;
  QComboBox* costModelBox_ = nullptr;
  QToolButton* costModelFileButton_ = nullptr;
  QCheckBox* warmStartBox_ = nullptr;
  QComboBox* measureBox_ = nullptr;
  QSpinBox* budgetBox_ = nullptr;
  QString costModelFile_;
};

}  // namespace tessel::ui
