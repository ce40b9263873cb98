#include "ui/plots_panel.h"

#include <qcustomplot.h>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSplitter>
#include <QTabBar>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "ui/model_quality_plot.h"
#include "ui/rank_correlation.h"

namespace tessel::ui {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Up to this many points the scatter draws discs; beyond, single pixels
// (discs of 100k points would hide the density and cost a lot to draw).
constexpr int kDiscPointLimit = 5000;
// Step lines with more rounds than this get no markers.
constexpr int kMarkerPointLimit = 200;
// The all-tasks best plot gets a legend only while it stays readable.
constexpr int kLegendTaskLimit = 10;

// Tableau 10: distinct on white, and in the same order for every plot.
QColor taskColor(int task) {
  static const QColor colors[] = {
      QColor(31, 119, 180), QColor(255, 127, 14),  QColor(44, 160, 44),   QColor(214, 39, 40),  QColor(148, 103, 189),
      QColor(140, 86, 75),  QColor(227, 119, 194), QColor(127, 127, 127), QColor(188, 189, 34), QColor(23, 190, 207)};
  return colors[task % 10];
}

QCustomPlot* makePlot(QWidget* parent, const QString& xLabel, const QString& yLabel) {
  auto* plot = new QCustomPlot(parent);
  plot->setMinimumSize(160, 120);
  plot->xAxis->setLabel(xLabel);
  plot->yAxis->setLabel(yLabel);
  QFont font = plot->font();
  font.setPointSizeF(font.pointSizeF() * 0.85);
  plot->xAxis->setLabelFont(font);
  plot->yAxis->setLabelFont(font);
  plot->xAxis->setTickLabelFont(font);
  plot->yAxis->setTickLabelFont(font);
  plot->legend->setFont(font);
  plot->legend->setIconSize(14, 8);
  plot->legend->setRowSpacing(-2);
  // Drawing into the widget's buffer only: nothing here needs OpenGL, and
  // the offscreen platform (tests, screenshots) has none.
  plot->setNotAntialiasedElements(QCP::aeAll);
  plot->setAntialiasedElements(QCP::aePlottables | QCP::aeItems);
  return plot;
}

QCPTextElement* addTitle(QCustomPlot* plot, const QString& text) {
  plot->plotLayout()->insertRow(0);
  QFont font = plot->font();
  font.setBold(true);
  font.setPointSizeF(font.pointSizeF() * 0.9);
  auto* title = new QCPTextElement(plot, text, font);
  plot->plotLayout()->addElement(0, 0, title);
  return title;
}

}  // namespace

