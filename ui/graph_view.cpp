#include "ui/graph_view.h"

#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QGraphicsPathItem>
#include <QGraphicsScene>
#include <QGraphicsView>
#include <QHBoxLayout>
#include <QImage>
#include <QImageWriter>
#include <QLabel>
#include <QLineEdit>
#include <QLinearGradient>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QScrollBar>
#include <QShortcut>
#include <QStandardItemModel>
#include <QStyleOptionGraphicsItem>
#include <QToolButton>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "ui/graph_items.h"
#include "ui/graph_layout.h"
#include "ui/graph_minimap.h"

namespace tessel::ui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const QColor kRampLow(255, 255, 255);  // share 0
const QColor kRampHigh(215, 48, 31);   // the largest share
constexpr int kClusterAlpha = 150;     // translucent: edges stay visible through clusters
constexpr double kMinZoom = 0.005, kMaxZoom = 8.0;

QColor ramp(double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto mix = [t](int a, int b) { return int(std::lround(a + (b - a) * t)); };
  return QColor(mix(kRampLow.red(), kRampHigh.red()), mix(kRampLow.green(), kRampHigh.green()),
                mix(kRampLow.blue(), kRampHigh.blue()));
}

// Ctrl+wheel zooms around the cursor; the plain wheel scrolls.
class Canvas : public QGraphicsView {
 public:
  using QGraphicsView::QGraphicsView;

 protected:
  void wheelEvent(QWheelEvent* event) override {
    if (event->modifiers() & Qt::ControlModifier) {
      const double current = transform().m11();
      const double target = std::clamp(current * std::pow(1.0015, event->angleDelta().y()), kMinZoom, kMaxZoom);
      setTransformationAnchor(AnchorUnderMouse);
      scale(target / current, target / current);
      event->accept();
      return;
    }
    QGraphicsView::wheelEvent(event);
  }
};

struct LayoutResult {
  GraphLayout layout;
  QString error;
};

}  // namespace

