// Studio: the graph view's cost on large graphs. For each model, the
// Graphviz dot layout (best of 3 runs of layoutGraph) and then the whole
// path of the view: layout on its worker thread and scene building on the
// UI thread (as layoutFinished reports them), with node/edge/cluster counts,
// and the time to paint the 1200x900 view fitted to the whole graph and at
// 100 % (mean of 10 repaints into an image, offscreen raster).
// No peer: figures only.
//
//   QT_QPA_PLATFORM=offscreen build/bin/bench_graph_layout [MODEL...]
// (default: bert_base vit_huge_encoder, the zoo's largest graph: 929 nodes)
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QGraphicsView>
#include <QImage>
#include <QPainter>
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

// A zoo model, or "encoder:L": a ViT-style pre-norm encoder of L layers
// (width 64, 4 heads, sequence 16: small tensors, a big graph; 29 nodes a
// layer, so 345 layers make 10,000 nodes).
frontend::PreparedModel prepare(const std::string& name) {
  const auto host = tessel::target::Target::host();
  if (name.rfind("encoder:", 0) == 0) {
    const int64_t layers = std::stoll(name.substr(8));
    graph::Graph g = graph::zoo::encoder({name, layers, 64, 256, 4, 16, true, false, "Gelu", 1e-6});
    return frontend::prepareModel(std::move(g), name, "dp", host);
  }
  return frontend::prepareModel(name, "", "dp", host);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i)
    models.push_back(argv[i]);
  if (models.empty()) models = {"bert_base", "vit_huge_encoder"};

  for (const std::string& name : models) {
    auto t0 = std::chrono::steady_clock::now();
    auto model = std::make_shared<const frontend::PreparedModel>(prepare(name));
    const double prepare = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    double best = 1e9;
    ui::GraphLayout layout;
    for (int r = 0; r < 3; ++r) {
      layout = ui::layoutGraph(*model);
      best = std::min(best, layout.seconds);
    }

    ui::GraphView view;
    view.resize(1200, 900);
    view.show();
    double viewLayout = -1, viewScene = -1;
    QEventLoop loop;
    QObject::connect(&view, &ui::GraphView::layoutFinished, &loop, [&](double l, double s) {
      viewLayout = l;
      viewScene = s;
      loop.quit();
    });
    QObject::connect(&view, &ui::GraphView::layoutFailed, &loop, [&](const QString& e) {
      std::fprintf(stderr, "%s: layout failed: %s\n", name.c_str(), qPrintable(e));
      loop.quit();
    });
    QTimer::singleShot(120000, &loop, &QEventLoop::quit);
    view.setModel(model);
    loop.exec();
    if (viewLayout < 0) return 1;

    // One repaint of the view (what a scroll or zoom costs).
    auto paintMs = [&] {
      QImage image(view.view()->viewport()->size(), QImage::Format_ARGB32_Premultiplied);
      QElapsedTimer timer;
      timer.start();
      for (int r = 0; r < 10; ++r) {
        QPainter p(&image);
        view.view()->render(&p);
      }
      return double(timer.nsecsElapsed()) / 1e6 / 10;
    };
    view.fitToView();
    const double fitMs = paintMs();
    view.view()->resetTransform();
    const double fullMs = paintMs();

    std::printf("%s (dp fusion): %zu nodes, %zu edges, %zu clusters, layout %.0fx%.0f pt (prepareModel %.2f s)\n",
                name.c_str(), layout.nodes.size(), layout.edges.size(), layout.clusters.size(), layout.width,
                layout.height, prepare);
    std::printf("  Graphviz dot layout (layoutGraph, best of 3): %.3f s\n", best);
    std::printf(
        "  GraphView: layout on its worker thread %.3f s, scene building on the UI thread %.3f s "
        "(%d node, %d edge, %d cluster items)\n",
        viewLayout, viewScene, view.nodeItemCount(), view.edgeItemCount(), view.clusterItemCount());
    std::printf("  repaint of the view: %.1f ms fitted to the whole graph, %.1f ms at 100 %%\n", fitMs, fullMs);
  }
  return 0;
}