PlotsPanel::PlotsPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);

  auto* bar = new QHBoxLayout;
  bar->addWidget(new QLabel(tr("Task:"), this));
  taskCombo_ = new QComboBox(this);
  taskCombo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  taskCombo_->setToolTip(tr("The task shown by the best-latency plot and the scatter"));
  bar->addWidget(taskCombo_);
  logCheck_ = new QCheckBox(tr("Log scale"), this);
  logCheck_->setToolTip(tr("Logarithmic latency axis on the best-latency plot"));
  logCheck_->setChecked(true);
  bar->addWidget(logCheck_);
  bar->addStretch(1);
  layout->addLayout(bar);

  splitter_ = new QSplitter(Qt::Horizontal, this);
  splitter_->setChildrenCollapsible(false);
  layout->addWidget(splitter_, 1);

  bestPlot_ = makePlot(splitter_, tr("trials"), tr("best latency (ms)"));
  bestTitle_ = addTitle(bestPlot_, tr("Best latency"));
  bestPlot_->legend->setVisible(false);
  bestPlot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

  estimatePlot_ = makePlot(splitter_, tr("wall time (s)"), tr("estimated end-to-end latency (ms)"));
  addTitle(estimatePlot_, tr("Estimated end-to-end latency"));
  estimateGraph_ = estimatePlot_->addGraph();
  estimateGraph_->setName(tr("estimate"));
  estimateGraph_->setLineStyle(QCPGraph::lsStepLeft);
  estimateGraph_->setPen(QPen(QColor(31, 119, 180), 1.5));

  // Ranks within each task, as fractions: 0 its worst program, 1 its best.
  // The cost model's column: its scatter, and its rho round by round, as
  // two tabs (stacked, they would make the dock twice as tall).
  costTabs_ = new QTabWidget(splitter_);
  costTabs_->setObjectName(QStringLiteral("costModelTabs"));
  costTabs_->setDocumentMode(true);
  scatterPlot_ = makePlot(costTabs_, tr("predicted rank in task"), tr("measured rank in task"));
  scatterTitle_ = addTitle(scatterPlot_, QString());
  diagonalGraph_ = scatterPlot_->addGraph();
  diagonalGraph_->setName(tr("y = x (perfect)"));
  diagonalGraph_->setData({0.0, 1.0}, {0.0, 1.0}, true);
  diagonalGraph_->setPen(QPen(QColor(120, 120, 120), 1, Qt::DashLine));
  scatterGraph_ = scatterPlot_->addGraph();
  scatterGraph_->setName(tr("measured programs"));
  scatterGraph_->setLineStyle(QCPGraph::lsNone);
  scatterGraph_->setPen(QPen(QColor(31, 119, 180, 150)));
  // Antialiased scatters of 100k points cost several times more to draw
  // and look no better at this size.
  scatterGraph_->setAntialiased(false);
  scatterGraph_->setAntialiasedScatters(false);
  untrainedGraph_ = scatterPlot_->addGraph();
  untrainedGraph_->setName(tr("untrained model's scores"));
  untrainedGraph_->setLineStyle(QCPGraph::lsNone);
  untrainedGraph_->setPen(QPen(QColor(150, 150, 150, 150)));
  untrainedGraph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
  untrainedGraph_->setAntialiased(false);
  untrainedGraph_->setAntialiasedScatters(false);
  for (QCPAxis* axis : {scatterPlot_->xAxis, scatterPlot_->yAxis})
    axis->setRange(0, 1.05);
  scatterPlot_->legend->setVisible(true);
  scatterPlot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignLeft);
  scatterPlot_->setToolTip(
      tr("Each program's rank within its task, as a fraction (0 the task's worst, 1 its best): "
         "by the cost model's score (x) and by its measured time (y). Grey: scored by a model that had "
         "learned nothing yet, ranked among themselves and left out of ρ. Click a point to inspect its program"));
  bestPlot_->setToolTip(tr("Click a round to inspect the task's best program after it"));
  connectPicking(scatterPlot_, &PlotsPanel::scatterProgramAt);
  connectPicking(bestPlot_, &PlotsPanel::bestProgramAt);

  roundsPlot_ = new ModelQualityPlot(costTabs_);
  // The tab bar's height comes off the plots': the dock keeps its minimum height.
  scatterPlot_->setMinimumHeight(90);
  roundsPlot_->setMinimumHeight(90);
  costTabs_->addTab(scatterPlot_, tr("Predicted vs measured"));
  costTabs_->addTab(roundsPlot_, tr("ρ per round"));
  splitter_->setSizes({1000, 1000, 1000});

  timer_.setSingleShot(true);
  connect(&timer_, &QTimer::timeout, this, [this] { runUpdateCycle(true); });
  // activated: only the user's picks, not selectTask's own updates.
  connect(taskCombo_, &QComboBox::activated, this, [this](int index) {
    const int task = taskCombo_->itemData(index).toInt();
    selectTask(task);
    emit taskSelected(task);
  });
  connect(logCheck_, &QCheckBox::toggled, this, &PlotsPanel::setBestLogScale);

  setTasks({});
  setBestLogScale(true);
  replotNow();
}

PlotsPanel::~PlotsPanel() = default;

void PlotsPanel::setTasks(const QStringList& taskNames) {
  taskNames_ = taskNames;
  selected_ = -1;
  updateTaskSelector();
  clear();
}