GraphView::GraphView(QWidget* parent)
    : QWidget(parent),
      scene_(new QGraphicsScene(this)),
      view_(new Canvas(scene_, this)),
      search_(new QLineEdit(this)),
      matchLabel_(new QLabel(this)),
      legend_(new QWidget(this)),
      legendTitle_(new QLabel(legend_)),
      legendBar_(new QLabel(legend_)),
      legendMax_(new QLabel(legend_)),
      panel_(new NodePropertiesPanel()),
      heatBox_(new QComboBox(this)) {
  setObjectName("graphView");
  auto* top = new QHBoxLayout;
  top->setContentsMargins(4, 4, 4, 0);
  search_->setPlaceholderText(tr("Find node by name or op (Enter: next)"));
  search_->setClearButtonEnabled(true);
  search_->setObjectName("graphSearch");
  top->addWidget(search_, 2);
  top->addWidget(matchLabel_);
  {
    legend_->setObjectName("latencyLegend");
    legendMax_->setObjectName("latencyLegendMax");
    auto* row = new QHBoxLayout(legend_);
    row->setContentsMargins(8, 0, 0, 0);
    row->setSpacing(4);
    row->addWidget(legendTitle_);
    row->addWidget(legendBar_);
    row->addWidget(legendMax_);
  }
  top->addWidget(legend_);
  legend_->hide();
  // What the heat shows: the tuner's estimate, or a measured run (offered
  // once there is one).
  heatBox_->setObjectName("heatModeBox");
  heatBox_->addItem(tr("Heat: estimate"));
  heatBox_->addItem(tr("Heat: measured run"));
  heatBox_->addItem(tr("Heat: sessions compared"));
  heatBox_->setItemData(0, tr("Each partition's task's share of the estimated end-to-end latency"), Qt::ToolTipRole);
  heatBox_->setItemData(1, tr("Each partition's share of the measured run (Run: tessel run --profile)"),
                        Qt::ToolTipRole);
  heatBox_->setItemData(2, tr("Each partition's task's share of what two compared sessions differ by (Compare)"),
                        Qt::ToolTipRole);
  heatBox_->setToolTip(tr("What the partitions' colour shows"));
  top->addWidget(heatBox_);
  connect(heatBox_, &QComboBox::activated, this, [this](int index) { setHeatMode(HeatMode(index)); });
  updateHeatBox();
  top->addStretch(1);
  auto button = [&](const QString& text, const QString& tip, auto slot) {
    auto* b = new QToolButton(this);
    b->setText(text);
    b->setToolTip(tip);
    b->setAutoRaise(true);
    connect(b, &QToolButton::clicked, this, slot);
    top->addWidget(b);
    return b;
  };
  button(tr("Fit"), tr("Fit the whole graph in the view"), [this] { fitToView(); });
  button(tr("−"), tr("Zoom out"), [this] { zoomBy(1 / 1.25); });
  button(tr("+"), tr("Zoom in"), [this] { zoomBy(1.25); });
  {  // One button for both: the dock's toolbar stays narrow.
    auto* menu = new QMenu(this);
    QAction* collapse = menu->addAction(tr("Collapse all"), this, [this] { collapseAll(); });
    collapse->setObjectName("actionCollapseAll");
    collapse->setToolTip(tr("Draw every partition as one box (double-click a box to expand it)"));
    QAction* expand = menu->addAction(tr("Expand all"), this, [this] { expandAll(); });
    expand->setObjectName("actionExpandAll");
    auto* partitions = new QToolButton(this);
    partitions->setObjectName("partitionsButton");
    partitions->setText(tr("Partitions"));
    partitions->setToolTip(tr("Collapse or expand every partition (double-click one to toggle it)"));
    partitions->setAutoRaise(true);
    partitions->setPopupMode(QToolButton::InstantPopup);
    partitions->setMenu(menu);
    top->addWidget(partitions);
  }
  button(tr("Export…"), tr("Export the graph as PNG or SVG"), [this] { exportWithDialog(); });

  // Large graphs: one repaint of the bounding rect of what changed, no
  // per-paint painter save/restore adjustments, antialiasing for the splines.
  view_->setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  view_->setDragMode(QGraphicsView::ScrollHandDrag);
  view_->setViewportUpdateMode(QGraphicsView::BoundingRectViewportUpdate);
  view_->setOptimizationFlags(QGraphicsView::DontAdjustForAntialiasing);
  view_->setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  view_->setResizeAnchor(QGraphicsView::AnchorViewCenter);
  view_->setBackgroundBrush(QColor(250, 250, 250));
  view_->setObjectName("graphCanvas");

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(top);
  layout->addWidget(view_, 1);
  minimap_ = new GraphMinimap(view_);
  view_->viewport()->installEventFilter(this);  // double-clicks collapse and expand partitions

  connect(scene_, &QGraphicsScene::selectionChanged, this, &GraphView::onSelectionChanged);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    const QString text = search_->text().trimmed();
    if (text.compare(lastQuery_, Qt::CaseInsensitive) == 0 && !matches_.empty())
      findNext();
    else
      find(text);
  });
  auto* findKey = new QShortcut(QKeySequence::Find, this);
  findKey->setContext(Qt::WidgetWithChildrenShortcut);
  connect(findKey, &QShortcut::activated, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  auto* zoomInKey = new QShortcut(QKeySequence::ZoomIn, this);
  zoomInKey->setContext(Qt::WidgetWithChildrenShortcut);
  connect(zoomInKey, &QShortcut::activated, this, [this] { zoomBy(1.25); });
  auto* zoomOutKey = new QShortcut(QKeySequence::ZoomOut, this);
  zoomOutKey->setContext(Qt::WidgetWithChildrenShortcut);
  connect(zoomOutKey, &QShortcut::activated, this, [this] { zoomBy(1 / 1.25); });
}

