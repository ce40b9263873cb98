// The features of the learned cost models on real lowered programs: the
// program graph (nodes, attributes, nesting and data-flow edges), ATFormer's
// loop tokens, extraction of several kinds at once in parallel, and one
// xgb model serving two tasks (labels normalised within each).
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "cost/cost_model_registry.h"
#include "cost/features.h"
#include "cost/program_features.h"
#include "cost_test_support.h"
#include "lower/layout_rewrite.h"
#include "lower/loop_nest.h"
#include "schedule/sketch.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using namespace tessel::schedule;

namespace {

float slog(double x) {
  return float(std::log2(x + 1.0));
}

size_t column(const std::vector<std::string>& names, const std::string& name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  qFatal("no column named %s", name.c_str());
  return 0;
}

float attr(const cost::ProgramGraph& g, size_t node, const std::string& name) {
  return g.row(node)[column(cost::graphNodeFeatureNames(), name)];
}

std::vector<std::vector<Step>> samplePrograms(const te::ComputeDAG& dag, size_t count, uint64_t seed) {
  return cost_test::samplePrograms(dag, HardwareParams{}, count, seed);
}

std::map<cost::GraphNodeKind, int> countKinds(const cost::ProgramGraph& g) {
  std::map<cost::GraphNodeKind, int> n;
  for (cost::GraphNodeKind k : g.kinds)
    ++n[k];
  return n;
}

}  // namespace

class TestProgramFeatures : public QObject {
  Q_OBJECT

 private slots:
  // The naive 32x16x8 matmul: loops i, j (init) and i, j, k (update), two
  // stores into C, loads of C, A and B in the update, three buffers.
  void graphOfANaiveMatmul() {
    te::ComputeDAG dag = te::makeOperator("matmul", {32, 16, 8});
    const lower::LoweredFunc f = lower::lowerState(replay(dag, {}));
    const cost::ProgramGraph g = cost::buildProgramGraph(f);
    QCOMPARE(g.attributes.size(), g.numNodes() * cost::kGraphNodeFeatures);
    QCOMPARE(cost::graphNodeFeatureNames().size(), cost::kGraphNodeFeatures);
    auto kinds = countKinds(g);
    QCOMPARE(kinds[cost::GraphNodeKind::Buffer], 3);
    QCOMPARE(kinds[cost::GraphNodeKind::Store], 2);
    QCOMPARE(kinds[cost::GraphNodeKind::Load], 3);  // C, A, B in C += A * B
    QVERIFY(kinds[cost::GraphNodeKind::Loop] >= 3);
    // Every node has its one-hot kind, and the input/output buffers say so.
    int inputs = 0, outputs = 0;
    for (size_t n = 0; n < g.numNodes(); ++n) {
      QCOMPARE(g.row(n)[size_t(g.kinds[n])], 1.0f);
      inputs += attr(g, n, "is_input") == 1.0f;
      outputs += attr(g, n, "is_output") == 1.0f;
    }
    QCOMPARE(inputs, 2);
    QCOMPARE(outputs, 1);
    // The update store runs 32*16*8 times, with 2 flops; the reduction loop
    // (innermost) walks A with stride 1 and B with stride 16.
    bool sawUpdate = false;
    for (size_t n = 0; n < g.numNodes(); ++n) {
      if (g.kinds[n] != cost::GraphNodeKind::Store || attr(g, n, "size") != slog(32.0 * 16 * 8)) continue;
      sawUpdate = true;
      QCOMPARE(attr(g, n, "store_flops"), slog(2));
      QCOMPARE(attr(g, n, "depth"), 3.0f);
    }
    QVERIFY(sawUpdate);
    std::multiset<float> loadStrides;
    for (size_t n = 0; n < g.numNodes(); ++n)
      if (g.kinds[n] == cost::GraphNodeKind::Load) loadStrides.insert(attr(g, n, "inner_stride"));
    QCOMPARE(loadStrides, (std::multiset<float>{0.0f, slog(1), slog(16)}));  // C, A, B
    // Edges: every store and loop but the outermost ones is nested in a
    // loop; each load flows from its buffer into its store, each store into
    // its buffer.
    int nesting = 0, flow = 0;
    for (const auto& e : g.edges) {
      QVERIFY(e.from >= 0 && size_t(e.from) < g.numNodes() && e.to >= 0 && size_t(e.to) < g.numNodes());
      if (e.kind == cost::GraphEdgeKind::Nesting) {
        ++nesting;
        QCOMPARE(g.kinds[size_t(e.from)], cost::GraphNodeKind::Loop);
      } else {
        ++flow;
      }
    }
    QCOMPARE(flow, 3 * 2 + 2);  // buffer -> load -> store per load, store -> buffer per store
    // i { j { C = 0; k { C += A * B } } }: every loop but i and both stores
    // have one parent.
    QCOMPARE(kinds[cost::GraphNodeKind::Loop], 3);
    QCOMPARE(nesting, 3 - 1 + 2);
  }