void PlotsPanel::clear() {
  taskData_.assign(static_cast<size_t>(taskNames_.size()), TaskData{});
  estimateTime_.clear();
  estimateMs_.clear();
  programs_.clear();
  nextRound_ = 0;
  flags_.assign(static_cast<size_t>(taskNames_.size()), QString());
  invalidateAll();
}

void PlotsPanel::invalidateAll() {
  scatterStale_ = true;
  markDirty(true, true, true);
}

void PlotsPanel::markDirty(bool best, bool estimate, bool scatter, int delayMs) {
  bestDirty_ |= best;
  estimateDirty_ |= estimate;
  scatterDirty_ |= scatter;
  if (!(best || estimate || scatter)) return;
  // Not restarted by every change: a steady stream must still redraw.
  if (!timer_.isActive() || delayMs < timer_.remainingTime()) timer_.start(delayMs);
}

void PlotsPanel::addRound(int task, int taskTrials, double bestSeconds, double estimateSeconds, double elapsedSeconds) {
  bool best = false;
  if (validTask(task) && std::isfinite(bestSeconds) && bestSeconds > 0) {
    TaskData& data = taskData_[static_cast<size_t>(task)];
    data.trials.append(taskTrials);
    data.bestMs.append(bestSeconds * 1e3);
    best = shown(task);
  }
  bool estimate = false;
  if (std::isfinite(estimateSeconds) && std::isfinite(elapsedSeconds)) {
    estimateTime_.append(elapsedSeconds);
    estimateMs_.append(estimateSeconds * 1e3);
    estimate = true;
  }
  markDirty(best, estimate, false);
}

void PlotsPanel::addProgram(int task, int round, double predicted, double measured, bool untrained) {
  std::vector<double>& seconds = taskData_[static_cast<size_t>(task)].seconds;
  const int ordinal = int(seconds.size());
  seconds.push_back(std::isfinite(measured) && measured > 0 ? measured : kNaN);
  if (!std::isfinite(predicted) || !std::isfinite(measured) || measured <= 0) return;
  programs_.push_back({task, round, predicted, measured, untrained, ordinal});
}

void PlotsPanel::addPrograms(int task, const QVector<double>& predicted, const QVector<double>& measuredSeconds,
                             bool untrained) {
  if (!validTask(task)) return;
  const int round = nextRound_++;
  const qsizetype n = std::min(predicted.size(), measuredSeconds.size());
  for (qsizetype i = 0; i < n; ++i)
    addProgram(task, round, predicted[i], measuredSeconds[i], untrained);
  if (n > 0) checkModel(task);
  if (n > 0 && shown(task)) {
    scatterStale_ = true;
    markDirty(false, false, true);
  }
}

void PlotsPanel::addProgramsBulk(const QVector<int>& task, const QVector<double>& predicted,
                                 const QVector<double>& measuredSeconds, const QVector<int>& round,
                                 const QVector<bool>& untrained) {
  const qsizetype n = std::min({task.size(), predicted.size(), measuredSeconds.size()});
  programs_.reserve(programs_.size() + static_cast<size_t>(n));
  const int first = nextRound_;
  for (qsizetype i = 0; i < n; ++i) {
    // Without rounds, each record is a round of its own (never pooled wrongly).
    const int r = first + (i < round.size() ? round[i] : int(i));
    nextRound_ = std::max(nextRound_, r + 1);
    if (validTask(task[i]))
      addProgram(task[i], r, predicted[i], measuredSeconds[i], i < untrained.size() && untrained[i]);
  }
  for (int t = 0; t < taskNames_.size(); ++t)
    checkModel(t);
  // A task's best may have changed anywhere: rebuild the whole scatter.
  if (n > 0) {
    scatterStale_ = true;
    markDirty(false, false, true);
  }
}

