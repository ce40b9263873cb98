#include "ui/tuning_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>
#include <limits>

#include "search/search_registry.h"
#include "ui/studio_settings.h"

namespace tessel::ui {

TuningDetails savedTuningDetails() {
  QSettings s = studioSettings();
  TuningDetails d;
  d.search = s.value("tuning/search", d.search).toString();
  if (!search::findSearch(d.search.toStdString())) d.search.clear();  // a search this build no longer has
  d.seed = s.value("tuning/seed", d.seed).toLongLong();
  d.batch = s.value("tuning/batch", d.batch).toInt();
  d.population = s.value("tuning/population", d.population).toInt();
  d.cacheState =
      measure::parseCacheState(s.value("tuning/cacheState", "").toString().toStdString()).value_or(d.cacheState);
  d.transfer = s.value("tuning/transfer", d.transfer).toInt();
  d.timeoutSeconds = s.value("tuning/timeout", d.timeoutSeconds).toInt();
  return d;
}

void saveTuningDetails(const TuningDetails& d) {
  QSettings s = studioSettings();
  s.setValue("tuning/search", d.search);
  s.setValue("tuning/seed", d.seed);
  s.setValue("tuning/batch", d.batch);
  s.setValue("tuning/population", d.population);
  s.setValue("tuning/cacheState", QString::fromLatin1(measure::cacheStateName(d.cacheState)));
  s.setValue("tuning/transfer", d.transfer);
  s.setValue("tuning/timeout", d.timeoutSeconds);
}

namespace {

QSpinBox* spinBox(QWidget* parent, const char* name, int low, int high, int value, const QString& tip) {
  auto* box = new QSpinBox(parent);
  box->setObjectName(QLatin1String(name));
  box->setRange(low, high);
  box->setValue(value);
  box->setToolTip(tip);
  return box;
}

}  // namespace

TuningDialog::TuningDialog(const TuningDetails& d, QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("tuningDialog"));
  setWindowTitle(tr("Tuning options"));
  search_ = new QComboBox(this);
  search_->setObjectName(QStringLiteral("searchBox"));
  for (const search::SearchEntry& e : search::searches()) {
    search_->addItem(QString::fromStdString(e.name));
    search_->setItemData(search_->count() - 1, QString::fromStdString(e.summary), Qt::ToolTipRole);
  }
  search_->setCurrentText(d.search.isEmpty() ? QString::fromStdString(search::defaultSearch()) : d.search);
  // The seed's range is the CLI's, cut to what a spin box holds.
  seed_ = spinBox(this, "seedBox", 0, std::numeric_limits<int>::max(), int(std::min<qint64>(d.seed, INT_MAX)),
                  tr("Seed of the search's random choices (--seed)"));
  batch_ = spinBox(this, "batchBox", 1, tuning::kMaxBatch, d.batch,
                   tr("Programs measured per round, each round retraining the cost model (--batch)"));
  population_ = spinBox(this, "populationBox", tuning::kMinPopulation, tuning::kMaxPopulation, d.population,
                        tr("Programs the evolutionary search evolves each round (--population)"));
  cacheState_ = new QComboBox(this);
  cacheState_->setObjectName(QStringLiteral("cacheStateBox"));
  for (measure::CacheState c : measure::kCacheStates) {
    cacheState_->addItem(QString::fromLatin1(measure::cacheStateName(c)));
    cacheState_->setItemData(cacheState_->count() - 1, QString::fromLatin1(measure::cacheStateSummary(c)),
                             Qt::ToolTipRole);
  }
  cacheState_->setCurrentText(QString::fromLatin1(measure::cacheStateName(d.cacheState)));
  cacheState_->setToolTip(tr("Where a kernel's data is when it is timed (--cache-flush)"));
  transfer_ = spinBox(this, "transferBox", 1, tuning::kMaxBatch, d.transfer,
                      tr("With a warm start: the transferred programs each task's first round measures (--transfer)"));
  minutes_ = new QDoubleSpinBox(this);
  minutes_->setObjectName(QStringLiteral("minutesBox"));
  minutes_->setRange(0, 7 * 24 * 60);
  minutes_->setDecimals(1);
  minutes_->setSpecialValueText(tr("none"));
  minutes_->setSuffix(tr(" min"));
  minutes_->setValue(d.minutes);
  minutes_->setToolTip(
      tr("A wall-clock budget beside the trials: no round starts once it is spent (--minutes); "
         "for this tuning only"));
  timeout_ = spinBox(this, "timeoutBox", 1, tuning::kMaxTimeoutSeconds, d.timeoutSeconds,
                     tr("Seconds a program may run before it is stopped and counted as failed (--timeout)"));
  timeout_->setSuffix(tr(" s"));

  auto* form = new QFormLayout;
  form->addRow(tr("Search"), search_);
  form->addRow(tr("Seed"), seed_);
  form->addRow(tr("Programs per round"), batch_);
  form->addRow(tr("Population"), population_);
  form->addRow(tr("Cache state"), cacheState_);
  form->addRow(tr("Transferred programs"), transfer_);
  form->addRow(tr("Time budget"), minutes_);
  form->addRow(tr("Timeout per program"), timeout_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(buttons);
}

TuningDetails TuningDialog::details() const {
  TuningDetails d;
  d.search = search_->currentText();
  d.seed = seed_->value();
  d.batch = batch_->value();
  d.population = population_->value();
  d.cacheState = measure::kCacheStates[std::max(cacheState_->currentIndex(), 0)];
  d.transfer = transfer_->value();
  d.minutes = minutes_->value();
  d.timeoutSeconds = timeout_->value();
  return d;
}

}  // namespace tessel::ui
