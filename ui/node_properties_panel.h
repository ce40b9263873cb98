// Properties of the graph node selected in the graph view: op, attributes,
// input and output shapes, FLOPs, its partition and task, and the task's
// share of the measured end-to-end latency.
#pragma once

#include <QWidget>

#include "frontend/model_loader.h"

class QTextBrowser;

namespace tessel::ui {

class NodePropertiesPanel : public QWidget {
  Q_OBJECT

 public:
  explicit NodePropertiesPanel(QWidget* parent = nullptr);
  // `taskShare`: the share of the node's task in [0, 1], NaN if unknown.
  void showNode(const frontend::PreparedModel& m, int node, double taskShare);
  void clear();
  // Plain text of what is shown (for tests and copying).
  QString text() const;
  int node() const { return node_; }  // -1 when nothing is shown

 private:
  QTextBrowser* view_;
  int node_ = -1;
};

}  // namespace tessel::ui
