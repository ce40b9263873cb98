#include "ui/roofline_view.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <limits>

namespace tessel::ui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Intensities drawn: 1/64 to 1024 FLOP/byte (every task of the zoo lies within).
constexpr double kMinIntensity = 1.0 / 64, kMaxIntensity = 1024;

// A roof: bandwidth x intensity up to the peak, then the peak.
void drawRoof(QCPGraph* g, double bandwidthGBps, double peakGflops) {
  QVector<double> x, y;
  if (bandwidthGBps > 0 && peakGflops > 0) {
    const double ridge = peakGflops / bandwidthGBps;
    x << kMinIntensity << std::clamp(ridge, kMinIntensity, kMaxIntensity) << kMaxIntensity;
    y << bandwidthGBps * kMinIntensity << std::min(peakGflops, bandwidthGBps * x[1]) << peakGflops;
  }
  g->setData(x, y, true);
}

}  // namespace

RooflineView::RooflineView(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("rooflineView"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("rooflineSummary"));
  summary_->setWordWrap(true);
  layout->addWidget(summary_);
  plot_ = new QCustomPlot(this);
  plot_->setMinimumSize(160, 120);
  layout->addWidget(plot_, 1);
  for (QCPAxis* axis : {plot_->xAxis, plot_->yAxis}) {
    axis->setScaleType(QCPAxis::stLogarithmic);
    axis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog));
    axis->setNumberFormat("gb");
  }
  plot_->xAxis->setLabel(tr("arithmetic intensity (FLOP / byte)"));
  plot_->yAxis->setLabel(tr("GFLOP/s"));
  plot_->legend->setVisible(true);
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  plot_->setNotAntialiasedElements(QCP::aeAll);
  plot_->setAntialiasedElements(QCP::aePlottables);
  dram_ = plot_->addGraph();
  dram_->setName(tr("memory roof"));
  dram_->setPen(QPen(QColor(60, 60, 60), 1.5));
  llc_ = plot_->addGraph();
  llc_->setName(tr("last-level cache roof"));
  llc_->setPen(QPen(QColor(60, 60, 60), 1, Qt::DashLine));
  programs_ = plot_->addGraph();
  programs_->setName(tr("selected task's programs"));
  programs_->setLineStyle(QCPGraph::lsNone);
  programs_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(255, 127, 14, 140), 3));
  best_ = plot_->addGraph();
  best_->setName(tr("each task's best"));
  best_->setLineStyle(QCPGraph::lsNone);
  best_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180), 6));
  selectedBest_ = plot_->addGraph();
  selectedBest_->setName(tr("selected task's best"));
  selectedBest_->setLineStyle(QCPGraph::lsNone);
  selectedBest_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(214, 39, 40), 9));
  plot_->setToolTip(
      tr("Achieved GFLOP/s against FLOP per compulsory byte (each input read once, each output "
         "written once) under this machine's roofs: the peak FMA throughput and the measured "
         "bandwidth of memory and of the last-level cache"));
  redraw();
}

void RooflineView::setCeilings(const measure::MachineCeilings& ceilings) {
  ceilings_ = ceilings;
  hasCeilings_ = true;
  unavailable_.clear();
  redraw();
}

void RooflineView::setUnavailable(const QString& why) {
  unavailable_ = why;
  redraw();
}

void RooflineView::setTasks(const std::vector<RooflineTask>& tasks) {
  tasks_ = tasks;
  seconds_.assign(tasks.size(), {});
  selected_ = -1;
  redraw();
}

void RooflineView::addPrograms(int task, const QVector<double>& seconds) {
  if (task < 0 || size_t(task) >= tasks_.size()) return;
  for (double s : seconds)
    if (std::isfinite(s) && s > 0) seconds_[size_t(task)].push_back(s);
  redraw();
}

void RooflineView::clearPrograms() {
  seconds_.assign(tasks_.size(), {});
  redraw();
}

void RooflineView::selectTask(int task) {
  selected_ = task >= 0 && size_t(task) < tasks_.size() ? task : -1;
  redraw();
}

