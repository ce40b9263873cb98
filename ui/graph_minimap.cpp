#include "ui/graph_minimap.h"

#include <QEvent>
#include <QMouseEvent>
#include <QScrollBar>

namespace tessel::ui {

namespace {
constexpr int kSide = 160;  // px: the overview's longer side
constexpr int kMargin = 8;  // px from the main view's corner
}  // namespace

GraphMinimap::GraphMinimap(QGraphicsView* main) : QGraphicsView(main->scene(), main->viewport()), main_(main) {
  setObjectName(QStringLiteral("graphMinimap"));
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setInteractive(false);  // its clicks move the main view, never select items
  setFrameShape(QFrame::Box);
  setBackgroundBrush(QColor(255, 255, 255, 230));
  setRenderHints(QPainter::Antialiasing);
  setToolTip(tr("The whole graph: click or drag to move the view"));
  // The main view's scrolling and resizing move the rectangle and the corner.
  main_->viewport()->installEventFilter(this);
  for (QScrollBar* bar : {main_->horizontalScrollBar(), main_->verticalScrollBar()})
    connect(bar, &QScrollBar::valueChanged, viewport(), qOverload<>(&QWidget::update));
  refit();
}

void GraphMinimap::refit() {
  const QRectF scene = main_->scene() ? main_->scene()->sceneRect() : QRectF();
  // The overview keeps the scene's proportions within kSide x kSide.
  QSize size(kSide, kSide);
  if (scene.width() > 0 && scene.height() > 0) {
    const double aspect = scene.width() / scene.height();
    size =
        aspect >= 1 ? QSize(kSide, std::max(24, int(kSide / aspect))) : QSize(std::max(24, int(kSide * aspect)), kSide);
  }
  resize(size);
  if (scene.isValid()) fitInView(scene, Qt::KeepAspectRatio);
  place();
  viewport()->update();
}

QRectF GraphMinimap::shownRect() const {
  return main_->mapToScene(main_->viewport()->rect()).boundingRect();
}

void GraphMinimap::drawForeground(QPainter* painter, const QRectF&) {
  painter->setPen(QPen(QColor(214, 39, 40), 0));
  painter->setBrush(QColor(214, 39, 40, 30));
  painter->drawRect(shownRect());
}

void GraphMinimap::centreMainOn(const QPoint& minimapPoint) {
  main_->centerOn(mapToScene(minimapPoint));
  viewport()->update();
}

void GraphMinimap::mousePressEvent(QMouseEvent* event) {
  centreMainOn(event->position().toPoint());
  event->accept();
}

void GraphMinimap::mouseMoveEvent(QMouseEvent* event) {
  if (event->buttons() & Qt::LeftButton) centreMainOn(event->position().toPoint());
  event->accept();
}

void GraphMinimap::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  if (scene() && scene()->sceneRect().isValid()) fitInView(scene()->sceneRect(), Qt::KeepAspectRatio);
}

bool GraphMinimap::eventFilter(QObject* watched, QEvent* event) {
  if (watched == main_->viewport() && (event->type() == QEvent::Resize || event->type() == QEvent::Paint)) {
    if (event->type() == QEvent::Resize) place();
    // The main view's zoom or pan changed what it shows: redraw the rectangle
    // (only then, or each of its repaints would ask for another).
    if (const QRectF shown = shownRect(); shown != lastShown_) {
      lastShown_ = shown;
      viewport()->update();
    }
  }
  return QGraphicsView::eventFilter(watched, event);
}

void GraphMinimap::place() {
  const QRect area = main_->viewport()->rect();
  move(area.right() - width() - kMargin, area.bottom() - height() - kMargin);
  raise();
}

}  // namespace tessel::ui
