// Studio: the live plots' cost with a long history. The scatter holds
// 100,000 measured programs (16 tasks, reopened in bulk); prints
//  - the replot time of the scatter plot alone (median of 21 replot()s,
//    drawing into its buffer; QCustomPlot's adaptive sampling on, as in the
//    studio, and off for reference),
//  - the time of one full batched update cycle as the studio runs it after
//    each measured batch: 64 new programs and a round arrive, then the
//    panel rebuilds the scatter (normalisation, sort, Spearman's rho over
//    all points) and replots the three plots (median of 11).
// No peer: figures only.
//
//   QT_QPA_PLATFORM=offscreen build/bin/bench_plots_replot [POINTS] [--png FILE]
// (--png saves the panel as drawn, for the docs)
#include <qcustomplot.h>

#include <QApplication>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "ui/plots_panel.h"

using namespace tessel;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double timeMs(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  int points = 100000;
  QString png;
  for (int i = 1; i < argc; ++i) {
    if (QString(argv[i]) == "--png" && i + 1 < argc)
      png = argv[++i];
    else
      points = std::max(2, std::atoi(argv[i]));
  }
  const int tasks = 16;

  ui::PlotsPanel panel;
  panel.resize(1500, 500);  // three plots side by side, about 500x450 each
  panel.show();
  QApplication::processEvents();
  QStringList names;
  for (int t = 0; t < tasks; ++t)
    names << QStringLiteral("task%1").arg(t);
  panel.setTasks(names);

  // Measured latencies lognormal around 1 ms; the model's score is the
  // throughput with multiplicative noise, so rho lands around 0.8.
  std::mt19937 rng(1);
  std::lognormal_distribution<double> seconds(-7, 0.8);
  std::normal_distribution<double> noise(0, 0.35);
  QVector<int> task(points);
  QVector<double> predicted(points), measured(points);
  for (int i = 0; i < points; ++i) {
    task[i] = i % tasks;
    measured[i] = seconds(rng);
    predicted[i] = std::exp(-std::log(measured[i]) + noise(rng));
  }
  // One round per 64 programs, as a tuning run would report them.
  const int rounds = points / 64;
  std::vector<double> best(tasks, 1.0);
  for (int r = 0; r < rounds; ++r) {
    const int t = r % tasks;
    for (int i = r * 64; i < (r + 1) * 64 && i < points; ++i)
      best[t] = std::min(best[t], measured[i]);
    panel.addRound(t, (r / tasks + 1) * 64, best[t], 1e-3 * tasks * (1 + 10.0 / (r + 1)), 0.05 * r);
  }

  const double bulkMs = timeMs([&] {
    panel.addProgramsBulk(task, predicted, measured);
    panel.replotNow();
  });
  QApplication::processEvents();

  QCustomPlot* scatter = panel.scatterPlot();
  const int shown = panel.scatterPointCount();
  const double rho = panel.rankCorrelation();
  std::vector<double> replot, replotNoSampling;
  for (int i = 0; i < 21; ++i)
    replot.push_back(timeMs([&] { scatter->replot(QCustomPlot::rpImmediateRefresh); }));
  panel.scatterGraph()->setAdaptiveSampling(false);
  for (int i = 0; i < 21; ++i)
    replotNoSampling.push_back(timeMs([&] { scatter->replot(QCustomPlot::rpImmediateRefresh); }));
  panel.scatterGraph()->setAdaptiveSampling(true);

  std::vector<double> cycle;
  for (int c = 0; c < 11; ++c) {
    const int t = c % tasks;
    QVector<double> p(64), m(64);
    for (int i = 0; i < 64; ++i) {
      m[i] = seconds(rng);
      p[i] = std::exp(-std::log(m[i]) + noise(rng));
    }
    cycle.push_back(timeMs([&] {
      panel.addPrograms(t, p, m);
      panel.addRound(t, 10000 + c * 64, best[t], 1e-3 * tasks, 0.05 * (rounds + c));
      panel.replotNow();
    }));
    QApplication::processEvents();
  }

  // Where a cycle goes: the scatter's rebuild (normalise, sort, rho) alone,
  // and the replot of each of the other two plots.
  std::vector<double> rebuild, bestReplot, estimateReplot;
  for (int i = 0; i < 11; ++i) {
    panel.invalidateAll();
    rebuild.push_back(timeMs([&] { panel.rankCorrelation(); }));
    bestReplot.push_back(timeMs([&] { panel.bestPlot()->replot(QCustomPlot::rpImmediateRefresh); }));
    estimateReplot.push_back(timeMs([&] { panel.estimatePlot()->replot(QCustomPlot::rpImmediateRefresh); }));
    panel.replotNow();
  }

  std::printf("plots replot: %d points in the scatter (%d tasks), scatter plot %dx%d px, Spearman rho %.3f\n", shown,
              tasks, scatter->width(), scatter->height(), rho);
  std::printf("  scatter replot (median of 21):               %8.2f ms  (adaptive sampling on, as in the studio)\n",
              median(replot));
  std::printf("  scatter replot, adaptive sampling off:        %8.2f ms\n", median(replotNoSampling));
  std::printf("  full batched update cycle (median of 11):     %8.2f ms  (64 new programs + 1 round, 3 plots)\n",
              median(cycle));
  std::printf("    of which scatter data rebuild + rho:       %8.2f ms\n", median(rebuild));
  std::printf("    best-vs-trials / estimate plot replot:     %8.2f / %.2f ms\n", median(bestReplot),
              median(estimateReplot));
  std::printf("  bulk load (addProgramsBulk + first cycle):    %8.2f ms\n", bulkMs);
  if (!png.isEmpty() && !panel.grab().save(png)) {
    std::fprintf(stderr, "cannot write %s\n", qPrintable(png));
    return 1;
  }
  return 0;
}
