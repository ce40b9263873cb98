// Tests of the oneDNN executor (tessel run --compare onednn): every op it
// runs, alone and fused, against the LibTorch reference executor on the same
// graph and inputs; the zoo models it is measured on, prepared as `tessel
// run` prepares them; what it fuses; and the errors it names.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <random>

#include "frontend/model_loader.h"
#include "graph/graph_builder.h"
#include "reference/libtorch_executor.h"
#include "reference/onednn_executor.h"
#include "target/target.h"
#include "tessel_test.h"

using namespace tessel;
using graph::GraphBuilder;
using runtime::HostTensor;
using Shape = std::vector<int64_t>;

namespace {

HostTensor randomTensor(const Shape& shape, uint32_t seed) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  HostTensor t{shape, std::vector<float>(size_t(n))};
  for (float& x : t.data)
    x = u(rng);
  return t;
}

// Seeded inputs for every graph input.
std::map<std::string, HostTensor> inputsOf(const graph::Graph& g) {
  std::map<std::string, HostTensor> inputs;
  uint32_t seed = 1;
  for (const graph::ValueInfo& v : g.inputs)
    inputs[v.name] = randomTensor(v.shape, seed++);
  return inputs;
}

// oneDNN's outputs against LibTorch's: relative 1e-4 of the largest value
// (float32 sums in another order), named in `why` where they differ.
bool agrees(const graph::Graph& g, QString& why, int repeats = 1) {
  const std::map<std::string, HostTensor> inputs = inputsOf(g);
  const reference::ReferenceRun want = reference::runWithLibTorch(g, inputs, 2, 1);
  const reference::ReferenceRun got = reference::runWithOnednn(g, inputs, 2, repeats);
  for (const auto& [name, w] : want.outputs) {
    auto it = got.outputs.find(name);
    if (it == got.outputs.end()) return why = QString("no output '%1'").arg(name.c_str()), false;
    if (it->second.shape != w.shape) return why = QString("output '%1' has another shape").arg(name.c_str()), false;
    double largest = 0;
    for (float v : w.data)
      largest = std::max(largest, double(std::fabs(v)));
    for (size_t i = 0; i < w.data.size(); ++i)
      if (!(std::fabs(double(it->second.data[i]) - w.data[i]) <= 1e-4 * std::max(1.0, largest)))
        return why = QString("output '%1' element %2: %3, LibTorch %4")
                         .arg(name.c_str())
                         .arg(i)
                         .arg(it->second.data[i], 0, 'g', 8)
                         .arg(w.data[i], 0, 'g', 8),
               false;
  }
  return true;
}

#define EXPECT_AGREES(g)                         \
  do {                                           \
    QString why_;                                \
    QVERIFY2(agrees(g, why_), qPrintable(why_)); \
  } while (false)

#define REQUIRE_BOTH()                                                                  \
  if (!reference::onednnAvailable()) TESSEL_SKIP("onednn", "this build has no oneDNN"); \
  if (!reference::libtorchAvailable()) TESSEL_SKIP("libtorch", "this build has no LibTorch to check with")

int64_t countOf(const std::vector<std::string>& steps, const std::string& name) {
  return std::count(steps.begin(), steps.end(), name);
}

}  // namespace

class TestOnednnExecutor : public QObject {
  Q_OBJECT

 private slots:
  // Conv + Add + Relu in one primitive (sum and eltwise post-ops), grouped
  // and depthwise convolutions, asymmetric pads, dilation, strides.
  void convolutionsAndTheirPostOps() {
    REQUIRE_BOTH();
    GraphBuilder b("conv");
    b.input("x", {1, 8, 13, 12});
    b.weight("w1", {8, 4, 3, 3}, 0.3f);  // 2 groups
    b.weight("b1", {8}, 0.2f);
    b.weight("dw", {8, 1, 3, 3}, 0.4f);  // depthwise
    b.weight("w3", {8, 8, 1, 1}, 0.3f);
    const std::string c1 = b.node("c1", "Conv", {"x", "w1", "b1"},
                                  {{"group", int64_t(2)}, {"pads", Shape{1, 2, 0, 1}}, {"dilations", Shape{1, 2}}});
    const std::string r1 = b.node("r1", "Relu", {c1});
    const std::string c2 = b.node("c2", "Conv", {r1, "dw"}, {{"group", int64_t(8)}, {"pads", Shape{1, 1, 1, 1}}});
    const std::string k2 = b.node("k2", "Clip", {c2}, {{"min", 0.0}, {"max", 6.0}});
    const std::string c3 = b.node("c3", "Conv", {k2, "w3"});
    const std::string sum = b.node("sum", "Add", {c3, r1});  // the residual: computed before c3
    const std::string r3 = b.node("r3", "Relu", {sum});
    const std::string c4 =
        b.node("c4", "Conv", {r3, "w3"}, {{"strides", Shape{2, 2}}, {"auto_pad", std::string("SAME_UPPER")}});
    b.output(c4);
    const graph::Graph g = b.finish();
    EXPECT_AGREES(g);
    const std::vector<std::string> steps = reference::onednnSteps(g);
    for (const char* fused : {"r1", "k2", "sum", "r3"})
      QCOMPARE(countOf(steps, fused), int64_t(0));
    for (const char* conv : {"c1", "c2", "c3", "c4"})
      QCOMPARE(countOf(steps, conv), int64_t(1));
  }