GraphView::~GraphView() {
  // The scene is deleted later, as a child, by ~QWidget: by then this is no
  // longer a GraphView, so its slots must not hear the scene's last signals.
  scene_->disconnect(this);
  // Not docked anywhere: still ours.
  if (panel_ && !panel_->parent()) delete panel_.data();
}

void GraphView::clear() {
  ++generation_;  // drops a layout still running
  model_.reset();
  collapsed_.clear();
  pendingNode_ = -1;
  ready_ = false;
  quietSelection_ = true;
  scene_->clear();
  quietSelection_ = false;
  nodeItems_.clear();
  clusterItems_.clear();
  edgeCount_ = 0;
  taskOfGroup_.clear();
  groupOfNode_.clear();
  matches_.clear();
  matchIndex_ = -1;
  lastQuery_.clear();
  setMeasuredShares({});  // another model's partitions
  setComparison({}, {});
  if (minimap_) minimap_->refit();
  if (panel_) panel_->clear();
  showStatus({});
}

void GraphView::showStatus(const QString& text) {
  matchLabel_->setText(text);
}

void GraphView::setModel(std::shared_ptr<const frontend::PreparedModel> model) {
  clear();
  if (!model) return;
  model_ = model;
  if (model->graph.nodes.size() > size_t(kCollapseAbove)) collapsed_ = allCollapsed(*model);
  showStatus(tr("Laying out %1…").arg(QString::fromStdString(model->name)));
  startLayout();
}

void GraphView::startLayout(int focusGroup) {
  const int generation = ++generation_;  // a layout still running is dropped
  auto* watcher = new QFutureWatcher<LayoutResult>(this);
  connect(watcher, &QFutureWatcher<LayoutResult>::finished, this, [this, watcher, generation, focusGroup] {
    watcher->deleteLater();
    if (generation != generation_) return;  // superseded by a later layout or clear
    const LayoutResult& result = watcher->future().result();
    if (!result.error.isEmpty()) {
      showStatus(tr("Layout failed"));
      emit layoutFailed(result.error);
      return;
    }
    QElapsedTimer timer;
    timer.start();
    buildScene(result.layout, focusGroup);
    const double sceneSeconds = double(timer.nsecsElapsed()) / 1e9;
    emit layoutFinished(result.layout.seconds, sceneSeconds);
    if (const int node = std::exchange(pendingNode_, -1); node >= 0) selectNode(node);
  });
  // The model is kept alive by the task even if the view moves on.
  watcher->setFuture(QtConcurrent::run([model = model_, collapsed = collapsed_] {
    LayoutResult r;
    try {
      r.layout = layoutGraph(*model, collapsed);
    } catch (const std::exception& e) {
      r.error = QString::fromStdString(e.what());
    }
    return r;
  }));
}