  // A parallel, vectorised schedule shows in the loop attributes and tokens.
  void annotationsShowInGraphAndTokens() {
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 64, 64});
    const auto programs = samplePrograms(dag, 40, 3);
    QVERIFY(programs.size() >= 20);
    int parallel = 0, vectorized = 0;
    for (const auto& p : programs) {
      const lower::LoweredFunc f = lower::lowerState(replay(dag, p));
      const cost::ProgramGraph g = cost::buildProgramGraph(f);
      const cost::LoopTokens t = cost::extractLoopTokens(f);
      QCOMPARE(t.values.size() % cost::kLoopTokenFeatures, size_t(0));
      QCOMPARE(int(t.size()), std::min(int(cost::kMaxLoopTokens), countKinds(g)[cost::GraphNodeKind::Loop]));
      const size_t par = column(cost::loopTokenFeatureNames(), "parallel");
      const size_t vec = column(cost::loopTokenFeatureNames(), "vectorized");
      for (size_t k = 0; k < t.size(); ++k) {
        parallel += t.values[k * cost::kLoopTokenFeatures + par] == 1.0f;
        vectorized += t.values[k * cost::kLoopTokenFeatures + vec] == 1.0f;
        for (size_t c = 0; c < cost::kLoopTokenFeatures; ++c)
          QVERIFY(std::isfinite(t.values[k * cost::kLoopTokenFeatures + c]));
      }
    }
    QVERIFY(parallel > 0);
    QVERIFY(vectorized > 0);
  }

  // The loop tokens of the naive matmul: the work beneath each loop.
  void loopTokensOfANaiveMatmul() {
    te::ComputeDAG dag = te::makeOperator("matmul", {32, 16, 8});
    const cost::LoopTokens t = cost::extractLoopTokens(lower::lowerState(replay(dag, {})));
    const auto& names = cost::loopTokenFeatureNames();
    QCOMPARE(names.size(), cost::kLoopTokenFeatures);
    auto at = [&](size_t token, const char* name) {
      return t.values[token * cost::kLoopTokenFeatures + column(names, name)];
    };
    // Pre-order: the update nest's k loop is the last token.
    const size_t k = t.size() - 1;
    QCOMPARE(at(k, "extent"), slog(8));
    QCOMPARE(at(k, "depth"), 2.0f);
    QCOMPARE(at(k, "executions"), slog(32.0 * 16 * 8));
    QCOMPARE(at(k, "flops_beneath"), slog(2.0 * 32 * 16 * 8));
    QCOMPARE(at(k, "loops_beneath"), 0.0f);
    QCOMPARE(at(0, "depth"), 0.0f);
    QCOMPARE(at(0, "extent"), slog(32));
  }

  // All kinds at once, in parallel, equal each kind extracted alone; an
  // invalid program is marked so.
  void featureSetsMatchTheSingleExtractors() {
    te::ComputeDAG dag = te::makeOperator("conv2d", {1, 8, 14, 14, 16, 3, 3, 1, 1});
    auto programs = samplePrograms(dag, 48, 5);
    QVERIFY(programs.size() >= 40);
    programs.push_back({SplitStep{7, 0, {4}}});  // no stage 7: invalid
    const auto sets = cost::extractFeatureSets(dag, programs, cost::kAllFeatures);
    QCOMPARE(sets.size(), programs.size());
    QVERIFY(!sets.back().valid);
    for (size_t i = 0; i + 1 < programs.size(); ++i) {
      QVERIFY(sets[i].valid);
      QCOMPARE(sets[i].stores, cost::extractProgramFeatures(dag, programs[i]));
      lower::LoweredFunc f = lower::lowerState(replay(dag, programs[i]));
      lower::rewriteLayouts(&f);
      QVERIFY(sets[i].graph.numNodes() > 0);
      QCOMPARE(sets[i].graph, cost::buildProgramGraph(f));
      QCOMPARE(sets[i].loops, cost::extractLoopTokens(f));
    }
    const auto onlyRows = cost::extractFeatureSets(dag, programs, cost::kStoreRows);
    QCOMPARE(onlyRows[0].graph.numNodes(), size_t(0));
    QCOMPARE(onlyRows[0].stores, sets[0].stores);
  }

  // One xgb model learns two tasks whose costs differ by 1000x: labels are
  // normalised within each, so what it learns of the slow task (many
  // programs) ranks the fast one (few programs); one normalisation over both
  // would give the slow task's programs labels near 0.
  void xgbSharedByTwoTasks() {
    if (!cost::findCostModel("xgb")->available) TESSEL_SKIP("xgboost", "this build has no XGBoost");
    te::ComputeDAG dag = te::makeOperator("matmul", {64, 64, 64});
    auto programs = samplePrograms(dag, 160, 11);
    QVERIFY(programs.size() >= 150);
    const auto sets = cost::extractFeatureSets(dag, programs, cost::kStoreRows);
    // A synthetic cost that the features determine: the three columns that
    // vary most between these programs, summed over the stores.
    std::vector<std::pair<double, size_t>> spread;
    for (size_t c = 0; c < cost::kNumFeatures; ++c) {
      double lo = INFINITY, hi = -INFINITY;
      for (const auto& s : sets)
        for (const auto& row : s.stores)
          lo = std::min(lo, double(row[c])), hi = std::max(hi, double(row[c]));
      spread.push_back({hi - lo, c});
    }
    std::sort(spread.rbegin(), spread.rend());
    auto costOf = [&](const cost::ProgramFeatureSet& s) {
      double c = 1;
      for (const auto& row : s.stores)
        c += row[spread[0].second] + 0.5 * row[spread[1].second] + 0.25 * row[spread[2].second];
      return c;
    };
    cost::TaskRecords a{"fast", {}, {}}, b{"slow", {}, {}};
    std::vector<cost::ProgramFeatureSet> test;
    std::vector<double> testCost;
    for (size_t i = 0; i < sets.size(); ++i) {
      if (i % 3 == 2) {
        test.push_back(sets[i]);
        testCost.push_back(costOf(sets[i]));
      } else {
        const bool fast = i % 10 == 0;  // few programs of the task that is asked
        (fast ? a : b).programs.push_back(sets[i]);
        (fast ? a : b).costs.push_back(costOf(sets[i]) * (fast ? 1e-6 : 1e-3));
      }
    }
    auto accuracy = [&](const std::vector<double>& s) {
      size_t right = 0, all = 0;
      for (size_t i = 0; i < test.size(); ++i)
        for (size_t j = i + 1; j < test.size(); ++j)
          if (testCost[i] != testCost[j]) ++all, right += (s[i] > s[j]) == (testCost[i] < testCost[j]);
      return double(right) / double(all);
    };
    auto m = cost::makeCostModel("xgb", 1);
    m->updateFeatures({a, b});
    QCOMPARE(m->trainedOn(), a.programs.size() + b.programs.size());
    const auto s = m->predictFeatures("fast", test);
    auto alone = cost::makeCostModel("xgb", 1);
    alone->updateFeatures({a});
    const double shared = accuracy(s), own = accuracy(alone->predictFeatures("fast", test));
    qInfo(
        "xgb pairwise accuracy on %zu held-out programs: %.3f shared with the slow task, %.3f on the fast task's %zu "
        "alone",
        test.size(), shared, own, a.programs.size());
    QVERIFY(shared > own + 0.05);
    // Saved and loaded: the same predictions.
    auto loaded = cost::makeCostModel("xgb", 2);
    loaded->load(m->save());
    QCOMPARE(loaded->predictFeatures("fast", test), s);
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, loaded->load("not a model"));
  }
};

QTEST_APPLESS_MAIN(TestProgramFeatures)
#include "test_program_features.moc"