void PlotsPanel::checkModel(int task) {
  if (!validTask(task)) return;
  RoundRho pooled;
  QString& flag = flags_[static_cast<size_t>(task)];
  if (!worseThanChance(programs_, task, &pooled)) {
    flag.clear();
    return;
  }
  if (!flag.isEmpty()) return;  // said already
  flag = tr("%1: the trained model ranks its programs worse than chance over its last %2 rounds (pooled ρ = %3 "
            "[%4, %5], n = %6)")
             .arg(taskNames_[task])
             .arg(kFlagRounds)
             .arg(pooled.rho, 0, 'f', 2)
             .arg(pooled.interval.low, 0, 'f', 2)
             .arg(pooled.interval.high, 0, 'f', 2)
             .arg(pooled.n);
  emit modelFlagged(task, flag);
}

QList<int> PlotsPanel::flaggedTasks() const {
  QList<int> out;
  for (size_t t = 0; t < flags_.size(); ++t)
    if (!flags_[t].isEmpty()) out << int(t);
  return out;
}

void PlotsPanel::selectTask(int task) {
  if (!validTask(task)) task = -1;
  if (task == selected_) return;
  selected_ = task;
  {
    const QSignalBlocker block(taskCombo_);
    taskCombo_->setCurrentIndex(task + 1);
  }
  scatterStale_ = true;
  // A user action: draw at the next turn of the event loop, not in 250 ms.
  markDirty(true, false, true, 0);
}

void PlotsPanel::setBestLogScale(bool on) {
  {
    const QSignalBlocker block(logCheck_);
    logCheck_->setChecked(on);
  }
  QCPAxis* axis = bestPlot_->yAxis;
  const auto type = on ? QCPAxis::stLogarithmic : QCPAxis::stLinear;
  if (axis->scaleType() == type) return;
  axis->setScaleType(type);
  if (on)
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
  else
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
  axis->setNumberFormat(on ? "gb" : "g");
  markDirty(true, false, false, 0);
}

bool PlotsPanel::bestLogScale() const {
  return bestPlot_->yAxis->scaleType() == QCPAxis::stLogarithmic;
}

void PlotsPanel::replotNow() {
  timer_.stop();
  runUpdateCycle(false);
}

void PlotsPanel::runUpdateCycle(bool queued) {
  if (!(bestDirty_ || estimateDirty_ || scatterDirty_)) return;
  // Queued: the drawing itself waits for the event loop, where QCustomPlot
  // merges it with any other replot request of the same plot.
  const auto priority = queued ? QCustomPlot::rpQueuedReplot : QCustomPlot::rpRefreshHint;
  if (bestDirty_) {
    rebuildBestPlot();
    bestPlot_->replot(priority);
  }
  if (estimateDirty_) {
    rebuildEstimatePlot();
    estimatePlot_->replot(priority);
  }
  if (scatterDirty_) {
    rebuildScatterPlot();
    scatterPlot_->replot(priority);
    rebuildRoundsPlot();
    roundsPlot_->replot(priority);
  }
  bestDirty_ = estimateDirty_ = scatterDirty_ = false;
  ++replotCount_;
}

