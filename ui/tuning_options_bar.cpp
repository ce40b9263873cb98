#include "ui/tuning_options_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolBar>
#include <QToolButton>
#include <algorithm>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "ui/studio_settings.h"
#include "ui/tuning_dialog.h"

namespace tessel::ui {

TuningOptionsBar::TuningOptionsBar(QWidget* window) : QObject(window) {
  QSettings settings = studioSettings();
  createTargetBox(window);
  fusionBox_ = new QComboBox(window);
  fusionBox_->setObjectName(QStringLiteral("fusionBox"));
  fusionBox_->addItems({QStringLiteral("dp"), QStringLiteral("rule"), QStringLiteral("none")});
  fusionBox_->setToolTip(tr("Operator fusion: AutoGTCO's DP, TVM's rules, or none"));
  fusionBox_->setCurrentText(settings.value("tuning/fusion", "dp").toString());
  connect(fusionBox_, &QComboBox::currentTextChanged, this, &TuningOptionsBar::fusionChanged);
  createCostModelBoxes(window);
  createMeasureBox(window);
  budgetBox_ = new QSpinBox(window);
  budgetBox_->setObjectName(QStringLiteral("budgetBox"));
  budgetBox_->setRange(16, 1000000);
  budgetBox_->setSingleStep(64);
  budgetBox_->setSuffix(tr(" trials"));
  budgetBox_->setToolTip(tr("Trial budget of the whole model"));
  budgetBox_->setValue(settings.value("tuning/trials", 256).toInt());
  connect(budgetBox_, &QSpinBox::valueChanged, this, &TuningOptionsBar::trialsChanged);
  details_ = savedTuningDetails();
  detailsButton_ = new QToolButton(window);
  detailsButton_->setObjectName(QStringLiteral("tuningOptionsButton"));
  detailsButton_->setText(tr("Options..."));
  detailsButton_->setToolTip(tr("Search, seed, programs per round, population, cache state, time budget, timeout"));
  connect(detailsButton_, &QToolButton::clicked, this, &TuningOptionsBar::openDetailsDialog);
}

void TuningOptionsBar::openDetailsDialog() {
  auto* dialog = new TuningDialog(details_, detailsButton_->window());
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  connect(dialog, &QDialog::accepted, this, [this, dialog] { setDetails(dialog->details()); });
  dialog->open();
}

void TuningOptionsBar::setDetails(const TuningDetails& details) {
  details_ = details;
  emit detailsChanged();
}

void TuningOptionsBar::createTargetBox(QWidget* window) {
  targetBox_ = new QComboBox(window);
  targetBox_->setObjectName(QStringLiteral("targetBox"));
  targetBox_->setToolTip(tr("What to tune for: this machine's CPU, an x86-64 level, or its NVIDIA GPU (cuda)"));
  targets_ = measure::targetChoices();
  const QString last = studioSettings().value("tuning/target", "cpu").toString();
  int chosen = 0;
  auto* items = qobject_cast<QStandardItemModel*>(targetBox_->model());
  for (size_t i = 0; i < targets_.size(); ++i) {
    const target::Target& t = targets_[i].target;
    const QString text = QString::fromStdString(t.str());
    QString tip = t.isCuda() ? tr("This machine's NVIDIA GPU, its kernels compiled with NVRTC for its arch")
                  : t == target::Target::host()
                      ? tr("This machine's CPU (-march=native, %1, every core)")
                            .arg(QString::fromStdString(t.vectorIsaName()).toUpper())
                      : tr("Code any %1 CPU runs (%2), measured on this machine")
                            .arg(QString::fromStdString(t.arch), QString::fromStdString(t.vectorIsaName()).toUpper());
    targetBox_->addItem(text);
    const int row = targetBox_->count() - 1;
    if (!targets_[i].unavailable.empty()) {
      tip = tr("Not on this machine: %1").arg(QString::fromStdString(targets_[i].unavailable));
      items->item(row)->setEnabled(false);
    } else if (text == last) {
      chosen = row;
    }
    targetBox_->setItemData(row, tip, Qt::ToolTipRole);
  }
  targetBox_->setCurrentIndex(chosen);
  connect(targetBox_, &QComboBox::currentIndexChanged, this, &TuningOptionsBar::targetChanged);
}

target::Target TuningOptionsBar::target() const {
  const measure::TargetChoice& c = targets_.at(size_t(std::max(targetBox_->currentIndex(), 0)));
  return c.unavailable.empty() ? measure::resolvedHere(c.target) : c.target;
}

void TuningOptionsBar::setTargetChangeable(bool changeable) {
  targetBox_->setEnabled(changeable);
}

void TuningOptionsBar::createCostModelBoxes(QWidget* window) {
  QSettings settings = studioSettings();
  costModelBox_ = new QComboBox(window);
  costModelBox_->setObjectName(QStringLiteral("costModelBox"));
  // First the knowledge base's model (none named: what `tessel tune` does
  // without --cost-model), then the models this build can make, from the
  // registry the CLI reads too.
  costModelBox_->addItem(tr("pre-trained"));
  costModelBox_->setItemData(0,
                             tr("The knowledge base's pre-trained model where one is shipped for this machine, "
                                "else %1")
                                 .arg(QString::fromStdString(cost::defaultCostModel())),
                             Qt::ToolTipRole);
  for (const cost::CostModelEntry& m : cost::costModels())
    if (m.available) {
      costModelBox_->addItem(QString::fromStdString(m.name));
      costModelBox_->setItemData(costModelBox_->count() - 1, QString::fromStdString(m.summary), Qt::ToolTipRole);
    }
  costModelBox_->setToolTip(tr("Cost model that guides the search"));
  costModelBox_->setCurrentText(settings.value("tuning/costModel", costModelBox_->itemText(0)).toString());
  // Whether a tuning starts from what Tessel knows (tessel tune without --cold).
  warmStartBox_ = new QCheckBox(tr("Warm start"), window);
  warmStartBox_->setObjectName(QStringLiteral("warmStartBox"));
  warmStartBox_->setToolTip(
      tr("Start from the knowledge base and this database's similar tasks: each task's first round measures the "
         "programs transferred to it (untick to start from nothing, for comparisons)"));
  warmStartBox_->setChecked(settings.value("tuning/warm", true).toBool());
  // A trained model to start from (tessel costmodel train): clicking again
  // goes back to a fresh one.
  costModelFileButton_ = new QToolButton(window);
  costModelFileButton_->setObjectName(QStringLiteral("costModelFileButton"));
  costModelFileButton_->setText(tr("Pre-trained..."));
  costModelFileButton_->setToolTip(tr("Start from a trained cost model (tessel costmodel train)"));
  connect(costModelFileButton_, &QToolButton::clicked, this, [this, window] {
    if (!costModelFile_.isEmpty()) {
      emit costModelFileRequested({});
      return;
    }
    const QString path = QFileDialog::getOpenFileName(window, tr("Trained cost model"), QString(),
                                                      tr("Cost models (*.tcm);;All files (*)"));
    if (!path.isEmpty()) emit costModelFileRequested(path);
  });
}

// Where the programs are built and measured: here, or by a fleet's agents
// (tessel-agent) through Redis, as --measure on the command line.
void TuningOptionsBar::createMeasureBox(QWidget* window) {
  measureBox_ = new QComboBox(window);
  measureBox_->setObjectName(QStringLiteral("measureBox"));
  measureBox_->setEditable(true);
  measureBox_->addItem(QStringLiteral("local"));
  measureBox_->setMinimumContentsLength(18);
  measureBox_->setToolTip(
      tr("Where programs are measured: local, or a fleet's Redis "
         "(redis://[:PASSWORD@]HOST:PORT) whose agents (tessel-agent) serve the target"));
  const QString measure = studioSettings().value("tuning/measure", "local").toString();
  if (measure != QLatin1String("local")) measureBox_->addItem(measure);
  measureBox_->setCurrentText(measure);
  auto chosen = [this] { emit measureChosen(measureBox_->currentText()); };
  connect(measureBox_, &QComboBox::activated, this, chosen);
  connect(measureBox_->lineEdit(), &QLineEdit::editingFinished, this, chosen);
}

void TuningOptionsBar::addTo(QToolBar* toolBar) const {
  toolBar->addWidget(targetBox_);
  toolBar->addWidget(fusionBox_);
  toolBar->addWidget(costModelBox_);
  toolBar->addWidget(costModelFileButton_);
  toolBar->addWidget(warmStartBox_);
  toolBar->addWidget(measureBox_);
  toolBar->addWidget(budgetBox_);
  toolBar->addWidget(detailsButton_);
}

TuningChoices TuningOptionsBar::choices() const {
  TuningChoices c;
  c.fusion = fusionBox_->currentText();
  // The first entry names no model: the knowledge base's, where there is one.
  c.costModel = costModelBox_->currentIndex() == 0 ? QString() : costModelBox_->currentText();
  c.costModelFile = costModelFile_;
  c.warmStart = warmStartBox_->isChecked();
  c.measure = measure();
  c.details = details_;
  return c;
}

void TuningOptionsBar::save(int trials) const {
  QSettings settings = studioSettings();
  if (trials > 0) settings.setValue("tuning/trials", trials);
  settings.setValue("tuning/target", targetBox_->currentText());
  saveTuningDetails(details_);
  settings.setValue("tuning/fusion", fusionBox_->currentText());
  settings.setValue("tuning/costModel", costModelBox_->currentText());
  settings.setValue("tuning/warm", warmStartBox_->isChecked());
  const QString where = measure().trimmed();
  settings.setValue("tuning/measure", where.isEmpty() ? QStringLiteral("local") : where);
}

QString TuningOptionsBar::fusion() const {
  return fusionBox_->currentText();
}

void TuningOptionsBar::showFusion(const QString& fusion) {
  const QSignalBlocker quiet(fusionBox_);
  fusionBox_->setCurrentText(fusion);
}

QString TuningOptionsBar::measure() const {
  return measureBox_->currentText();
}

int TuningOptionsBar::trials() const {
  return budgetBox_->value();
}

void TuningOptionsBar::setTrials(int trials) {
  budgetBox_->setValue(trials);
}

QString TuningOptionsBar::costModel() const {
  return costModelBox_->currentText();
}

QString TuningOptionsBar::setCostModelFile(const QString& path) {
  if (!path.isEmpty()) {
    std::string name;
    try {
      name = cost::loadCostModelFile(path.toStdString())->name();
    } catch (const std::exception& e) {
      return QString::fromStdString(e.what());
    }
    costModelBox_->setCurrentText(QString::fromStdString(name));
    costModelFileButton_->setText(tr("Pre-trained: %1").arg(QFileInfo(path).fileName()));
    costModelFileButton_->setToolTip(tr("Starting from %1 (click for a fresh model)").arg(path));
  } else {
    costModelFileButton_->setText(tr("Pre-trained..."));
    costModelFileButton_->setToolTip(tr("Start from a trained cost model (tessel costmodel train)"));
  }
  costModelFile_ = path;
  costModelBox_->setEnabled(path.isEmpty());  // the file says which model it is
  return {};
}

}  // namespace tessel::ui