  // The residual is a graph input, read again by the next run: the sum may
  // not be computed in its memory (three timed runs must agree with one).
  void aSumNeverOverwritesAnInput() {
    REQUIRE_BOTH();
    GraphBuilder b("residual");
    b.input("x", {1, 16, 6, 6});
    b.weight("w", {16, 16, 3, 3}, 0.2f);
    const std::string c = b.node("c", "Conv", {"x", "w"}, {{"pads", Shape{1, 1, 1, 1}}});
    b.output(b.node("y", "Add", {c, "x"}));
    const graph::Graph g = b.finish();
    QString why;
    QVERIFY2(agrees(g, why, 3), qPrintable(why));
  }

  void pools_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<int>("ceil");
    QTest::addColumn<int>("includePad");
    QTest::newRow("max") << "MaxPool" << 0 << 0;
    QTest::newRow("max ceil") << "MaxPool" << 1 << 0;
    QTest::newRow("average") << "AveragePool" << 0 << 0;
    QTest::newRow("average counting pads") << "AveragePool" << 0 << 1;
    QTest::newRow("average ceil") << "AveragePool" << 1 << 0;
    QTest::newRow("global") << "GlobalAveragePool" << 0 << 0;
  }

  void pools() {
    REQUIRE_BOTH();
    QFETCH(QString, op);
    QFETCH(int, ceil);
    QFETCH(int, includePad);
    GraphBuilder b("pool");
    b.input("x", {1, 5, 10, 9});
    std::map<std::string, graph::AttrValue> attrs;
    if (op != "GlobalAveragePool") {
      attrs = {{"kernel_shape", Shape{3, 3}},
               {"strides", Shape{2, 2}},
               {"pads", Shape{1, 0, 1, 1}},
               {"ceil_mode", int64_t(ceil)}};
      if (op == "AveragePool") attrs["count_include_pad"] = int64_t(includePad);
    }
    b.output(b.node("p", op.toStdString(), {"x"}, attrs));
    EXPECT_AGREES(b.finish());
  }

  // A dense layer with its bias and activation fused, Gemm's transposes and
  // scales, batched matmuls with broadcast, the scaled softmax of attention.
  void matmuls() {
    REQUIRE_BOTH();
    GraphBuilder b("matmul");
    b.input("x", {2, 7, 16});
    b.input("a", {4, 3});
    b.weight("w", {16, 24}, 0.3f);
    b.weight("bias", {24}, 0.2f);
    b.weight("gw", {5, 4}, 0.5f);
    b.weight("gc", {5}, 0.5f);
    const std::string dense = b.node("dense", "MatMul", {"x", "w"});
    const std::string biased = b.node("biased", "Add", {"bias", dense});
    const std::string act = b.node("act", "Gelu", {biased});
    const std::string kt = b.node("kt", "Transpose", {act}, {{"perm", Shape{0, 2, 1}}});
    const std::string scores = b.node("scores", "MatMul", {act, kt});  // [2, 7, 7]
    const std::string scaled = b.node("scaled", "Div", {scores, b.scalar("four", 4.0f)});
    const std::string probs = b.node("probs", "Softmax", {scaled}, {{"axis", int64_t(-1)}});
    b.output(b.node("ctx", "MatMul", {probs, act}));
    b.output(b.node("gemm", "Gemm", {"a", "gw", "gc"},
                    {{"transA", int64_t(1)}, {"transB", int64_t(1)}, {"alpha", 0.5}, {"beta", 2.0}}));
    const graph::Graph g = b.finish();
    EXPECT_AGREES(g);
    const std::vector<std::string> steps = reference::onednnSteps(g);
    for (const char* fused : {"biased", "act", "scaled"})
      QCOMPARE(countOf(steps, fused), int64_t(0));
  }

  // Layer norm, element-wise functions (HardSigmoid as two), binary ops with
  // broadcast, reductions, and the data movement ops.
  void theOtherOps() {
    REQUIRE_BOTH();
    GraphBuilder b("others");
    b.input("x", {2, 6, 8});
    b.input("y", {8});
    b.weight("gamma", {8}, 0.5f);
    b.weight("beta", {8}, 0.5f);
    b.weight("table", {10, 8}, 1.0f);
    const std::string ln = b.node("ln", "LayerNormalization", {"x", "gamma", "beta"}, {{"epsilon", 1e-5}});
    const std::string hs = b.node("hs", "HardSigmoid", {ln}, {{"alpha", 0.3}, {"beta", 0.4}});
    const std::string sub = b.node("sub", "Sub", {b.scalar("one", 1.0f), hs});
    const std::string mul = b.node("mul", "Mul", {"y", sub});  // the first operand broadcasts
    const std::string dv = b.node("dv", "Div", {mul, b.node("ex", "Exp", {"x"})});
    const std::string mean = b.node("mean", "ReduceMean", {dv}, {{"axes", Shape{1}}, {"keepdims", int64_t(0)}});
    const std::string flat = b.node("flat", "Flatten", {dv}, {{"axis", int64_t(1)}});
    const std::string cat = b.node("cat", "Concat", {flat, flat}, {{"axis", int64_t(1)}});
    const std::string rows = b.node("rows", "Gather", {"table", b.ints("ids", {2}, {7, -1})}, {{"axis", int64_t(0)}});
    b.output(mean);
    b.output(cat);
    b.output(b.node("tr", "Transpose", {dv}, {{"perm", Shape{2, 0, 1}}}));
    b.output(b.node("sum", "ReduceSum", {rows}, {{"keepdims", int64_t(1)}}));
    b.output(b.node("mx", "Max", {rows, b.node("neg", "Neg", {rows})}));
    EXPECT_AGREES(b.finish());
  }

  // The models the figures are given for, as `tessel run` prepares them.
  void zooModels_data() {
    QTest::addColumn<QString>("model");
    for (const char* m : {"tiny_cnn", "resnet18", "mobilenet_v2", "bert_tiny"})
      QTest::newRow(m) << m;
  }

  void zooModels() {
    REQUIRE_BOTH();
    QFETCH(QString, model);
    const frontend::PreparedModel prepared =
        frontend::prepareModel(model.toStdString(), "", "dp", target::Target::host());
    EXPECT_AGREES(prepared.graph);
  }

  void errorsNameTheProblem() {
    if (!reference::onednnAvailable()) {
      QVERIFY_THROWS_EXCEPTION(std::runtime_error, reference::runWithOnednn(graph::Graph{}, {}, 1));
      TESSEL_SKIP("onednn", "this build has no oneDNN");
    }
    GraphBuilder b("errors");
    b.input("x", {2, 3});
    b.output(b.node("e", "Erf", {"x"}));
    const graph::Graph g = b.finish();
    try {
      reference::runWithOnednn(g, {{"x", randomTensor({2, 3}, 1)}}, 1);
      QFAIL("an op oneDNN has no primitive for ran");
    } catch (const graph::GraphError& e) {
      QVERIFY2(std::string(e.what()).find("'Erf' is not supported by the oneDNN executor") != std::string::npos,
               e.what());
      QVERIFY2(std::string(e.what()).rfind("node 'e' (Erf)", 0) == 0, e.what());
    }
    GraphBuilder c("missing");
    c.input("x", {2, 3});
    c.output(c.node("r", "Relu", {"x"}));
    const graph::Graph h = c.finish();
    QVERIFY_THROWS_EXCEPTION(graph::GraphError, reference::runWithOnednn(h, {}, 1));
    QVERIFY_THROWS_EXCEPTION(graph::GraphError, reference::runWithOnednn(h, {{"x", randomTensor({3, 2}, 1)}}, 1));
  }
};

QTEST_APPLESS_MAIN(TestOnednnExecutor)
#include "test_onednn_executor.moc"