void PlotsPanel::rebuildBestPlot() {
  bestPlot_->clearGraphs();
  std::vector<int> tasks;
  if (selected_ >= 0) {
    tasks.push_back(selected_);
  } else {
    for (int t = 0; t < taskNames_.size(); ++t)
      if (!taskData_[static_cast<size_t>(t)].trials.isEmpty()) tasks.push_back(t);
  }
  double maxTrials = 0, minMs = kInf, maxMs = 0;
  for (int t : tasks) {
    const TaskData& data = taskData_[static_cast<size_t>(t)];
    QCPGraph* graph = bestPlot_->addGraph();
    graph->setName(taskNames_[t]);
    graph->setProperty("task", t);  // for picking
    // The best so far holds from one round to the next.
    graph->setLineStyle(QCPGraph::lsStepLeft);
    graph->setPen(QPen(taskColor(t), 1.5));
    // Markers on a few rounds show where measurements were; on many, they
    // only cost drawing time.
    if (selected_ >= 0 && data.trials.size() <= kMarkerPointLimit)
      graph->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, 4));
    graph->setData(data.trials, data.bestMs);
    for (qsizetype i = 0; i < data.trials.size(); ++i) {
      maxTrials = std::max(maxTrials, data.trials[i]);
      minMs = std::min(minMs, data.bestMs[i]);
      maxMs = std::max(maxMs, data.bestMs[i]);
    }
  }
  bestPlot_->legend->setVisible(selected_ < 0 && !tasks.empty() && static_cast<int>(tasks.size()) <= kLegendTaskLimit);
  bestTitle_->setText(selected_ >= 0 ? tr("Best latency: %1").arg(taskNames_[selected_])
                                     : tr("Best latency: all tasks"));
  bestPlot_->xAxis->setRange(0, std::max(1.0, maxTrials * 1.03));
  if (maxMs <= 0) {
    bestPlot_->yAxis->setRange(bestLogScale() ? 0.01 : 0, 1);
  } else if (bestLogScale()) {
    // Whole decades read best on a log axis; at least one around the data.
    bestPlot_->yAxis->setRange(std::pow(10, std::floor(std::log10(minMs))),
                               std::pow(10, std::ceil(std::log10(maxMs * 1.0001))));
  } else {
    bestPlot_->yAxis->setRange(0, maxMs * 1.05);
  }
}

void PlotsPanel::rebuildEstimatePlot() {
  estimateGraph_->setData(estimateTime_, estimateMs_);
  estimateGraph_->setScatterStyle(estimateTime_.size() <= kMarkerPointLimit
                                      ? QCPScatterStyle(QCPScatterStyle::ssCircle, 3)
                                      : QCPScatterStyle(QCPScatterStyle::ssNone));
  double maxT = 0, maxMs = 0;
  for (qsizetype i = 0; i < estimateTime_.size(); ++i) {
    maxT = std::max(maxT, estimateTime_[i]);
    maxMs = std::max(maxMs, estimateMs_[i]);
  }
  estimatePlot_->xAxis->setRange(0, maxT > 0 ? maxT * 1.03 : 1);
  estimatePlot_->yAxis->setRange(0, maxMs > 0 ? maxMs * 1.05 : 1);
}

void PlotsPanel::refreshScatterCache() const {
  if (!scatterStale_) return;
  scatterStale_ = false;
  // Each shown task's programs, ranked within the task: a trained model's
  // among themselves, an untrained model's among themselves.
  std::vector<std::vector<size_t>> byTask(2 * taskData_.size());
  for (size_t i = 0; i < programs_.size(); ++i)
    if (shown(programs_[i].task)) byTask[2 * size_t(programs_[i].task) + programs_[i].untrained].push_back(i);
  // (x, y, program) of each point, in the order of the groups.
  std::vector<std::tuple<double, double, size_t>> points[2];
  std::vector<std::pair<double, double>> fractions;
  for (size_t group = 0; group < byTask.size(); ++group) {
    if (byTask[group].empty()) continue;
    fractions.clear();
    appendRankFractions(programs_, byTask[group], fractions);
    for (size_t k = 0; k < fractions.size(); ++k)
      points[group % 2].emplace_back(fractions[k].first, fractions[k].second, byTask[group][k]);
  }
  // QCPGraph draws (and samples adaptively) sorted keys only.
  auto keep = [](std::vector<std::tuple<double, double, size_t>>& p, std::vector<double>& xs, std::vector<double>& ys,
                 std::vector<size_t>& program) {
    std::sort(p.begin(), p.end());
    xs.resize(p.size());
    ys.resize(p.size());
    program.resize(p.size());
    for (size_t i = 0; i < p.size(); ++i)
      std::tie(xs[i], ys[i], program[i]) = p[i];
  };
  keep(points[0], scatterX_, scatterY_, scatterProgram_);
  keep(points[1], untrainedX_, untrainedY_, untrainedProgram_);
  rho_ = scatterX_.size() < 2 ? kNaN : spearmanRankCorrelation(scatterX_, scatterY_);
}

