// Studio: the graph view's cost on large graphs. For each model: the
// Graphviz dot layout of the whole graph and of its partitions collapsed
// (layoutGraph, best of 3), then the view as a user meets it: opening it
// (layout on its worker thread, scene building on the UI thread; a graph of
// more than GraphView::kCollapseAbove nodes opens collapsed), panning it
// (60 frames, each a 30 px scroll and one render of the 1200x900 view into
// an image, offscreen raster: mean and slowest frame), and for a graph that
// opened collapsed, Expand all and panning again. No peer: figures only.
//
//   QT_QPA_PLATFORM=offscreen build/bin/bench_graph_layout [MODEL...]
// MODEL: a zoo name, or encoder:L, a ViT-style pre-norm encoder of L layers
// (width 64, 4 heads, sequence 16: small tensors, a big graph of 29 nodes a
// layer; encoder:345 has 10,006 nodes). Default: bert_base
// vit_huge_encoder (the zoo's largest graph, 929 nodes) encoder:345.
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QGraphicsView>
#include <QImage>
#include <QPainter>
#include <QScrollBar>
#include <QTimer>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "graph/zoo_models.h"
#include "ui/graph_layout.h"
#include "ui/graph_view.h"

using namespace tessel;

namespace {

frontend::PreparedModel prepare(const std::string& name) {
  const auto host = tessel::target::Target::host();
  if (name.rfind("encoder:", 0) == 0) {
    const int64_t layers = std::stoll(name.substr(8));
    graph::Graph g = graph::zoo::encoder({name, layers, 64, 256, 4, 16, true, false, "Gelu", 1e-6});
    return frontend::prepareModel(std::move(g), name, "dp", host);
  }
  return frontend::prepareModel(name, "", "dp", host);
}

double bestOf3(const frontend::PreparedModel& model, const ui::CollapsedGroups& collapsed, ui::GraphLayout* last) {
  double best = 1e9;
  for (int r = 0; r < 3; ++r) {
    *last = ui::layoutGraph(model, collapsed);
    best = std::min(best, last->seconds);
  }
  return best;
}

// Runs `change` and waits for the view's layout: (layout s, scene s), or (-1, -1).
template <typename Change>
std::pair<double, double> waitForLayout(ui::GraphView& view, Change change) {
  std::pair<double, double> out{-1, -1};
  QEventLoop loop;
  auto done = QObject::connect(&view, &ui::GraphView::layoutFinished, &loop, [&](double l, double s) {
    out = {l, s};
    loop.quit();
  });
  auto failed = QObject::connect(&view, &ui::GraphView::layoutFailed, &loop, [&](const QString& e) {
    std::fprintf(stderr, "layout failed: %s\n", qPrintable(e));
    loop.quit();
  });
  QTimer::singleShot(300000, &loop, &QEventLoop::quit);
  change();
  loop.exec();
  QObject::disconnect(done);
  QObject::disconnect(failed);
  return out;
}

struct Frames {
  double meanMs = 0, slowestMs = 0;
};

// Pans down from the top, 30 px a frame, rendering the view each time.
Frames pan(ui::GraphView& view, int frames = 60) {
  QGraphicsView* v = view.view();
  QImage image(v->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
  v->verticalScrollBar()->setValue(v->verticalScrollBar()->minimum());
  Frames f;
  for (int i = 0; i < frames; ++i) {
    QElapsedTimer timer;
    timer.start();
    v->verticalScrollBar()->setValue(v->verticalScrollBar()->value() + 30);
    QPainter p(&image);
    v->render(&p);
    p.end();
    const double ms = double(timer.nsecsElapsed()) / 1e6;
    f.meanMs += ms / frames;
    f.slowestMs = std::max(f.slowestMs, ms);
  }
  return f;
}

void printPan(const char* what, const Frames& f) {
  std::printf("  pan %s: %.1f ms a frame (%.0f frames/s), slowest %.1f ms\n", what, f.meanMs, 1000 / f.meanMs,
              f.slowestMs);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i)
    models.push_back(argv[i]);
  if (models.empty()) models = {"bert_base", "vit_huge_encoder", "encoder:345"};

  for (const std::string& name : models) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<const frontend::PreparedModel>(prepare(name));
    const double prepared = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    ui::GraphLayout whole, collapsed;
    const double wholeSeconds = bestOf3(*model, {}, &whole);
    const double collapsedSeconds = bestOf3(*model, ui::allCollapsed(*model), &collapsed);
    std::printf("%s (dp fusion): %zu nodes, %zu edges, %zu partitions, laid out %.0fx%.0f pt (prepareModel %.2f s)\n",
                name.c_str(), whole.nodes.size(), whole.edges.size(), whole.clusters.size(), whole.width, whole.height,
                prepared);
    std::printf("  Graphviz dot, best of 3: whole graph %.3f s; partitions collapsed %.3f s (%zu boxes, %zu nodes)\n",
                wholeSeconds, collapsedSeconds, collapsed.clusters.size(), collapsed.nodes.size());

    ui::GraphView view;
    view.resize(1200, 900);
    view.show();
    const auto [openLayout, openScene] = waitForLayout(view, [&] { view.setModel(model); });
    if (openLayout < 0) return 1;
    std::printf("  GraphView opens it%s: layout %.3f s + scene %.3f s = %.3f s (%d node, %d partition items)\n",
                view.collapsedCount() > 0 ? " collapsed" : "", openLayout, openScene, openLayout + openScene,
                view.nodeItemCount(), view.clusterItemCount());
    printPan("as opened", pan(view));
    view.view()->resetTransform();
    printPan("at 100 %", pan(view));
    if (view.collapsedCount() > 0) {
      const auto [l, sc] = waitForLayout(view, [&] { view.expandAll(); });
      std::printf("  Expand all: layout %.3f s + scene %.3f s = %.3f s (%d node items)\n", l, sc, l + sc,
                  view.nodeItemCount());
      view.view()->resetTransform();
      printPan("expanded, at 100 %", pan(view));
    }
    view.fitToView();
    QImage image(view.view()->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
    QElapsedTimer timer;
    timer.start();
    for (int r = 0; r < 10; ++r) {
      QPainter p(&image);
      view.view()->render(&p);
    }
    std::printf("  repaint fitted to the whole graph: %.1f ms\n", double(timer.nsecsElapsed()) / 1e6 / 10);
    std::fflush(stdout);
  }
  return 0;
}
