// The cost model's ranking, round by round: Spearman's rho of each scoring
// round (ui/model_quality.h) as a point with its 95 % interval as an error
// bar, against the round's number; rounds an untrained model scored in grey
// (their rho means nothing); the pooled rho of the trained rounds as a
// dashed line; rho = 0 (chance) as a grey line; and, in red under the
// title, the tasks whose trained model ranks worse than chance.
#pragma once

#include <qcustomplot.h>

#include <QStringList>
#include <vector>

#include "ui/model_quality.h"

namespace tessel::ui {

class ModelQualityPlot : public QCustomPlot {
  Q_OBJECT

 public:
  explicit ModelQualityPlot(QWidget* parent = nullptr);

  // `rounds` in order; `pooled`: the trained rounds' pooled rho (NaN: none);
  // `flags`: one line per task flagged worse than chance ("" none).
  void setRounds(const std::vector<RoundRho>& rounds, const RoundRho& pooled, const QStringList& flags);

  int trainedPointCount() const;
  int untrainedPointCount() const;
  QString flagText() const;

 private:
  QCPGraph* trained_;
  QCPGraph* untrained_;
  QCPErrorBars* bars_;
  QCPGraph* pooled_;
  QCPGraph* chance_;
  QCPTextElement* title_;
  QCPTextElement* flag_;
};

}  // namespace tessel::ui