void GraphView::buildScene(const GraphLayout& layout, int focusGroup) {
  const frontend::PreparedModel& m = *model_;
  const graph::Graph& g = m.graph;
  taskOfGroup_ = taskOfGroups(m);
  groupOfNode_.assign(g.nodes.size(), -1);
  for (size_t gi = 0; gi < m.plan.groups.size(); ++gi)
    for (size_t n : m.plan.groups[gi])
      if (n < groupOfNode_.size()) groupOfNode_[n] = int(gi);

  quietSelection_ = true;
  scene_->clear();
  // Items go in without an index; the BSP tree is built once afterwards.
  scene_->setItemIndexMethod(QGraphicsScene::NoIndex);
  scene_->setSceneRect(QRectF(-20, -20, layout.width + 40, layout.height + 40));

  for (const LayoutCluster& c : layout.clusters) {
    const int task = taskOfGroup_[c.group];
    const QString name = task >= 0 ? QString::fromStdString(m.tasks[size_t(task)].name) : QString();
    auto* item = new ClusterItem(QRectF(c.x, c.y, c.width, c.height), name,
                                 c.collapsed ? int(m.plan.groups[c.group].size()) : 0);
    // A box stands for nodes: above the edges, as they are.
    item->setZValue(c.collapsed ? 2 : 0);
    item->setFlag(QGraphicsItem::ItemIsSelectable);
    item->setData(kItemKind, QStringLiteral("cluster"));
    item->setData(kItemIndex, int(c.group));
    scene_->addItem(item);
    clusterItems_[int(c.group)] = item;
  }
  for (const LayoutEdge& e : layout.edges) {
    auto* item = new EdgeItem(e);
    item->setZValue(1);
    item->setAcceptedMouseButtons(Qt::NoButton);
    item->setData(kItemKind, QStringLiteral("edge"));
    scene_->addItem(item);
  }
  edgeCount_ = int(layout.edges.size());
  nodeItems_.assign(g.nodes.size(), nullptr);
  for (const LayoutNode& n : layout.nodes) {
    const graph::Node& node = g.nodes[n.node];
    QRectF rect(n.x - n.width / 2, n.y - n.height / 2, n.width, n.height);
    auto* item =
        new NodeItem(rect, QString::fromStdString(node.op), QString::fromStdString(outputShapeText(g, n.node)));
    item->setZValue(2);
    item->setFlag(QGraphicsItem::ItemIsSelectable);
    // Text is the expensive part of a node: cache its pixels while panning.
    item->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    item->setData(kItemKind, QStringLiteral("node"));
    item->setData(kItemIndex, int(n.node));
    item->setToolTip(QString::fromStdString(node.name));
    scene_->addItem(item);
    nodeItems_[n.node] = item;
  }
  scene_->setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  quietSelection_ = false;
  ready_ = true;
  minimap_->refit();
  applyClusterColours();

  const QString counts = tr("%1 nodes, %2 partitions").arg(nodeItemCount()).arg(clusterItemCount());
  showStatus(collapsedCount() > 0 ? counts + tr(" (%1 collapsed: double-click to expand)").arg(collapsedCount())
                                  : counts);
  if (QGraphicsItem* focus = clusterItem(focusGroup)) {  // laid out again: the partition stays in view
    view_->centerOn(focus);
    return;
  }
  // Start at the top, as wide as fits (no larger than 100 %).
  view_->resetTransform();
  const double fit = (view_->viewport()->width() - 20) / std::max(1.0, scene_->sceneRect().width());
  const double s = std::clamp(fit, 0.05, 1.0);
  view_->scale(s, s);
  view_->verticalScrollBar()->setValue(view_->verticalScrollBar()->minimum());
}

int GraphView::nodeItemCount() const {
  return int(std::count_if(nodeItems_.begin(), nodeItems_.end(), [](QGraphicsItem* i) { return i != nullptr; }));
}
int GraphView::clusterItemCount() const {
  return int(clusterItems_.size());
}
int GraphView::edgeItemCount() const {
  return edgeCount_;
}

QGraphicsItem* GraphView::nodeItem(int node) const {
  return node >= 0 && size_t(node) < nodeItems_.size() ? nodeItems_[size_t(node)] : nullptr;
}
QGraphicsItem* GraphView::clusterItem(int group) const {
  auto it = clusterItems_.find(group);
  return it == clusterItems_.end() ? nullptr : it->second;
}
QColor GraphView::clusterColour(int group) const {
  auto* item = static_cast<ClusterItem*>(clusterItem(group));
  return item ? item->brush().color() : QColor();
}

int GraphView::taskOfNode(int node) const {
  if (node < 0 || size_t(node) >= groupOfNode_.size()) return -1;
  int group = groupOfNode_[size_t(node)];
  return group < 0 ? -1 : taskOfGroup_[size_t(group)];
}

double GraphView::taskShare(int task) const {
  return task >= 0 && task < shares_.size() ? shares_[task] : kNaN;
}

void GraphView::setTaskShares(const QVector<double>& shares) {
  shares_ = shares;
  applyClusterColours();
  if (ready_ && panel_ && panel_->node() >= 0)
    panel_->showNode(*model_, panel_->node(), taskShare(taskOfNode(panel_->node())));
}

