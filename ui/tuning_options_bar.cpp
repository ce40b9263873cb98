#include "ui/tuning_options_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolBar>
#include <QToolButton>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "ui/studio_settings.h"

namespace tessel::ui {

TuningOptionsBar::TuningOptionsBar(QWidget* window) : QObject(window) {
  QSettings settings = studioSettings();
  targetBox_ = new QComboBox(window);
  targetBox_->setObjectName(QStringLiteral("targetBox"));
  targetBox_->addItem(QStringLiteral("cpu"));
  targetBox_->setToolTip(tr("Target (CUDA tuning is on the command line: tessel tune --target cuda)"));
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
}

TuningChoices TuningOptionsBar::choices() const {
  TuningChoices c;
  c.fusion = fusionBox_->currentText();
  // The first entry names no model: the knowledge base's, where there is one.
  c.costModel = costModelBox_->currentIndex() == 0 ? QString() : costModelBox_->currentText();
  c.costModelFile = costModelFile_;
  c.warmStart = warmStartBox_->isChecked();
  c.measure = measure();
  return c;
}

void TuningOptionsBar::save(int trials) const {
  QSettings settings = studioSettings();
  if (trials > 0) settings.setValue("tuning/trials", trials);
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
