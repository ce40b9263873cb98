// The items a model's graph is drawn with in GraphView's scene: an op's node,
// a data edge (Graphviz's spline and its arrowhead) and a fused partition's
// cluster. Each paints less as the view zooms out (its level of detail), so a
// large graph still pans smoothly.
#pragma once

#include <QColor>
#include <QGraphicsItem>
#include <QGraphicsPathItem>
#include <QPainterPath>
#include <QPolygonF>
#include <QRectF>
#include <QString>

#include "ui/graph_layout.h"

namespace tessel::ui {

// What a selected node or cluster is outlined with.
inline const QColor kSelectColour(30, 111, 217);

class NodeItem : public QGraphicsItem {
 public:
  // `op` on the first line, `shape` (its output's) on the second, each elided to the box.
  NodeItem(const QRectF& rect, const QString& op, const QString& shape);
  QRectF boundingRect() const override { return rect_.adjusted(-2, -2, 2, 2); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override;

 private:
  QRectF rect_;
  QString op_, shape_;
};

class EdgeItem : public QGraphicsItem {
 public:
  explicit EdgeItem(const LayoutEdge& e);
  QRectF boundingRect() const override { return bounds_; }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override;

 private:
  QPainterPath path_;
  QPolygonF arrow_;
  QRectF bounds_;
};

// Its brush (the heat colour) is set by the view. A collapsed partition is
// a box in place of its nodes: its task's name over its number of ops,
// centred, with a double frame.
class ClusterItem : public QGraphicsPathItem {
 public:
  ClusterItem(const QRectF& rect, const QString& label, int collapsedOps = 0);
  QRectF boundingRect() const override { return rect_.adjusted(-3, -3, 3, 3); }
  void paint(QPainter* p, const QStyleOptionGraphicsItem* option, QWidget*) override;
  bool collapsed() const { return !ops_.isEmpty(); }

 private:
  QRectF rect_;
  QString label_;
  QString ops_;  // "12 ops" when collapsed
};

}  // namespace tessel::ui