void PlotsPanel::rebuildScatterPlot() {
  refreshScatterCache();
  auto fill = [](QCPGraph* graph, const std::vector<double>& xs, const std::vector<double>& ys) {
    QVector<QCPGraphData> data(static_cast<qsizetype>(xs.size()));
    for (size_t i = 0; i < xs.size(); ++i)
      data[static_cast<qsizetype>(i)] = QCPGraphData(xs[i], ys[i]);
    graph->data()->set(data, true);
  };
  fill(scatterGraph_, scatterX_, scatterY_);
  fill(untrainedGraph_, untrainedX_, untrainedY_);
  if (scatterX_.size() <= static_cast<size_t>(kDiscPointLimit))
    scatterGraph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 4));
  else
    scatterGraph_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDot));
  // In the legend only while there are some.
  if (untrainedX_.empty())
    untrainedGraph_->removeFromLegend();
  else
    untrainedGraph_->addToLegend();
  scatterTitle_->setText(scatterSummary());
}

void PlotsPanel::rebuildRoundsPlot() {
  // The shown tasks' rounds; pooled over the trained ones (ranks within each round).
  std::vector<RoundRho> rounds = rhoPerRound(programs_, selected_);
  std::map<int, std::vector<size_t>> members;  // round -> programs
  for (size_t i = 0; i < programs_.size(); ++i)
    if (shown(programs_[i].task) && !programs_[i].untrained) members[programs_[i].round].push_back(i);
  std::vector<std::vector<size_t>> groups;
  for (auto& [round, which] : members)
    groups.push_back(std::move(which));
  const RoundRho pooled = pooledRho(programs_, groups);
  QStringList flags;
  for (int t = 0; t < taskNames_.size(); ++t)
    if (shown(t) && !flags_[static_cast<size_t>(t)].isEmpty()) flags << flags_[static_cast<size_t>(t)];
  roundsPlot_->setRounds(rounds, pooled, flags);
  // A flagged task marks the tab too, wherever the user is looking.
  costTabs_->setTabText(1, flags.isEmpty() ? tr("ρ per round") : tr("ρ per round (worse than chance)"));
  costTabs_->tabBar()->setTabTextColor(1,
                                       flags.isEmpty() ? palette().color(QPalette::WindowText) : QColor(200, 30, 30));
}

double PlotsPanel::rankCorrelation() const {
  refreshScatterCache();
  return rho_;
}

Interval PlotsPanel::rankCorrelationInterval() const {
  return spearmanInterval(rankCorrelation(), static_cast<size_t>(scatterPointCount()));
}

int PlotsPanel::scatterPointCount() const {
  refreshScatterCache();
  return static_cast<int>(scatterX_.size());
}

int PlotsPanel::untrainedPointCount() const {
  refreshScatterCache();
  return static_cast<int>(untrainedX_.size());
}

QString PlotsPanel::scatterSummary() const {
  const double rho = rankCorrelation();
  const Interval ci = rankCorrelationInterval();
  QString text = tr("Spearman ρ = %1").arg(std::isnan(rho) ? QStringLiteral("–") : QString::number(rho, 'f', 2));
  if (std::isfinite(ci.low)) text += tr(" [%1, %2]").arg(ci.low, 0, 'f', 2).arg(ci.high, 0, 'f', 2);
  text += tr(" (n = %1)").arg(scatterPointCount());
  if (untrainedPointCount() > 0)
    text += untrainedPointCount() == 1 ? tr("; 1 untrained score grey, not counted")
                                       : tr("; %1 untrained scores grey, not counted").arg(untrainedPointCount());
  return text;
}

