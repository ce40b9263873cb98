#include "ui/run_panel.h"

#include <qcustomplot.h>

#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>

namespace tessel::ui {

namespace {

const QColor kMeasuredColour(31, 119, 180);  // blue
const QColor kEstimateColour(255, 127, 14);  // orange
const char* kWrongStyle = "color: #b00020; font-weight: bold;";
const char* kCorrectStyle = "color: #1b7f2a; font-weight: bold;";

// Milliseconds with the digits that matter: 12.3, 1.234, 0.0123.
QString ms(double value) {
  if (!std::isfinite(value)) return QStringLiteral("-");
  if (value >= 100) return QString::number(value, 'f', 1);
  if (value >= 1) return QString::number(value, 'f', 3);
  return QString::number(value, 'g', 3);
}

// A cell: its text shown, its number sorted by (Qt::UserRole).
QStandardItem* cell(const QString& text, const QVariant& sortKey, bool number) {
  auto* item = new QStandardItem(text);
  item->setData(sortKey, Qt::UserRole);
  item->setEditable(false);
  if (number) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QLabel* valueLabel(QWidget* parent, const char* name) {
  auto* label = new QLabel(parent);
  label->setObjectName(QLatin1String(name));
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

}  // namespace

RunPanel::RunPanel(QWidget* parent)
    : QWidget(parent),
      repeatsBox_(new QSpinBox(this)),
      runButton_(new QToolButton(this)),
      stopButton_(new QToolButton(this)),
      status_(valueLabel(this, "runStatus")),
      error_(valueLabel(this, "runError")),
      disturbed_(valueLabel(this, "runDisturbed")),
      tessel_(nullptr),
      libtorch_(nullptr),
      onednn_(nullptr),
      speedup_(nullptr),
      correct_(nullptr),
      tasks_(nullptr),
      estimate_(nullptr),
      contention_(nullptr),
      figures_(new QWidget(this)),
      rows_(new QStandardItemModel(0, ColumnCount, this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)),
      chart_(nullptr),
      measuredBars_(nullptr),
      estimateBars_(nullptr) {
  setObjectName(QStringLiteral("runPanel"));
  // All of it scrolls in a small dock: the panel is a tab beside the search
  // space and must not make the window's minimum larger than that view does.
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* scroll = new QScrollArea(this);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidgetResizable(true);
  auto* body = new QWidget(scroll);
  auto* content = new QVBoxLayout(body);
  content->setContentsMargins(4, 4, 4, 4);
  content->setSpacing(4);
  scroll->setWidget(body);
  layout->addWidget(scroll);

  auto* bar = new QHBoxLayout;
  runButton_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  stopButton_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  runButton_->hide();  // until the window gives its actions
  stopButton_->hide();
  bar->addWidget(runButton_);
  bar->addWidget(stopButton_);
  bar->addWidget(new QLabel(tr("Repeats:"), this));
  repeatsBox_->setObjectName(QStringLiteral("runRepeatsBox"));
  repeatsBox_->setRange(1, 10000);
  repeatsBox_->setValue(30);
  repeatsBox_->setToolTip(
      tr("Timed runs of each side after a warm-up (tessel run --repeats): the medians are "
         "of these"));
  bar->addWidget(repeatsBox_);
  bar->addStretch(1);
  content->addLayout(bar);

  status_->setWordWrap(true);
  content->addWidget(status_);

  error_->setWordWrap(true);
  error_->setStyleSheet(kWrongStyle);
  error_->hide();
  content->addWidget(error_);

  // A disturbed run must not be read as a speed-up: said loudly.
  disturbed_->setWordWrap(true);
  disturbed_->setStyleSheet(
      "background: #fff1c2; color: #6b4500; border: 1px solid #d9a400; border-radius: 3px; padding: 4px; "
      "font-weight: bold;");
  disturbed_->hide();
  content->addWidget(disturbed_);

  auto* grid = new QGridLayout(figures_);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setHorizontalSpacing(12);
  auto row = [&](int r, int c, const QString& name, const char* objectName) {
    auto* title = new QLabel(name, figures_);
    title->setStyleSheet("color: #555;");
    grid->addWidget(title, r, c * 2);
    QLabel* value = valueLabel(figures_, objectName);
    grid->addWidget(value, r, c * 2 + 1);
    return value;
  };
  tessel_ = row(0, 0, tr("Tessel"), "runTessel");
  libtorch_ = row(1, 0, tr("LibTorch"), "runLibTorch");
  onednn_ = row(2, 0, tr("oneDNN"), "runOnednn");
  onednn_->setToolTip(
      tr("The model run with oneDNN's primitives (weights reordered once, fused post-ops): tessel run --compare "
         "onednn"));
  speedup_ = row(3, 0, tr("Speed-up"), "runSpeedup");
  correct_ = row(0, 1, tr("Result"), "runCorrect");
  tasks_ = row(1, 1, tr("Tasks"), "runTasks");
  estimate_ = row(2, 1, tr("Estimate"), "runEstimate");
  contention_ = row(3, 1, tr("CPU taken"), "runContention");
  contention_->setToolTip(
      tr("While each side was timed: the share of the CPUs other processes used, and (steal) the share the "
         "hypervisor gave to other machines"));
  QFont big = tessel_->font();
  big.setPointSizeF(big.pointSizeF() * 1.25);
  big.setBold(true);
  for (QLabel* l : {tessel_, libtorch_, onednn_, speedup_})
    l->setFont(big);
  correct_->setWordWrap(true);  // a WRONG result's error is long
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(3, 1);
  content->addWidget(figures_);

  auto* splitter = new QSplitter(Qt::Horizontal, body);
  splitter->setChildrenCollapsible(false);
  rows_->setHorizontalHeaderLabels({tr("Step"), tr("Task"), tr("Measured ms"), tr("Estimate ms"), tr("Ratio")});
  proxy_->setSourceModel(rows_);
  proxy_->setSortRole(Qt::UserRole);
  table_->setObjectName(QStringLiteral("runPartitions"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(Step, Qt::AscendingOrder);  // run order until a header is clicked
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setToolTip(tr("Per step of the run: its median time, its task's tuned estimate, run / estimate"));
  splitter->addWidget(table_);

  chart_ = new QCustomPlot(splitter);
  chart_->setObjectName(QStringLiteral("runChart"));
  chart_->setMinimumSize(160, 60);                // the dock may be short: the window's minimum height must not grow
  chart_->setNotAntialiasedElements(QCP::aeAll);  // no OpenGL offscreen; crisp bars
  chart_->yAxis->setLabel(tr("ms"));
  chart_->xAxis->setLabel(tr("partition (in run order)"));
  measuredBars_ = new QCPBars(chart_->xAxis, chart_->yAxis);
  measuredBars_->setName(tr("measured"));
  measuredBars_->setPen(QPen(kMeasuredColour.darker(120)));
  measuredBars_->setBrush(kMeasuredColour);
  estimateBars_ = new QCPBars(chart_->xAxis, chart_->yAxis);
  estimateBars_->setName(tr("estimate"));
  estimateBars_->setPen(QPen(kEstimateColour.darker(120)));
  estimateBars_->setBrush(kEstimateColour);
  auto* group = new QCPBarsGroup(chart_);
  for (QCPBars* b : {measuredBars_, estimateBars_}) {
    b->setWidth(0.38);
    b->setBarsGroup(group);
  }
  chart_->legend->setVisible(true);
  chart_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
  splitter->addWidget(chart_);
  splitter->setSizes({1000, 1000});
  content->addWidget(splitter, 1);

  clear(tr("Not run yet: Run (Ctrl+R) runs the tuned model against LibTorch"));
}

void RunPanel::setActions(QAction* run, QAction* stop) {
  runButton_->setDefaultAction(run);
  stopButton_->setDefaultAction(stop);
  runButton_->show();
  stopButton_->show();
}

int RunPanel::repeats() const {
  return repeatsBox_->value();
}

void RunPanel::setRepeats(int repeats) {
  repeatsBox_->setValue(repeats);
}

QString RunPanel::statusText() const {
  return status_->text();
}

QString RunPanel::errorText() const {
  return error_->isVisibleTo(this) ? error_->text() : QString();
}

void RunPanel::clear(const QString& hint) {
  result_.reset();
  taken_ = {};
  session_ = storedRun_ = 0;
  storeError_.clear();
  status_->setText(hint);
  error_->hide();
  disturbed_->hide();
  figures_->hide();
  rows_->removeRows(0, rows_->rowCount());
  measuredBars_->data()->clear();
  estimateBars_->data()->clear();
  chart_->replot();
}

void RunPanel::showRunning(const QString& what) {
  // The last result stays until the new one replaces it.
  status_->setText(what);
  error_->hide();
}

void RunPanel::showResult(const RunResult& result, const QDateTime& taken, qint64 session, qint64 storedRun) {
  result_ = result;
  taken_ = taken;
  session_ = session;
  storedRun_ = storedRun;
  storeError_.clear();
  error_->hide();
  fillFigures(result);
  fillPartitions(result);
  fillChart(result);
  updateStatus();
}

void RunPanel::setStored(qint64 storedRun, const QString& error) {
  storedRun_ = storedRun;
  storeError_ = error;
  updateStatus();
}

void RunPanel::showError(const QString& message) {
  clear(tr("The run failed"));
  error_->setText(message);
  error_->show();
}

void RunPanel::updateStatus() {
  if (!result_) return;
  const QString when = taken_.toUTC().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss 'UTC'"));
  QString text =
      session_ ? tr("Run of %1, with the kernels of session %2").arg(when).arg(session_) : tr("Run of %1").arg(when);
  if (storedRun_)
    text += tr(" (stored as run %1)").arg(storedRun_);
  else if (!storeError_.isEmpty())
    text += tr(" (not stored: %1)").arg(storeError_);
  status_->setText(text);
}

void RunPanel::fillFigures(const RunResult& r) {
  const QString spread = tr("%1 ms  (%2 - %3 over %4 runs)");
  tessel_->setText(spread.arg(ms(r.tesselMs), ms(r.tesselMinMs), ms(r.tesselMaxMs)).arg(r.repeats));
  libtorch_->setText(spread.arg(ms(r.libtorchMs), ms(r.libtorchMinMs), ms(r.libtorchMaxMs)).arg(r.repeats));
  const bool withOnednn = std::isfinite(r.onednnMs);
  if (withOnednn)
    onednn_->setText(spread.arg(ms(r.onednnMs), ms(r.onednnMinMs), ms(r.onednnMaxMs)).arg(r.repeats) +
                     (r.onednnCorrect ? QString() : tr("  WRONG by %1").arg(r.onednnMaxAbsErr, 0, 'g', 3)));
  else
    onednn_->setText(r.onednnNote.isEmpty() ? tr("not compared") : tr("not run: %1").arg(r.onednnNote));
  QString speedup = tr("%1x LibTorch's speed").arg(r.speedup, 0, 'f', 2);
  if (withOnednn) speedup += tr(", %1x oneDNN's").arg(r.onednnSpeedup, 0, 'f', 2);
  speedup_->setText(r.disturbed ? tr("%1x (disturbed: not a speed-up)").arg(r.speedup, 0, 'f', 2) : speedup);
  correct_->setText(r.correct ? tr("correct (largest difference %1, outputs up to %2)")
                                    .arg(r.maxAbsErr, 0, 'g', 3)
                                    .arg(r.maxAbsRef, 0, 'g', 3)
                              : tr("WRONG: largest difference %1 from LibTorch (outputs up to %2)")
                                    .arg(r.maxAbsErr, 0, 'g', 3)
                                    .arg(r.maxAbsRef, 0, 'g', 3));
  correct_->setStyleSheet(r.correct ? kCorrectStyle : kWrongStyle);
  tasks_->setText(tr("%1 tuned, %2 naive").arg(r.tasksTuned).arg(r.tasksNaive));
  estimate_->setText(
      std::isfinite(r.estimateMs)
          ? tr("%1 ms (run / estimate %2)").arg(ms(r.estimateMs)).arg(r.tesselMs / r.estimateMs, 0, 'f', 2)
          : tr("none (a task runs its naive program)"));
  auto taken = [](const RunResult::Contention& c) {
    QString t = tr("%1 %").arg(100 * c.othersShare, 0, 'f', 0);
    if (c.stealShare > 0) t += tr(" (steal %1 %)").arg(100 * c.stealShare, 0, 'f', 0);
    return t;
  };
  QString contention = tr("by others: %1 during Tessel's runs, %2 during LibTorch's")
                           .arg(taken(r.tesselContention), taken(r.libtorchContention));
  if (withOnednn) contention += tr(", %1 during oneDNN's").arg(taken(r.onednnContention));
  contention_->setText(contention);
  disturbed_->setText(
      tr("Disturbed: another process had the cores: do not read this ratio as a speed-up. %1. Run it again on a "
         "quiet machine.")
          .arg(r.disturbance.isEmpty() ? tr("(no reason given)") : r.disturbance));
  disturbed_->setVisible(r.disturbed);
  figures_->show();
}

void RunPanel::fillPartitions(const RunResult& r) {
  // The proxy keeps the order the user picked (run order by default).
  rows_->removeRows(0, rows_->rowCount());
  for (int i = 0; i < r.partitions.size(); ++i) {
    const PartitionTiming& p = r.partitions[i];
    const QString task =
        p.task.isEmpty() ? (p.group >= 0 ? tr("(naive)") : QString()) : taskNames_.value(p.task, p.task);
    QList<QStandardItem*> items = {cell(p.step, i, false), cell(task, task, false),
                                   cell(ms(p.measuredMs), p.measuredMs, true),
                                   cell(ms(p.estimateMs), std::isfinite(p.estimateMs) ? p.estimateMs : -1.0, true),
                                   cell(std::isfinite(p.ratio) ? QString::number(p.ratio, 'f', 2) : QStringLiteral("-"),
                                        std::isfinite(p.ratio) ? p.ratio : -1.0, true)};
    items[Task]->setToolTip(p.task);
    items[Step]->setToolTip(p.group >= 0 ? tr("partition %1: %2").arg(p.group).arg(p.step) : p.step);
    rows_->appendRow(items);
  }
  table_->resizeColumnsToContents();
}

void RunPanel::fillChart(const RunResult& r) {
  QVector<double> keys, measured, estimateKeys, estimates;
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  double top = 0;
  for (int i = 0; i < r.partitions.size(); ++i) {
    const PartitionTiming& p = r.partitions[i];
    keys << i + 1;
    measured << p.measuredMs;
    top = std::max(top, p.measuredMs);
    if (std::isfinite(p.estimateMs)) {
      estimateKeys << i + 1;
      estimates << p.estimateMs;
      top = std::max(top, p.estimateMs);
    }
    ticker->addTick(i + 1, p.group >= 0 ? QString::number(p.group) : tr("cv"));
  }
  measuredBars_->setData(keys, measured, true);
  estimateBars_->setData(estimateKeys, estimates, true);
  chart_->xAxis->setTicker(ticker);
  chart_->xAxis->setTickLabelRotation(r.partitions.size() > 24 ? 90 : 0);
  chart_->xAxis->setRange(0.3, r.partitions.size() + 0.7);
  chart_->yAxis->setRange(0, top > 0 ? top * 1.12 : 1);
  chart_->replot();
}

}  // namespace tessel::ui
