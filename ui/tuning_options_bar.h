// The toolbar's choices for the next tuning, as `tessel tune` takes them on
// its command line: the target (those this machine can measure), the fusion, the cost model (or a trained
// model file to start from), a warm or a cold start, where programs are
// measured (here, or by a fleet's agents through Redis) and the trial
// budget. The boxes are the window's widgets, placed on its toolbar by
// addTo(); each starts from the choice of the last tuning (QSettings,
// written by save() when a tuning starts).
#pragma once

#include <QObject>
#include <QString>
#include <vector>

#include "measure/target_check.h"
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

  // The target box's: this machine's CPU, an x86-64 level it runs, or its
  // GPU (CUDA) where it has one with a driver; a target this machine cannot
  // measure is listed, disabled, with why. A CUDA target names the GPU's arch.
  target::Target target() const;
  // While a tuning runs its target stays as it is.
  void setTargetChangeable(bool changeable);

  // The Options dialog's choices (search, seed, batch, ...): opened by the
  // toolbar's Options... button, applied when it is accepted.
  const TuningDetails& details() const { return details_; }
  void setDetails(const TuningDetails& details);
  // Opens the Options dialog (non-modal: detailsChanged follows its OK).
  void openDetailsDialog();

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
  // Another target was chosen (target() has it).
  void targetChanged();
  // The Options dialog was accepted (details() has its choices).
  void detailsChanged();
  // Where to measure, once an entry is done (not per keystroke).
  void measureChosen(const QString& measure);
  void trialsChanged(int trials);
  // The user asked for a trained cost model file ("": a fresh model).
  void costModelFileRequested(const QString& path);

 private:
  void createTargetBox(QWidget* window);
  void createCostModelBoxes(QWidget* window);
  void createMeasureBox(QWidget* window);

  QComboBox* targetBox_ = nullptr;
  std::vector<measure::TargetChoice> targets_;  // the target box's entries
  QComboBox* fusionBox_ = nullptr;
  QComboBox* costModelBox_ = nullptr;
  QToolButton* costModelFileButton_ = nullptr;
  QCheckBox* warmStartBox_ = nullptr;
  QComboBox* measureBox_ = nullptr;
  QSpinBox* budgetBox_ = nullptr;
  QToolButton* detailsButton_ = nullptr;
  TuningDetails details_;
  QString costModelFile_;
};

}  // namespace tessel::ui