double GraphView::measuredShare(int group) const {
  return group >= 0 && group < measuredShares_.size() ? measuredShares_[group] : kNaN;
}

void GraphView::updateHeatBox() {
  auto* items = qobject_cast<QStandardItemModel*>(heatBox_->model());
  if (!items) return;
  items->item(int(HeatMode::Measured))->setEnabled(!measuredShares_.isEmpty());
  items->item(int(HeatMode::Comparison))->setEnabled(!comparisonShares_.isEmpty());
}

void GraphView::setMeasuredShares(const QVector<double>& groupShares) {
  measuredShares_ = groupShares;
  updateHeatBox();
  if (groupShares.isEmpty() && heatMode_ == HeatMode::Measured)
    setHeatMode(HeatMode::Estimate);
  else if (ready_)
    applyClusterColours();
}

double GraphView::comparisonShare(int task) const {
  return task >= 0 && task < comparisonShares_.size() ? comparisonShares_[task] : kNaN;
}

void GraphView::setComparison(const QVector<double>& taskShares, const QStringList& taskNotes) {
  comparisonShares_ = taskShares;
  comparisonNotes_ = taskNotes;
  updateHeatBox();
  if (taskShares.isEmpty() && heatMode_ == HeatMode::Comparison)
    setHeatMode(HeatMode::Estimate);
  else if (ready_)
    applyClusterColours();
}

void GraphView::setHeatMode(HeatMode mode) {
  heatMode_ = mode;
  heatBox_->setCurrentIndex(int(mode));
  if (ready_) applyClusterColours();
}

double GraphView::heatShare(int group) const {
  const int task = taskOfGroup_[size_t(group)];
  switch (heatMode_) {
    case HeatMode::Measured:
      return measuredShare(group);
    case HeatMode::Comparison:
      return comparisonShare(task);
    case HeatMode::Estimate:
      break;
  }
  return taskShare(task);
}

QString GraphView::heatTip(int group, double share) const {
  const int task = taskOfGroup_[size_t(group)];
  const QString name = QString::fromStdString(model_->tasks[size_t(task)].name);
  const bool known = std::isfinite(share);
  const QString percent = QString::number(share * 100, 'f', 1);
  switch (heatMode_) {
    case HeatMode::Measured:
      return known ? tr("%1 (task %2, partition %3)\n%4 % of the measured run")
                         .arg(name)
                         .arg(task)
                         .arg(group)
                         .arg(percent)
                   : tr("%1 (task %2)\nnot in the measured run").arg(name).arg(task);
    case HeatMode::Comparison: {
      const QString note = task < comparisonNotes_.size() ? comparisonNotes_[task] : QString();
      return known ? tr("%1 (task %2)\n%3 % of what the sessions differ by\n%4").arg(name).arg(task).arg(percent, note)
                   : tr("%1 (task %2)\nnot measured in both sessions").arg(name).arg(task);
    }
    case HeatMode::Estimate:
      break;
  }
  return known ? tr("%1 (task %2)\n%3 % of the end-to-end latency").arg(name).arg(task).arg(percent)
               : tr("%1 (task %2)\nlatency not measured yet").arg(name).arg(task);
}

void GraphView::describeLegend(double maxShare) {
  const QString top = QString::number(maxShare * 100, 'f', 1);
  switch (heatMode_) {
    case HeatMode::Measured:
      legendTitle_->setText(tr("Run share  0 %"));
      legend_->setToolTip(tr("Partition colour: its share of the measured run (tessel run --profile), 0 % (white) "
                             "to %1 % (red, the largest)")
                              .arg(top));
      return;
    case HeatMode::Comparison:
      legendTitle_->setText(tr("Difference share  0 %"));
      legend_->setToolTip(tr("Partition colour: the task's share of what the two compared sessions differ by "
                             "(weight x |B - A|), 0 % (white) to %1 % (red, the largest)")
                              .arg(top));
      return;
    case HeatMode::Estimate:
      break;
  }
  legendTitle_->setText(tr("Latency share  0 %"));
  legend_->setToolTip(tr("Partition colour: the task's share of the measured end-to-end latency, 0 % (white) to "
                         "%1 % (red, the largest)")
                          .arg(top));
}