double RooflineView::intensity(int task) const {
  if (task < 0 || size_t(task) >= tasks_.size() || tasks_[size_t(task)].bytes <= 0) return kNaN;
  return tasks_[size_t(task)].flops / tasks_[size_t(task)].bytes;
}

double RooflineView::bestGflops(int task) const {
  if (task < 0 || size_t(task) >= tasks_.size() || seconds_[size_t(task)].empty()) return kNaN;
  const double best = *std::min_element(seconds_[size_t(task)].begin(), seconds_[size_t(task)].end());
  return tasks_[size_t(task)].flops / best / 1e9;
}

QVector<double> RooflineView::attainable() const {
  QVector<double> out;
  if (!hasCeilings_) return out;
  for (size_t t = 0; t < tasks_.size(); ++t) {
    const double i = intensity(int(t));
    out << (std::isfinite(i) ? ceilings_.attainableGflops(i, tasks_[t].bytes) : kNaN);
  }
  return out;
}

int RooflineView::bestPointCount() const {
  return best_->dataCount() + selectedBest_->dataCount();
}

int RooflineView::programPointCount() const {
  return programs_->dataCount();
}

QString RooflineView::summary() const {
  return summary_->text();
}

void RooflineView::redraw() {
  QVector<double> bx, by, px, py, sx, sy;
  for (int t = 0; t < int(tasks_.size()); ++t) {
    const double i = intensity(t), g = bestGflops(t);
    if (!std::isfinite(i) || !std::isfinite(g)) continue;
    (t == selected_ ? sx : bx) << i;
    (t == selected_ ? sy : by) << g;
  }
  if (selected_ >= 0 && std::isfinite(intensity(selected_)))
    for (double s : seconds_[size_t(selected_)]) {
      px << intensity(selected_);
      py << tasks_[size_t(selected_)].flops / s / 1e9;
    }
  best_->setData(bx, by);
  selectedBest_->setData(sx, sy);
  programs_->setData(px, py);
  const bool roofs = hasCeilings_ && unavailable_.isEmpty();
  drawRoof(dram_, roofs ? ceilings_.dramGBps : 0, ceilings_.peakGflops);
  drawRoof(llc_, roofs ? ceilings_.llcGBps : 0, ceilings_.peakGflops);
  plot_->xAxis->setRange(kMinIntensity, kMaxIntensity);
  const double top = std::max({roofs ? ceilings_.peakGflops * 2 : 0.0,
                               by.isEmpty() ? 1.0 : *std::max_element(by.begin(), by.end()) * 2,
                               sy.isEmpty() ? 1.0 : sy.front() * 2, 10.0});
  plot_->yAxis->setRange(0.01, top);
  if (!unavailable_.isEmpty()) {
    summary_->setText(unavailable_);
  } else if (!hasCeilings_) {
    summary_->setText(tr("Measuring this machine's memory and cache bandwidth (once)..."));
  } else {
    QString text = tr("%1, %2 threads: peak %3 GFLOP/s (%4 FMA lanes a cycle at %5 GHz), memory %6 GB/s, "
                      "last-level cache %7 GB/s")
                       .arg(QString::fromStdString(ceilings_.cpu))
                       .arg(ceilings_.threads)
                       .arg(ceilings_.peakGflops, 0, 'f', 0)
                       .arg(ceilings_.fmaLanesPerCycle)
                       .arg(ceilings_.clockGHz, 0, 'f', 2)
                       .arg(ceilings_.dramGBps, 0, 'f', 1)
                       .arg(ceilings_.llcGBps, 0, 'f', 1);
    if (selected_ >= 0) {
      const double g = bestGflops(selected_), roof = attainable().value(selected_, kNaN);
      if (std::isfinite(g) && std::isfinite(roof) && roof > 0)
        text += tr("\n%1: %2 GFLOP/s at %3 FLOP/byte, %4 % of its roof (%5 GFLOP/s)")
                    .arg(tasks_[size_t(selected_)].name)
                    .arg(g, 0, 'f', 1)
                    .arg(intensity(selected_), 0, 'f', 2)
                    .arg(100 * g / roof, 0, 'f', 1)
                    .arg(roof, 0, 'f', 1);
    }
    summary_->setText(text);
  }
  plot_->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace tessel::ui
