#include "ui/model_quality_plot.h"

#include <cmath>

namespace tessel::ui {

ModelQualityPlot::ModelQualityPlot(QWidget* parent) : QCustomPlot(parent) {
  setObjectName(QStringLiteral("modelQualityPlot"));
  setMinimumSize(160, 120);
  xAxis->setLabel(tr("scoring round"));
  yAxis->setLabel(tr("Spearman ρ"));
  yAxis->setRange(-1.05, 1.05);
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (QCPAxis* axis : {xAxis, yAxis}) {
    axis->setLabelFont(small);
    axis->setTickLabelFont(small);
  }
  legend->setFont(small);
  legend->setIconSize(14, 8);
  legend->setVisible(true);
  axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignBottom | Qt::AlignRight);
  setNotAntialiasedElements(QCP::aeAll);
  setAntialiasedElements(QCP::aePlottables | QCP::aeItems);

  plotLayout()->insertRow(0);
  QFont bold = font();
  bold.setBold(true);
  bold.setPointSizeF(bold.pointSizeF() * 0.9);
  title_ = new QCPTextElement(this, tr("Cost model ρ per round"), bold);
  plotLayout()->addElement(0, 0, title_);
  plotLayout()->insertRow(1);
  flag_ = new QCPTextElement(this, QString(), small);
  flag_->setTextColor(QColor(200, 30, 30));
  plotLayout()->addElement(1, 0, flag_);

  chance_ = addGraph();
  chance_->setName(tr("chance (ρ = 0)"));
  chance_->setPen(QPen(QColor(150, 150, 150), 1));
  pooled_ = addGraph();
  pooled_->setName(tr("pooled (trained)"));
  pooled_->setPen(QPen(QColor(31, 119, 180), 1, Qt::DashLine));
  trained_ = addGraph();
  trained_->setName(tr("trained model"));
  trained_->setLineStyle(QCPGraph::lsNone);
  trained_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, QColor(31, 119, 180), 5));
  bars_ = new QCPErrorBars(xAxis, yAxis);
  bars_->setDataPlottable(trained_);
  bars_->setPen(QPen(QColor(31, 119, 180, 120)));
  bars_->removeFromLegend();
  untrained_ = addGraph();
  untrained_->setName(tr("untrained model"));
  untrained_->setLineStyle(QCPGraph::lsNone);
  untrained_->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(150, 150, 150), 5));
  setToolTip(
      tr("Each round's rank correlation between the cost model's scores and the measured throughput of the "
         "programs it scored, with its 95 % interval. Grey: scored by a model that had learned nothing yet, "
         "so it says nothing of the model"));
  setRounds({}, {}, {});
}

void ModelQualityPlot::setRounds(const std::vector<RoundRho>& rounds, const RoundRho& pooled,
                                 const QStringList& flags) {
  QVector<double> tx, ty, tlow, thigh, ux, uy;
  int index = 0;
  for (const RoundRho& r : rounds) {
    ++index;
    if (!std::isfinite(r.rho)) continue;
    if (r.untrained) {
      ux << index;
      uy << r.rho;
      continue;
    }
    tx << index;
    ty << r.rho;
    // Error bars as distances below and above the point (none where n < 4).
    tlow << (std::isfinite(r.interval.low) ? r.rho - r.interval.low : 0);
    thigh << (std::isfinite(r.interval.high) ? r.interval.high - r.rho : 0);
  }
  trained_->setData(tx, ty, true);
  bars_->setData(tlow, thigh);
  untrained_->setData(ux, uy, true);
  const double last = std::max(1, index) + 0.5;
  chance_->setData({0.5, last}, {0.0, 0.0}, true);
  if (std::isfinite(pooled.rho))
    pooled_->setData({0.5, last}, {pooled.rho, pooled.rho}, true);
  else
    pooled_->data()->clear();
  xAxis->setRange(0.5, last);
  title_->setText(std::isfinite(pooled.rho) && std::isfinite(pooled.interval.low)
                      ? tr("Cost model ρ per round: pooled %1 [%2, %3], n = %4")
                            .arg(pooled.rho, 0, 'f', 2)
                            .arg(pooled.interval.low, 0, 'f', 2)
                            .arg(pooled.interval.high, 0, 'f', 2)
                            .arg(pooled.n)
                      : tr("Cost model ρ per round"));
  flag_->setText(flags.join('\n'));
  flag_->setVisible(!flags.isEmpty());
}

int ModelQualityPlot::trainedPointCount() const {
  return trained_->dataCount();
}

int ModelQualityPlot::untrainedPointCount() const {
  return untrained_->dataCount();
}

QString ModelQualityPlot::flagText() const {
  return flag_->text();
}

}  // namespace tessel::ui
