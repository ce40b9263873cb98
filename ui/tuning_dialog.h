// The tuning's less frequent choices, in a dialog the toolbar's Options...
// button opens: the search, the seed, programs per round, the evolutionary
// population, the cache state programs are measured under, the warm start's
// transferred programs, the time budget and the timeout per program, as
// `tessel tune --search --seed --batch --population --cache-flush --transfer
// --minutes --timeout` take them (with the same ranges and defaults).
#pragma once

#include <QDialog>
#include <QString>

#include "measure/cache_state.h"
#include "tuning/tuning_config.h"

class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace tessel::ui {

struct TuningDetails {
  QString search;  // "": search::defaultSearch()
  qint64 seed = 1;
  int batch = tuning::kDefaultBatch;  // programs per round
  int population = tuning::kDefaultPopulation;
  measure::CacheState cacheState = measure::CacheState::Model;
  int transfer = tuning::kDefaultTransfer;              // a warm start's transferred programs per task
  double minutes = 0;                                   // a wall-clock budget beside the trials (0: none)
  int timeoutSeconds = tuning::kDefaultTimeoutSeconds;  // per program's run
  bool operator==(const TuningDetails&) const = default;
};

// The details of the last tuning (QSettings; the time budget is not kept:
// it is for one tuning), and saving them.
TuningDetails savedTuningDetails();
void saveTuningDetails(const TuningDetails& details);

class TuningDialog : public QDialog {
  Q_OBJECT

 public:
  TuningDialog(const TuningDetails& details, QWidget* parent = nullptr);
  TuningDetails details() const;

 private:
  QComboBox* search_;
  QSpinBox* seed_;
  QSpinBox* batch_;
  QSpinBox* population_;
  QComboBox* cacheState_;
  QSpinBox* transfer_;
  QDoubleSpinBox* minutes_;
  QSpinBox* timeout_;
};

}  // namespace tessel::ui
