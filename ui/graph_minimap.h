// An overview of a graph view's whole scene in a corner of it: the scene
// scaled to fit, and a rectangle around what the main view shows. Clicking
// or dragging in it centres the main view there (Netron's missing overview,
// for the models whose graph is many screens tall).
#pragma once

#include <QGraphicsView>

namespace tessel::ui {

class GraphMinimap : public QGraphicsView {
  Q_OBJECT

 public:
  // Shows `main`'s scene; sits on `main`'s viewport, in its bottom-right corner.
  explicit GraphMinimap(QGraphicsView* main);

  // Fits the whole scene again (after a new layout) and places itself.
  void refit();
  // The part of the scene the main view shows, in scene coordinates.
  QRectF shownRect() const;

 protected:
  void drawForeground(QPainter* painter, const QRectF& rect) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void centreMainOn(const QPoint& minimapPoint);
  void place();

  QGraphicsView* main_;
  QRectF lastShown_;
};

}  // namespace tessel::ui