void PlotsPanel::updateTaskSelector() {
  const QSignalBlocker block(taskCombo_);
  taskCombo_->clear();
  taskCombo_->addItem(tr("All tasks"), -1);
  for (int t = 0; t < taskNames_.size(); ++t)
    taskCombo_->addItem(QStringLiteral("%1: %2").arg(t).arg(taskNames_[t]), t);
  taskCombo_->setCurrentIndex(selected_ + 1);
}

void PlotsPanel::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  // Side by side in a wide dock, stacked in a tall one.
  const auto orientation = width() >= height() ? Qt::Horizontal : Qt::Vertical;
  if (splitter_->orientation() != orientation) {
    splitter_->setOrientation(orientation);
    splitter_->setSizes({1000, 1000, 1000});
  }
}

namespace {

// Squared distance in pixels from `pixel` to the point (key, value) of `plot`.
double pixelDistance2(const QCustomPlot* plot, double key, double value, const QPointF& pixel) {
  const double dx = plot->xAxis->coordToPixel(key) - pixel.x();
  const double dy = plot->yAxis->coordToPixel(value) - pixel.y();
  return dx * dx + dy * dy;
}

}  // namespace

PickedProgram PlotsPanel::scatterProgramAt(const QPointF& pixel) const {
  refreshScatterCache();
  PickedProgram out;
  double nearest = kPickRadius * kPickRadius;
  auto search = [&](const std::vector<double>& xs, const std::vector<double>& ys, const std::vector<size_t>& program) {
    for (size_t i = 0; i < xs.size(); ++i) {
      const double d = pixelDistance2(scatterPlot_, xs[i], ys[i], pixel);
      if (d > nearest) continue;
      nearest = d;
      const ScoredProgram& p = programs_[program[i]];
      out = {p.task, p.ordinal};
    }
  };
  search(scatterX_, scatterY_, scatterProgram_);
  search(untrainedX_, untrainedY_, untrainedProgram_);
  return out;
}

PickedProgram PlotsPanel::bestProgramAt(const QPointF& pixel) const {
  int task = -1, trials = 0;
  double nearest = kPickRadius * kPickRadius;
  for (int g = 0; g < bestPlot_->graphCount(); ++g) {
    QCPGraph* graph = bestPlot_->graph(g);
    for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
      const double d = pixelDistance2(bestPlot_, it->key, it->value, pixel);
      if (d > nearest) continue;
      nearest = d;
      task = graph->property("task").toInt();
      trials = int(std::lround(it->key));
    }
  }
  if (task < 0) return {};
  const int ordinal = bestOrdinal(task, trials);
  return ordinal < 0 ? PickedProgram{} : PickedProgram{task, ordinal};
}

int PlotsPanel::bestOrdinal(int task, int trials) const {
  if (!validTask(task)) return -1;
  const std::vector<double>& seconds = taskData_[static_cast<size_t>(task)].seconds;
  int best = -1;
  for (int i = 0; i < std::min(trials, int(seconds.size())); ++i)
    if (std::isfinite(seconds[size_t(i)]) && (best < 0 || seconds[size_t(i)] < seconds[size_t(best)])) best = i;
  return best;
}

int PlotsPanel::programCount(int task) const {
  return validTask(task) ? int(taskData_[static_cast<size_t>(task)].seconds.size()) : 0;
}

void PlotsPanel::connectPicking(QCustomPlot* plot, PickedProgram (PlotsPanel::*at)(const QPointF&) const) {
  // A click, not the end of a drag: press and release close together.
  auto press = std::make_shared<QPointF>();
  connect(plot, &QCustomPlot::mousePress, this, [press](QMouseEvent* e) { *press = e->position(); });
  connect(plot, &QCustomPlot::mouseRelease, this, [this, press, at](QMouseEvent* e) {
    if (e->button() != Qt::LeftButton || (e->position() - *press).manhattanLength() > 4) return;
    if (const PickedProgram p = (this->*at)(e->position()); p.valid()) emit programPicked(p.task, p.ordinal);
  });
}

}  // namespace tessel::ui