void GraphView::applyClusterColours() {
  double maxShare = 0;
  for (const auto& cluster : clusterItems_)
    if (const double s = heatShare(cluster.first); std::isfinite(s)) maxShare = std::max(maxShare, s);
  bool anyShare = false;
  for (auto [group, base] : clusterItems_) {
    auto* item = static_cast<ClusterItem*>(base);
    const double share = heatShare(group);
    QColor fill;
    if (std::isfinite(share)) {
      anyShare = true;
      fill = ramp(maxShare > 0 ? share / maxShare : 0);
    } else {
      fill = QColor(QString::fromStdString(defaultClusterColour(size_t(group))));
    }
    item->setToolTip(heatTip(group, share));
    fill.setAlpha(kClusterAlpha);
    item->setBrush(fill);
  }
  legend_->setVisible(anyShare);
  describeLegend(maxShare);
  if (anyShare) {
    // A small white-to-red bar between 0 % and the largest share.
    QPixmap bar(60, 10);
    QPainter p(&bar);
    QLinearGradient gradient(0, 0, 60, 0);
    gradient.setColorAt(0, ramp(0));
    gradient.setColorAt(1, ramp(1));
    p.fillRect(bar.rect(), gradient);
    p.setPen(Qt::gray);
    p.drawRect(bar.rect().adjusted(0, 0, -1, -1));
    p.end();
    legendBar_->setPixmap(bar);
    legendMax_->setText(tr("%1 %").arg(maxShare * 100, 0, 'f', 1));
  }
}

void GraphView::onSelectionChanged() {
  if (quietSelection_ || !ready_) return;
  const QList<QGraphicsItem*> selected = scene_->selectedItems();
  if (selected.size() != 1) return;
  QGraphicsItem* item = selected.front();
  const QString kind = item->data(kItemKind).toString();
  const int index = item->data(kItemIndex).toInt();
  if (kind == "node") {
    const int task = taskOfNode(index);
    if (panel_) panel_->showNode(*model_, index, taskShare(task));
    emit nodeSelected(index);
    if (task >= 0) emit taskSelected(task);
  } else if (kind == "cluster") {
    if (int task = taskOfGroup_[size_t(index)]; task >= 0) emit taskSelected(task);
  }
}

void GraphView::selectNode(int node) {
  QGraphicsItem* item = nodeItem(node);
  if (!item && node >= 0 && size_t(node) < groupOfNode_.size() && isCollapsed(groupOfNode_[size_t(node)])) {
    pendingNode_ = node;  // selected once laid out
    setCollapsed(groupOfNode_[size_t(node)], false);
    return;
  }
  if (!item) return;
  quietSelection_ = true;
  scene_->clearSelection();
  quietSelection_ = false;
  item->setSelected(true);  // onSelectionChanged: panel and signals
  if (zoom() < 0.5) {       // too far out to read the node: come closer
    view_->resetTransform();
  }
  view_->centerOn(item);
}

void GraphView::selectTask(int task) {
  if (!ready_ || task < 0 || size_t(task) >= model_->tasks.size()) return;
  quietSelection_ = true;
  // A selected node of this task stays selected (its properties stay shown).
  for (QGraphicsItem* item : scene_->selectedItems())
    if (item->data(kItemKind).toString() != "node" || taskOfNode(item->data(kItemIndex).toInt()) != task)
      item->setSelected(false);
  QGraphicsItem* first = nullptr;
  for (size_t group : model_->tasks[size_t(task)].groups)
    if (QGraphicsItem* item = clusterItem(int(group))) {
      item->setSelected(true);
      if (!first) first = item;
    }
  quietSelection_ = false;
  if (first) view_->centerOn(first);
}

