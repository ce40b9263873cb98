#include "ui/node_properties_panel.h"

#include <QTextBrowser>
#include <QVBoxLayout>
#include <cmath>
#include <type_traits>

#include "fusion/fusion_plan.h"
#include "ui/graph_layout.h"

namespace tessel::ui {

namespace {

QString esc(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

// Long lists (a Reshape's target, pads) are cut so the panel stays readable.
template <typename T>
QString listText(const std::vector<T>& v) {
  QStringList parts;
  for (size_t i = 0; i < v.size() && i < 16; ++i)
    parts << QString::number(v[i]);
  if (v.size() > 16) parts << QStringLiteral("… (%1 values)").arg(v.size());
  return "[" + parts.join(", ") + "]";
}

QString attrText(const graph::AttrValue& value) {
  return std::visit(
      [](const auto& v) -> QString {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>)
          return QString::fromStdString(v);
        else if constexpr (std::is_arithmetic_v<V>)
          return QString::number(v);
        else
          return listText(v);
      },
      value);
}

QString shapeText(const std::vector<int64_t>& shape) {
  QStringList dims;
  for (int64_t d : shape)
    dims << QString::number(d);
  return shape.empty() ? QStringLiteral("scalar") : dims.join("x");
}

QString flopsText(double flops) {
  if (flops >= 1e9) return QStringLiteral("%1 GFLOP").arg(flops / 1e9, 0, 'f', 3);
  if (flops >= 1e6) return QStringLiteral("%1 MFLOP").arg(flops / 1e6, 0, 'f', 3);
  if (flops >= 1e3) return QStringLiteral("%1 kFLOP").arg(flops / 1e3, 0, 'f', 2);
  return QStringLiteral("%1 FLOP").arg(flops, 0, 'f', 0);
}

}  // namespace

NodePropertiesPanel::NodePropertiesPanel(QWidget* parent) : QWidget(parent), view_(new QTextBrowser(this)) {
  setObjectName("nodePropertiesPanel");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  view_->setOpenLinks(false);
  layout->addWidget(view_);
  clear();
}

void NodePropertiesPanel::clear() {
  node_ = -1;
  view_->setHtml("<p><i>Select a node in the graph.</i></p>");
}

QString NodePropertiesPanel::text() const {
  return view_->toPlainText();
}

void NodePropertiesPanel::showNode(const frontend::PreparedModel& m, int node, double taskShare) {
  const graph::Graph& g = m.graph;
  if (node < 0 || size_t(node) >= g.nodes.size()) {
    clear();
    return;
  }
  node_ = node;
  const graph::Node& n = g.nodes[size_t(node)];
  QString html = QStringLiteral("<h3>%1</h3><table cellspacing=2>").arg(esc(n.name));
  auto row = [&](const QString& key, const QString& value) {
    html += QStringLiteral("<tr><td valign=top><b>%1</b>&nbsp;</td><td>%2</td></tr>").arg(key, value);
  };
  row("Op", esc(n.op));
  auto valueRow = [&](const std::string& name) {
    if (name.empty()) return QStringLiteral("(absent)");
    QString s = esc(name);
    if (auto it = g.values.find(name); it != g.values.end())
      s += QStringLiteral(": %1 %2").arg(shapeText(it->second.shape), graph::dtypeName(it->second.dtype));
    if (g.isInitializer(name)) s += " (constant)";
    return s;
  };
  QStringList inputs, outputs;
  for (const std::string& in : n.inputs)
    inputs << valueRow(in);
  for (const std::string& out : n.outputs)
    outputs << valueRow(out);
  row("Inputs", inputs.join("<br>"));
  row("Outputs", outputs.join("<br>"));
  QStringList attrs;
  for (const auto& [key, value] : n.attrs)
    attrs << QStringLiteral("%1 = %2").arg(esc(key), attrText(value).toHtmlEscaped());
  row("Attributes", attrs.isEmpty() ? QStringLiteral("(none)") : attrs.join("<br>"));
  row("FLOPs", flopsText(fusion::nodeFlops(g, n)));

  // Its partition and the task standing for it.
  int group = -1;
  for (size_t gi = 0; gi < m.plan.groups.size() && group < 0; ++gi)
    for (size_t member : m.plan.groups[gi])
      if (member == size_t(node)) group = int(gi);
  if (group >= 0) {
    QStringList ops;
    for (size_t member : m.plan.groups[size_t(group)])
      ops << esc(g.nodes[member].op);
    row("Partition", QStringLiteral("#%1 (%2)").arg(group).arg(ops.join(" → ")));
    std::vector<int> taskOf = taskOfGroups(m);
    if (int t = taskOf[size_t(group)]; t >= 0) {
      const fusion::GraphTask& task = m.tasks[size_t(t)];
      row("Task", QStringLiteral("%1 (#%2)").arg(esc(task.name)).arg(t));
      row("Task key", esc(task.key));
      row("Task FLOPs", QStringLiteral("%1 × %2").arg(flopsText(task.flops)).arg(task.weight));
      row("Latency share", std::isnan(taskShare) ? QStringLiteral("not measured yet")
                                                 : QStringLiteral("%1 %").arg(taskShare * 100, 0, 'f', 1));
    } else {
      row("Task", "none (a view: no kernel)");
    }
  }
  html += "</table>";
  view_->setHtml(html);
}

}  // namespace tessel::ui
