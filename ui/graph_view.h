// The studio's graph view: the model's computation graph laid out by
// Graphviz dot on a worker thread, drawn in a QGraphicsScene with the fusion
// partitions as coloured clusters (see graph_layout.h for which groups are
// clusters), each collapsible into one box; zoom, pan, fit, search, an
// overview in the corner, colouring by latency share (the
// tuner's estimate, or a measured run's), PNG/SVG export, and a properties
// panel for the selected node.
#pragma once

#include <QColor>
#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "frontend/model_loader.h"
#include "ui/node_properties_panel.h"

class QGraphicsItem;
class QGraphicsScene;
class QGraphicsView;
class QComboBox;
class QLabel;
class QLineEdit;

namespace tessel::ui {

class GraphMinimap;

struct GraphLayout;

class GraphView : public QWidget {
  Q_OBJECT

 public:
  // QGraphicsItem::data keys of the scene's items: kind ("node", "edge",
  // "cluster") and index (node index; group index for clusters).
  static constexpr int kItemKind = 0;
  static constexpr int kItemIndex = 1;

  // A graph of more nodes opens with its partitions collapsed.
  static constexpr int kCollapseAbove = 2000;

  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows a model: the layout runs on a worker thread (QtConcurrent), the
  // scene is built on the UI thread when it is done; emits layoutFinished.
  // A model set while a layout runs supersedes it. nullptr clears.
  void setModel(std::shared_ptr<const frontend::PreparedModel> model);
  void clear();
  bool isLayoutReady() const { return ready_; }
  const frontend::PreparedModel* model() const { return ready_ ? model_.get() : nullptr; }
  QGraphicsScene* scene() const { return scene_; }
  QGraphicsView* view() const { return view_; }
  QLineEdit* searchBox() const { return search_; }
  int nodeItemCount() const;                    // one item per graph node
  int clusterItemCount() const;                 // one item per partition cluster
  int edgeItemCount() const;                    // one per distinct (producer, consumer) pair
  QGraphicsItem* nodeItem(int node) const;      // nullptr if none
  QGraphicsItem* clusterItem(int group) const;  // nullptr if the group is no cluster
  QColor clusterColour(int group) const;        // its fill (invalid if none)

  // Colours partitions by their task's share of the measured end-to-end
  // latency (index = task in model->tasks, value in [0, 1], NaN = not
  // measured yet): white to red relative to the largest share, with a legend
  // and tooltips; unmeasured partitions keep their pastel.
  void setTaskShares(const QVector<double>& shares);
  double taskShare(int task) const;  // NaN if unknown

  // What the partitions' heat shows: their task's share of the estimated
  // end-to-end latency (the tuning's), their share of a measured run, or
  // their task's share of what two compared sessions differ by.
  enum class HeatMode { Estimate, Measured, Comparison };
  // The share of each partition in a measured run (index = group in
  // model->plan.groups, value in [0, 1]; empty: no run). Shown in Measured
  // mode, which the view's colour box offers once there is a run; a new
  // model clears it and goes back to Estimate.
  void setMeasuredShares(const QVector<double>& groupShares);
  double measuredShare(int group) const;  // NaN if unknown
  // Two sessions compared (index = task in model->tasks): each task's share
  // of the summed |weight x (B - A)| in [0, 1] (NaN: not compared), and a
  // line for its tooltip ("B 0.52x A, -4.1 ms to the model"). Shown in
  // Comparison mode, offered while there is one; empty clears it.
  void setComparison(const QVector<double>& taskShares, const QStringList& taskNotes);
  double comparisonShare(int task) const;  // NaN if unknown
  void setHeatMode(HeatMode mode);
  HeatMode heatMode() const { return heatMode_; }
  QComboBox* heatModeBox() const { return heatBox_; }
  // Highlights (selects and centres on) the clusters of a task; does not
  // emit taskSelected (the caller knows).
  void selectTask(int task);
  // Search by node name or op (case-insensitive substring; an exact name
  // comes first): selects and centres on the first match, returns the number
  // of matches. The search box does the same, Enter again for the next match.
  int find(const QString& text);
  int findNext();  // the next match of the last find (-1 if none)
  void fitToView();
  void zoomBy(double factor);
  double zoom() const;
  // Partitions collapsed into one box each, in place of their nodes: a big
  // graph (more than kCollapseAbove nodes) opens with all of them collapsed,
  // so that it lays out at once. Double-click a box to expand it, the frame
  // of an expanded partition to collapse it; the buttons collapse or expand
  // all. Each change lays the graph out again (layoutFinished follows)
  // and keeps the partition in view. Finding a node inside a collapsed
  // partition expands it.
  void setCollapsed(int group, bool collapsed);
  void collapseAll();
  void expandAll();
  bool isCollapsed(int group) const;
  int collapsedCount() const;
  // .png (the scene at 2x, at most 16384 px a side) or .svg (Graphviz's own
  // rendering, clusters in their current colours); false + *error naming
  // the problem.
  bool exportImage(const QString& path, QString* error);
  // A widget the main window docks separately (owned by this view until it
  // is given a parent).
  NodePropertiesPanel* propertiesPanel() const { return panel_; }
  // The overview of the whole graph in the canvas' corner.
  GraphMinimap* minimap() const { return minimap_; }