int GraphView::find(const QString& text) {
  lastQuery_ = text.trimmed();
  matches_.clear();
  matchIndex_ = -1;
  if (!ready_ || lastQuery_.isEmpty()) {
    showStatus({});
    return 0;
  }
  const std::string query = lastQuery_.toLower().toStdString();
  auto lower = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
  };
  const auto& nodes = model_->graph.nodes;
  std::vector<int> exact, partial;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string name = lower(nodes[i].name);
    if (name == query)
      exact.push_back(int(i));
    else if (name.find(query) != std::string::npos || lower(nodes[i].op).find(query) != std::string::npos)
      partial.push_back(int(i));
  }
  matches_ = exact;
  matches_.insert(matches_.end(), partial.begin(), partial.end());
  if (matches_.empty()) {
    showStatus(tr("no match"));
    return 0;
  }
  findNext();
  return int(matches_.size());
}

int GraphView::findNext() {
  if (matches_.empty()) return -1;
  matchIndex_ = (matchIndex_ + 1) % int(matches_.size());
  showStatus(tr("%1/%2").arg(matchIndex_ + 1).arg(matches_.size()));
  selectNode(matches_[size_t(matchIndex_)]);
  return matches_[size_t(matchIndex_)];
}

void GraphView::fitToView() {
  if (!ready_) return;
  view_->fitInView(scene_->sceneRect(), Qt::KeepAspectRatio);
  // fitInView ignores our limits: a very long graph would be specks.
  if (zoom() < kMinZoom) zoomBy(kMinZoom / zoom());
}

void GraphView::zoomBy(double factor) {
  const double current = zoom();
  const double target = std::clamp(current * factor, kMinZoom, kMaxZoom);
  view_->setTransformationAnchor(QGraphicsView::AnchorViewCenter);
  view_->scale(target / current, target / current);
  view_->setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
}

double GraphView::zoom() const {
  return view_->transform().m11();
}

bool GraphView::exportImage(const QString& path, QString* error) {
  auto fail = [&](const QString& message) {
    if (error) *error = message;
    return false;
  };
  if (!ready_) return fail(tr("cannot export %1: no graph laid out").arg(path));
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix == "svg") {
    std::map<size_t, std::string> colours;
    for (auto [group, item] : clusterItems_)
      colours[size_t(group)] = clusterColour(group).name(QColor::HexRgb).toStdString();
    std::string svg;
    try {
      svg = renderSvg(*model_, colours, collapsed_);
    } catch (const std::exception& e) {
      return fail(tr("cannot export %1: %2").arg(path, QString::fromStdString(e.what())));
    }
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
      return fail(tr("cannot write %1: %2").arg(path, file.errorString()));
    if (file.write(svg.data(), qint64(svg.size())) != qint64(svg.size()) || !file.flush())
      return fail(tr("cannot write %1: %2").arg(path, file.errorString()));
    return true;
  }
  if (suffix != "png") return fail(tr("cannot export %1: unknown format '%2' (use .png or .svg)").arg(path, suffix));
  const QRectF source = scene_->sceneRect();
  const double scale = std::min({2.0, 16384.0 / source.width(), 16384.0 / source.height()});
  const QSize size(int(std::ceil(source.width() * scale)), int(std::ceil(source.height() * scale)));
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  if (image.isNull())
    return fail(tr("cannot export %1: no memory for a %2x%3 image").arg(path).arg(size.width()).arg(size.height()));
  image.fill(Qt::white);
  QPainter painter(&image);
  painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  scene_->render(&painter, QRectF(image.rect()), source);
  painter.end();
  QImageWriter writer(path, "png");
  if (!writer.write(image)) return fail(tr("cannot write %1: %2").arg(path, writer.errorString()));
  return true;
}

void GraphView::exportWithDialog() {
  if (!ready_) return;
  const QString name = QString::fromStdString(model_->name) + ".png";
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export graph"), name, tr("PNG image (*.png);;SVG (*.svg)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportImage(path, &error)) QMessageBox::warning(this, tr("Export graph"), error);
}

}  // namespace tessel::ui
