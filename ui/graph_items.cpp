#include "ui/graph_items.h"

#include <QApplication>
#include <QFont>
#include <QFontMetricsF>
#include <QObject>
#include <QPainter>
#include <QPen>
#include <QStyleOptionGraphicsItem>
#include <cmath>

namespace tessel::ui {

namespace {

// Scene units are points; pixel-sized fonts keep text in step with the
// node sizes graph_layout.cpp estimated (about 6.5 pt a character).
QFont nodeFont(bool bold) {
  QFont f = QApplication::font();
  f.setPixelSize(10);
  f.setBold(bold);
  return f;
}

// Level of detail: the scale from item to device (1 = 100 %).
double lod(const QStyleOptionGraphicsItem* option, const QPainter* painter) {
  return option->levelOfDetailFromTransform(painter->worldTransform());
}

}  // namespace

NodeItem::NodeItem(const QRectF& rect, const QString& op, const QString& shape) : rect_(rect) {
  // Elided once here rather than at every paint.
  op_ = QFontMetricsF(nodeFont(true)).elidedText(op, Qt::ElideRight, rect.width() - 6);
  shape_ = QFontMetricsF(nodeFont(false)).elidedText(shape, Qt::ElideRight, rect.width() - 6);
}

void NodeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const double level = lod(option, p);
  const bool selected = isSelected();
  p->setPen(QPen(selected ? kSelectColour : QColor(80, 80, 80), selected ? 2.5 : 1.0));
  p->setBrush(selected ? QColor(225, 238, 255) : QColor(Qt::white));
  if (level < 0.3) {  // far out: a plain box is all one can see
    p->drawRect(rect_);
    return;
  }
  p->drawRoundedRect(rect_, 5, 5);
  if (level < 0.5) return;  // text would be under 5 px: skip it
  p->setPen(QColor(20, 20, 20));
  QRectF top(rect_.left(), rect_.top() + 2, rect_.width(), rect_.height() / 2 - 1);
  QRectF bottom(rect_.left(), rect_.center().y(), rect_.width(), rect_.height() / 2 - 2);
  p->setFont(nodeFont(true));
  p->drawText(top, Qt::AlignCenter, op_);
  p->setFont(nodeFont(false));
  p->drawText(bottom, Qt::AlignCenter, shape_);
}

EdgeItem::EdgeItem(const LayoutEdge& e) {
  const auto& pts = e.points;
  if (pts.empty()) return;
  path_.moveTo(pts[0].first, pts[0].second);
  size_t i = 1;
  for (; i + 2 < pts.size(); i += 3)
    path_.cubicTo(pts[i].first, pts[i].second, pts[i + 1].first, pts[i + 1].second, pts[i + 2].first,
                  pts[i + 2].second);
  for (; i < pts.size(); ++i)  // not 1 + 3k points: straight pieces
    path_.lineTo(pts[i].first, pts[i].second);
  // The arrowhead: Graphviz's tip when it clipped the spline for one, else
  // along the last control segment.
  QPointF end(pts.back().first, pts.back().second), tip = end, base = end;
  if (e.hasTip) {
    tip = QPointF(e.tipX, e.tipY);
  } else if (pts.size() >= 2) {
    QPointF prev(pts[pts.size() - 2].first, pts[pts.size() - 2].second);
    QPointF d = end - prev;
    double len = std::hypot(d.x(), d.y());
    if (len > 0) base = end - d / len * 7.0;
  }
  QPointF d = tip - base;
  double len = std::hypot(d.x(), d.y());
  if (len > 0) {
    QPointF n(-d.y() / len * 3.2, d.x() / len * 3.2);
    arrow_ << tip << base + n << base - n;
  }
  bounds_ = path_.controlPointRect().united(arrow_.boundingRect()).adjusted(-2, -2, 2, 2);
}

void EdgeItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  p->setPen(QPen(QColor(105, 105, 105), 1.1));
  p->setBrush(Qt::NoBrush);
  p->drawPath(path_);
  if (lod(option, p) < 0.25 || arrow_.isEmpty()) return;
  p->setBrush(QColor(105, 105, 105));
  p->drawPolygon(arrow_);
}

ClusterItem::ClusterItem(const QRectF& rect, const QString& label, int collapsedOps) : rect_(rect) {
  QPainterPath path;
  path.addRoundedRect(rect, 8, 8);
  setPath(path);
  label_ = QFontMetricsF(nodeFont(collapsedOps > 0)).elidedText(label, Qt::ElideRight, rect.width() - 10);
  if (collapsedOps > 0) ops_ = collapsedOps == 1 ? QObject::tr("1 op") : QObject::tr("%1 ops").arg(collapsedOps);
  setPen(QPen(QColor(150, 150, 150), 1.0));
}

void ClusterItem::paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) {
  const bool selected = isSelected();
  p->setPen(selected ? QPen(kSelectColour, 3.0) : pen());
  p->setBrush(brush());
  const double level = lod(option, p);
  if (level < 0.3) {
    p->drawRect(rect_);
    return;
  }
  p->drawPath(path());
  if (collapsed() && !selected) {  // a frame inside the frame: there is more inside
    p->setBrush(Qt::NoBrush);
    p->drawRoundedRect(rect_.adjusted(3, 3, -3, -3), 6, 6);
  }
  if (level < 0.5) return;
  p->setPen(QColor(40, 40, 40));
  if (!collapsed()) {
    p->setFont(nodeFont(false));
    p->drawText(rect_.adjusted(6, 2, -4, 0), Qt::AlignLeft | Qt::AlignTop, label_);
    return;
  }
  const QRectF top(rect_.left(), rect_.top() + 3, rect_.width(), rect_.height() / 2 - 2);
  const QRectF bottom(rect_.left(), rect_.center().y(), rect_.width(), rect_.height() / 2 - 3);
  p->setFont(nodeFont(true));
  p->drawText(top, Qt::AlignCenter, label_);
  p->setFont(nodeFont(false));
  p->drawText(bottom, Qt::AlignCenter, ops_);
}

}  // namespace tessel::ui