 signals:
  // After setModel, and after each change of the collapsed partitions.
  void layoutFinished(double layoutSeconds, double sceneSeconds);
  void layoutFailed(const QString& message);
  void nodeSelected(int node);
  void taskSelected(int task);  // clicking a node or cluster of a task

 private:
  bool eventFilter(QObject* watched, QEvent* event) override;
  // Lays model_ out with the partitions collapsed_ on a worker thread, then
  // builds the scene centred on `focusGroup` (-1: from the top).
  void startLayout(int focusGroup = -1);
  void buildScene(const GraphLayout& layout, int focusGroup);
  void showStatus(const QString& text);
  void applyClusterColours();
  void onSelectionChanged();
  void selectNode(int node);
  void exportWithDialog();
  int taskOfNode(int node) const;
  // The share a cluster is coloured by in the current mode (NaN: none).
  double heatShare(int group) const;
  // A cluster's tooltip in the current mode: its task, and its share.
  QString heatTip(int group, double share) const;
  // The legend's title and tooltip in the current mode, up to `maxShare`.
  void describeLegend(double maxShare);
  // Enables the heat box's entries that have something to show.
  void updateHeatBox();

  QGraphicsScene* scene_;
  QGraphicsView* view_;
  QLineEdit* search_;
  QLabel* matchLabel_;
  // Shown while shares are known: "latency share 0 % [white..red] 37.5 %".
  QWidget* legend_;
  QLabel* legendTitle_;
  QLabel* legendBar_;
  QLabel* legendMax_;
  QPointer<NodePropertiesPanel> panel_;

  std::shared_ptr<const frontend::PreparedModel> model_;
  std::vector<bool> collapsed_;  // by group (ui::CollapsedGroups)
  int pendingNode_ = -1;         // selected once its partition is expanded
  int generation_ = 0;           // of setModel calls: a finished layout of an older one is dropped
  bool ready_ = false;
  bool quietSelection_ = false;                 // selection changes made by the view itself emit nothing
  std::vector<QGraphicsItem*> nodeItems_;       // by node
  std::map<int, QGraphicsItem*> clusterItems_;  // by group
  int edgeCount_ = 0;
  std::vector<int> taskOfGroup_;      // -1: none
  std::vector<int> groupOfNode_;      // -1: none
  QVector<double> shares_;            // by task: of the estimate
  QVector<double> measuredShares_;    // by group: of a measured run
  QVector<double> comparisonShares_;  // by task: of two sessions' difference
  QStringList comparisonNotes_;       // by task
  HeatMode heatMode_ = HeatMode::Estimate;
  QComboBox* heatBox_;
  GraphMinimap* minimap_ = nullptr;
  QString lastQuery_;
  std::vector<int> matches_;
  int matchIndex_ = -1;
};

}  // namespace tessel::ui
