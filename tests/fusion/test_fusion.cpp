// Fusion by rules and by AutoGTCO's DP on a residual block and an attention
// block, the DP never worse on its estimate, and the tasks of a zoo model.
#include <QtTest>
#include <algorithm>
#include <set>

#include "fusion/fusion_plan.h"
#include "fusion/op_pattern.h"
#include "fusion/task_extraction.h"
#include "graph/zoo.h"
#include "tessel_test.h"

using namespace tessel;
using graph::Graph;

namespace {

void value(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  g.values[name] = graph::ValueInfo{name, std::move(shape), graph::DType::Float32};
}

void weight(Graph& g, const std::string& name, std::vector<int64_t> shape) {
  graph::Initializer init;
  init.info = graph::ValueInfo{name, shape, graph::DType::Float32};
  init.seed = std::hash<std::string>()(name);
  g.initializers[name] = init;
  value(g, name, shape);
}

void node(Graph& g, const std::string& op, std::vector<std::string> in, const std::string& out,
          std::vector<int64_t> shape, std::map<std::string, graph::AttrValue> attrs = {}) {
  graph::Node n;
  n.name = out + "_node";
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  g.nodes.push_back(n);
  value(g, out, std::move(shape));
}

// x -> conv -> relu -> conv -> add(x) -> relu
Graph residualBlock() {
  Graph g;
  g.name = "residual";
  std::vector<int64_t> s = {1, 16, 14, 14};
  g.inputs.push_back({"x", s, graph::DType::Float32});
  value(g, "x", s);
  weight(g, "w1", {16, 16, 3, 3});
  weight(g, "b1", {16});
  weight(g, "w2", {16, 16, 3, 3});
  weight(g, "b2", {16});
  std::map<std::string, graph::AttrValue> conv = {{"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                                  {"kernel_shape", std::vector<int64_t>{3, 3}}};
  node(g, "Conv", {"x", "w1", "b1"}, "c1", s, conv);
  node(g, "Relu", {"c1"}, "r1", s);
  node(g, "Conv", {"r1", "w2", "b2"}, "c2", s, conv);
  node(g, "Add", {"c2", "x"}, "a", s);
  node(g, "Relu", {"a"}, "y", s);
  g.outputs = {"y"};
  return g;
}

// Multi-head attention's core: softmax(q k^T / sqrt(d)) v, heads merged.
Graph attentionBlock() {
  Graph g;
  g.name = "attention";
  const int64_t heads = 4, seq = 32, d = 16;
  for (const char* in : {"q", "k", "v"}) {
    g.inputs.push_back({in, {1, heads, seq, d}, graph::DType::Float32});
    value(g, in, {1, heads, seq, d});
  }
  weight(g, "scale", {});
  node(g, "Transpose", {"k"}, "kt", {1, heads, d, seq}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
  node(g, "MatMul", {"q", "kt"}, "scores", {1, heads, seq, seq});
  node(g, "Div", {"scores", "scale"}, "scaled", {1, heads, seq, seq});
  node(g, "Softmax", {"scaled"}, "probs", {1, heads, seq, seq}, {{"axis", int64_t(-1)}});
  node(g, "MatMul", {"probs", "v"}, "ctx", {1, heads, seq, d});
  node(g, "Transpose", {"ctx"}, "ctx_t", {1, seq, heads, d}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  graph::Initializer shape;
  shape.info = graph::ValueInfo{"merged_shape", {3}, graph::DType::Int64};
  shape.ints = {1, seq, heads * d};
  g.initializers["merged_shape"] = shape;
  g.values["merged_shape"] = shape.info;
  node(g, "Reshape", {"ctx_t", "merged_shape"}, "out", {1, seq, heads * d});
  g.outputs = {"out"};
  return g;
}

std::vector<std::string> opsOf(const Graph& g, const std::vector<size_t>& group) {
  std::vector<std::string> ops;
  for (size_t n : group)
    ops.push_back(g.nodes[n].op);
  return ops;
}

// Every node in exactly one group, and groups in an order that runs.
void checkPlan(const Graph& g, const fusion::FusionPlan& plan) {
  std::set<size_t> seen;
  std::set<std::string> ready;
  for (const auto& v : g.inputs)
    ready.insert(v.name);
  for (const auto& [k, v] : g.initializers)
    ready.insert(k);
  for (const auto& group : plan.groups) {
    std::set<std::string> inside;
    for (size_t n : group) {
      QVERIFY2(seen.insert(n).second, "a node in two groups");
      for (const std::string& o : g.nodes[n].outputs)
        inside.insert(o);
    }
    for (size_t n : group)
      for (const std::string& in : g.nodes[n].inputs)
        QVERIFY2(in.empty() || ready.count(in) || inside.count(in), qPrintable(QString::fromStdString(in)));
    ready.insert(inside.begin(), inside.end());
  }
  QCOMPARE(seen.size(), g.nodes.size());
}

}  // namespace

class TestFusion : public QObject {
  Q_OBJECT

 private slots:
  void patterns() {
    Graph g = attentionBlock();
    QCOMPARE(fusion::patternOf(g, g.nodes[0]), fusion::OpPattern::Injective);        // Transpose
    QCOMPARE(fusion::patternOf(g, g.nodes[1]), fusion::OpPattern::OutEWiseFusable);  // MatMul
    QCOMPARE(fusion::patternOf(g, g.nodes[2]), fusion::OpPattern::Broadcast);        // Div by a scalar
    QCOMPARE(fusion::patternOf(g, g.nodes[3]), fusion::OpPattern::Reduction);        // Softmax
    Graph r = residualBlock();
    QCOMPARE(fusion::patternOf(r, r.nodes[1]), fusion::OpPattern::ElementWise);  // Relu
    QCOMPARE(fusion::patternOf(r, r.nodes[3]), fusion::OpPattern::ElementWise);  // Add of equal shapes
  }

  void residualBlockUnderBothFusers() {
    Graph g = residualBlock();
    fusion::FusionPlan rules = fusion::ruleFusion(g);
    checkPlan(g, rules);
    QCOMPARE(rules.groups.size(), size_t(2));
    QCOMPARE(opsOf(g, rules.groups[0]), (std::vector<std::string>{"Conv", "Relu"}));
    QCOMPARE(opsOf(g, rules.groups[1]), (std::vector<std::string>{"Conv", "Add", "Relu"}));
    fusion::FusionPlan dp = fusion::dpFusion(g);
    checkPlan(g, dp);
    QVERIFY(dp.estimatedSeconds <= rules.estimatedSeconds);
    QCOMPARE(dp.groups.size(), size_t(2));  // conv+relu, conv+add+relu: nothing better to find
    fusion::FusionPlan none = fusion::noFusion(g);
    checkPlan(g, none);
    QCOMPARE(none.groups.size(), size_t(5));
    QVERIFY(rules.estimatedSeconds < none.estimatedSeconds);
  }

  void attentionSoftmaxFusesIntoTheBatchMatmulUnderDp() {
    Graph g = attentionBlock();
    fusion::FusionPlan rules = fusion::ruleFusion(g);
    checkPlan(g, rules);
    // The rules keep softmax (a reduction) apart from the matmul after it.
    for (const auto& group : rules.groups) {
      auto ops = opsOf(g, group);
      QVERIFY(!(std::count(ops.begin(), ops.end(), "Softmax") && std::count(ops.begin(), ops.end(), "MatMul")));
    }
    fusion::FusionPlan dp = fusion::dpFusion(g);
    checkPlan(g, dp);
    QVERIFY(dp.estimatedSeconds < rules.estimatedSeconds);
    bool fused = false;
    for (const auto& group : dp.groups) {
      auto ops = opsOf(g, group);
      bool softmax = std::count(ops.begin(), ops.end(), "Softmax") > 0;
      if (softmax) {
        fused = ops.back() == "MatMul";
        QVERIFY(fusion::isLegalDpGroup(g, group));
      }
    }
    QVERIFY2(fused, "softmax is not in the group of the batch matmul that reads it");
  }

  void dpRulesOutIllegalGroups() {
    Graph g = attentionBlock();
    QVERIFY(!fusion::isLegalDpGroup(g, {1, 2, 3, 4}));  // two matmuls
    QVERIFY(fusion::isLegalDpGroup(g, {3, 4}));         // softmax into the matmul that reads it
    QVERIFY(fusion::isLegalDpGroup(g, {1, 2}));         // matmul + scaling epilogue
    QVERIFY(!fusion::isLegalDpGroup(g, {0, 2}));        // not connected
    Graph r = residualBlock();
    QVERIFY(!fusion::isLegalDpGroup(r, {1, 2}));  // relu before a conv: no conv prologues
    QVERIFY(fusion::isLegalDpGroup(r, {2, 3, 4}));
  }

  void dpNeverWorseThanRulesOnZooModels() {
    for (const char* name : {"resnet18", "mobilenet_v2", "bert_tiny"}) {
      Graph g = graph::makeZooModel(name);
      graph::foldConstants(g);
      graph::foldBatchNorm(g);
      fusion::FusionPlan rules = fusion::ruleFusion(g), dp = fusion::dpFusion(g);
      checkPlan(g, rules);
      checkPlan(g, dp);
      qInfo("%s: rules %zu groups %.3f ms, dp %zu groups %.3f ms", name, rules.groups.size(),
            rules.estimatedSeconds * 1e3, dp.groups.size(), dp.estimatedSeconds * 1e3);
      QVERIFY(dp.estimatedSeconds <= rules.estimatedSeconds * (1 + 1e-12));
    }
  }

  void resnet18Tasks() {
    Graph g = graph::makeZooModel("resnet18");
    graph::foldConstants(g);
    graph::foldBatchNorm(g);
    fusion::FusionPlan plan = fusion::ruleFusion(g);
    std::vector<fusion::GraphTask> tasks = fusion::extractTasks(g, plan);
    qInfo("resnet18: %zu partitions, %zu tasks", plan.groups.size(), tasks.size());
    QVERIFY(tasks.size() >= 15 && tasks.size() <= 35);
    int weights = 0;
    std::set<std::string> keys;
    double flops = 0;
    for (const auto& t : tasks) {
      weights += t.weight;
      keys.insert(t.key);
      flops += t.flops * t.weight;
    }
    QCOMPARE(keys.size(), tasks.size());
    QVERIFY(weights > int(tasks.size()));  // repeated blocks share tasks
    // The tasks cover the model's arithmetic (plus epilogues and pooling).
    QVERIFY(flops >= g.flops() && flops < 1.05 * g.flops());
    bool convAddRelu = false;
    for (const auto& t : tasks)
      convAddRelu |= t.ops == std::vector<std::string>{"Conv", "Add", "Relu"};
    QVERIFY(convAddRelu);
  }
};

QTEST_APPLESS_MAIN(TestFusion)
#include "test_fusion.moc"
