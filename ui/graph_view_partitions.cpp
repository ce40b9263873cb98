// GraphView's collapsible partitions: which are collapsed, the double-click
// that toggles one, and the layout again after each change.
#include <QEvent>
#include <QGraphicsItem>
#include <QGraphicsView>
#include <QMouseEvent>
#include <algorithm>

#include "ui/graph_layout.h"
#include "ui/graph_view.h"

namespace tessel::ui {

bool GraphView::isCollapsed(int group) const {
  return group >= 0 && size_t(group) < collapsed_.size() && collapsed_[size_t(group)];
}

int GraphView::collapsedCount() const {
  return int(std::count(collapsed_.begin(), collapsed_.end(), true));
}

void GraphView::setCollapsed(int group, bool collapsed) {
  // The scene has an item for each partition, collapsed or not.
  if (!clusterItem(group) || isCollapsed(group) == collapsed) return;
  collapsed_.resize(model_->plan.groups.size(), false);
  collapsed_[size_t(group)] = collapsed;
  showStatus(collapsed ? tr("Collapsing…") : tr("Expanding…"));
  startLayout(group);
}

void GraphView::collapseAll() {
  if (!model_) return;
  collapsed_ = allCollapsed(*model_);
  showStatus(tr("Collapsing…"));
  startLayout();
}

void GraphView::expandAll() {
  if (!model_ || collapsedCount() == 0) return;
  collapsed_.clear();
  showStatus(tr("Expanding…"));
  startLayout();
}

bool GraphView::eventFilter(QObject* watched, QEvent* event) {
  if (watched == view_->viewport() && event->type() == QEvent::MouseButtonDblClick && ready_) {
    const auto* mouse = static_cast<QMouseEvent*>(event);
    // The topmost partition under the cursor: a box, or the frame of an
    // expanded one (not one of its nodes).
    for (QGraphicsItem* item : view_->items(mouse->position().toPoint())) {
      const QString kind = item->data(kItemKind).toString();
      if (kind == "node") break;
      if (kind != "cluster") continue;
      const int group = item->data(kItemIndex).toInt();
      setCollapsed(group, !isCollapsed(group));
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace tessel::ui
