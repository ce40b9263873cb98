// Tests of core/graph: shape inference per op, constant and BatchNorm
// folding, and the zoo's parameter counts and FLOPs against published figures.
#include <QtTest>
#include <cmath>
#include <limits>

#include "graph/graph.h"
#include "graph/graph_builder.h"
#include "graph/op_registry.h"
#include "graph/zoo.h"
#include "tessel_test.h"

using namespace tessel::graph;
using Ints = std::vector<int64_t>;
using Attrs = std::map<std::string, AttrValue>;

namespace {

// A graph of one node `op` over Float32 inputs of the given shapes ("x0",
// "x1", ...), plus Int64 initializers; returns the output shapes.
struct OneNode {
  GraphBuilder b{"t"};
  std::vector<std::string> inputs;
  std::string name(char prefix) const {
    std::string s(1, prefix);  // (not "x" + to_string(): GCC 12 warns -Wrestrict on it)
    s += std::to_string(inputs.size());
    return s;
  }
  OneNode& in(Ints shape, DType t = DType::Float32) {
    inputs.push_back(b.input(name('x'), std::move(shape), t));
    return *this;
  }
  OneNode& ints(Ints values) {
    inputs.push_back(b.ints(name('c'), std::move(values)));
    return *this;
  }
  OneNode& none() {
    inputs.push_back("");
    return *this;
  }
  Graph run(const std::string& op, Attrs attrs = {}, size_t outputs = 1) {
    std::vector<std::string> outs = b.nodeN("n", op, inputs, outputs, std::move(attrs));
    for (const std::string& o : outs)
      b.output(o);
    return b.finish();
  }
  Ints shape(const std::string& op, Attrs attrs = {}) { return run(op, std::move(attrs)).value("n:0").shape; }
};

// The GraphError message of `f`, or "" when it does not throw.
template <typename F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

// Naive NCHW convolution (square pads, stride 1, group 1) on materialised data.
std::vector<float> naiveConv(const std::vector<float>& x, const Ints& xs, const std::vector<float>& w, const Ints& ws,
                             const std::vector<float>* bias, int64_t pad) {
  int64_t C = xs[1], H = xs[2], W = xs[3], M = ws[0], R = ws[2], S = ws[3];
  int64_t OH = H + 2 * pad - R + 1, OW = W + 2 * pad - S + 1;
  std::vector<float> y(size_t(M * OH * OW));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = bias ? (*bias)[size_t(m)] : 0.0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t r = 0; r < R; ++r)
            for (int64_t s = 0; s < S; ++s) {
              int64_t ih = oh - pad + r, iw = ow - pad + s;
              if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;
              acc += double(x[size_t((c * H + ih) * W + iw)]) * double(w[size_t(((m * C + c) * R + r) * S + s)]);
            }
        y[size_t((m * OH + oh) * OW + ow)] = float(acc);
      }
  return y;
}

int countOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += node.op == op;
  return n;
}

}  // namespace

class TestGraph : public QObject {
  Q_OBJECT

 private slots:
  void broadcasting() {
    QCOMPARE(OneNode().in({2, 1, 3}).in({4, 1}).shape("Add"), (Ints{2, 4, 3}));
    QCOMPARE(OneNode().in({}).in({5}).shape("Mul"), (Ints{5}));
    QCOMPARE(OneNode().in({3, 1}).in({1, 4}).in({2, 1, 1}).shape("Max"), (Ints{2, 3, 4}));
    QCOMPARE(OneNode().in({0, 1}).in({1, 4}).shape("Sub"), (Ints{0, 4}));
    std::string e = errorOf([] { OneNode().in({2, 3}).in({4}).shape("Add"); });
    QVERIFY2(e.find("node 'n' (Add)") != std::string::npos && e.find("[2, 3] and [4]") != std::string::npos, e.c_str());
  }

  void matmulAndGemm() {
    QCOMPARE(OneNode().in({2, 3, 4}).in({4, 5}).shape("MatMul"), (Ints{2, 3, 5}));
    QCOMPARE(OneNode().in({2, 1, 3, 4}).in({5, 4, 6}).shape("MatMul"), (Ints{2, 5, 3, 6}));
    QCOMPARE(OneNode().in({4}).in({4, 5}).shape("MatMul"), (Ints{5}));
    QCOMPARE(OneNode().in({3, 4}).in({4}).shape("MatMul"), (Ints{3}));
    QCOMPARE(OneNode().in({4}).in({4}).shape("MatMul"), (Ints{}));
    QVERIFY(errorOf([] { OneNode().in({3, 4}).in({5, 6}).shape("MatMul"); }).find("inner") != std::string::npos);
    QCOMPARE(OneNode().in({4, 3}).in({5, 4}).in({5}).shape("Gemm", {{"transA", int64_t(1)}, {"transB", int64_t(1)}}),
             (Ints{3, 5}));
    QVERIFY(!errorOf([] { OneNode().in({4, 3}).in({4, 5}).shape("Gemm"); }).empty());
  }

  void conv() {
    Attrs a{{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}};
    QCOMPARE(OneNode().in({1, 3, 32, 32}).in({8, 3, 3, 3}).in({8}).shape("Conv", a), (Ints{1, 8, 16, 16}));
    QCOMPARE(OneNode().in({1, 3, 32, 32}).in({8, 3, 3, 3}).shape("Conv", {{"dilations", Ints{2, 2}}}),
             (Ints{1, 8, 28, 28}));
    QCOMPARE(OneNode().in({1, 8, 10, 10}).in({8, 1, 3, 3}).shape("Conv", {{"group", int64_t(8)}}), (Ints{1, 8, 8, 8}));
    QCOMPARE(OneNode()
                 .in({1, 3, 15, 15})
                 .in({4, 3, 3, 3})
                 .shape("Conv", {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}}),
             (Ints{1, 4, 8, 8}));
    QCOMPARE(OneNode()
                 .in({1, 3, 15, 15})
                 .in({4, 3, 3, 3})
                 .shape("Conv", {{"auto_pad", std::string("VALID")}, {"strides", Ints{2, 2}}}),
             (Ints{1, 4, 7, 7}));
    QCOMPARE(OneNode().in({1, 2, 9}).in({4, 2, 3}).shape("Conv", {{"pads", Ints{2, 0}}}), (Ints{1, 4, 9}));
    std::string e = errorOf([] {
      GraphBuilder b("t");
      b.output(b.node("conv1", "Conv", {b.input("x", {1, 3, 8, 8}), b.weight("w", {2, 4, 3, 3}, 0.1f)}));
      b.finish();
    });
    QCOMPARE(QString::fromStdString(e), QString("node 'conv1' (Conv): input has 3 channels, weight expects 4"));
    QVERIFY(!errorOf([] { OneNode().in({1, 3, 2, 2}).in({4, 3, 3, 3}).shape("Conv"); }).empty());
  }

  void pooling() {
    Attrs k2{{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
    QCOMPARE(OneNode().in({1, 1, 5, 5}).shape("MaxPool", k2), (Ints{1, 1, 2, 2}));
    k2["ceil_mode"] = int64_t(1);
    QCOMPARE(OneNode().in({1, 1, 5, 5}).shape("MaxPool", k2), (Ints{1, 1, 3, 3}));
    // ceil_mode drops a last window that would start in the right padding (PyTorch's rule).
    k2["pads"] = Ints{1, 1, 1, 1};
    QCOMPARE(OneNode().in({1, 1, 5, 5}).shape("AveragePool", k2), (Ints{1, 1, 3, 3}));
    Attrs k3{{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}};
    QCOMPARE(OneNode().in({1, 64, 112, 112}).shape("MaxPool", k3), (Ints{1, 64, 56, 56}));
    QCOMPARE(OneNode().in({2, 7, 5, 3}).shape("GlobalAveragePool"), (Ints{2, 7, 1, 1}));
    Graph g = OneNode().in({1, 1, 4, 4}).run("MaxPool", {{"kernel_shape", Ints{2, 2}}}, 2);
    QCOMPARE(g.value("n:1").dtype, DType::Int64);
  }

  void normalisationAndSoftmax() {
    QCOMPARE(OneNode().in({2, 5, 7}).shape("Softmax", {{"axis", int64_t(-2)}}), (Ints{2, 5, 7}));
    QVERIFY(errorOf([] {
              OneNode().in({2, 5}).shape("Softmax", {{"axis", int64_t(2)}});
            }).find("axis 2") != std::string::npos);
    Graph ln = OneNode().in({2, 5, 8}).in({8}).in({8}).run("LayerNormalization", {{"axis", int64_t(-1)}}, 3);
    QCOMPARE(ln.value("n:0").shape, (Ints{2, 5, 8}));
    QCOMPARE(ln.value("n:1").shape, (Ints{2, 5, 1}));
    QVERIFY(!errorOf([] { OneNode().in({2, 5, 8}).in({5}).shape("LayerNormalization"); }).empty());
    QCOMPARE(OneNode().in({1, 4, 3, 3}).in({4}).in({4}).in({4}).in({4}).shape("BatchNormalization"),
             (Ints{1, 4, 3, 3}));
    std::string e = errorOf([] {
      OneNode().in({1, 4, 3, 3}).in({4}).in({4}).in({3}).in({4}).shape("BatchNormalization");
    });
    QVERIFY2(e.find("mean has shape [3], the input has 4 channels") != std::string::npos, e.c_str());
    QCOMPARE(OneNode().in({1, 4, 3, 3}).in({}).in({}).shape("Clip"), (Ints{1, 4, 3, 3}));
  }

  void reshapeFamily() {
    QCOMPARE(OneNode().in({2, 3, 4}).shape("Flatten", {{"axis", int64_t(0)}}), (Ints{1, 24}));
    QCOMPARE(OneNode().in({2, 3, 4}).shape("Flatten", {{"axis", int64_t(-1)}}), (Ints{6, 4}));
    QCOMPARE(OneNode().in({2, 3, 4}).shape("Flatten"), (Ints{2, 12}));
    QCOMPARE(OneNode().in({2, 3, 4}).ints({0, -1}).shape("Reshape"), (Ints{2, 12}));
    QCOMPARE(OneNode().in({2, 3, 4}).ints({-1, 0, 2}).shape("Reshape"), (Ints{4, 3, 2}));
    QCOMPARE(OneNode().in({0, 4}).ints({0, 7}).shape("Reshape", {{"allowzero", int64_t(1)}}), (Ints{0, 7}));
    QVERIFY(errorOf([] {
              OneNode().in({2, 3, 4}).ints({-1, -1}).shape("Reshape");
            }).find("more than one -1") != std::string::npos);
    QVERIFY(errorOf([] {
              OneNode().in({2, 3, 4}).ints({5, -1}).shape("Reshape");
            }).find("cannot reshape") != std::string::npos);
    QVERIFY(errorOf([] {
              OneNode().in({2, 3}).in({2}, DType::Int64).shape("Reshape");
            }).find("constant") != std::string::npos);
    QCOMPARE(OneNode().in({2, 3, 4}).shape("Transpose"), (Ints{4, 3, 2}));
    QCOMPARE(OneNode().in({2, 3, 4}).shape("Transpose", {{"perm", Ints{1, 2, 0}}}), (Ints{3, 4, 2}));
    QVERIFY(!errorOf([] { OneNode().in({2, 3, 4}).shape("Transpose", {{"perm", Ints{1, 1, 0}}}); }).empty());
    QCOMPARE(OneNode().in({2, 3}).in({2, 5}).shape("Concat", {{"axis", int64_t(-1)}}), (Ints{2, 8}));
    QVERIFY(!errorOf([] { OneNode().in({2, 3}).in({3, 5}).shape("Concat", {{"axis", int64_t(1)}}); }).empty());
    QCOMPARE(OneNode().in({3, 4}).shape("Unsqueeze", {{"axes", Ints{0, -1}}}), (Ints{1, 3, 4, 1}));
    QCOMPARE(OneNode().in({3, 4}).ints({1}).shape("Unsqueeze"), (Ints{3, 1, 4}));
    QCOMPARE(OneNode().in({1, 3, 1, 4}).shape("Squeeze"), (Ints{3, 4}));
    QCOMPARE(OneNode().in({1, 3, 1, 4}).ints({-2}).shape("Squeeze"), (Ints{1, 3, 4}));
    QVERIFY(errorOf([] {
              OneNode().in({1, 3}).shape("Squeeze", {{"axes", Ints{1}}});
            }).find("cannot squeeze") != std::string::npos);
    QCOMPARE(OneNode().in({1, 3, 4, 4}).ints({0, 0, 1, 2, 0, 0, 1, 2}).shape("Pad"), (Ints{1, 3, 6, 8}));
    QCOMPARE(OneNode().in({2, 3}).shape("Identity"), (Ints{2, 3}));
  }

  void slice() {
    const int64_t big = std::numeric_limits<int64_t>::max(), small = std::numeric_limits<int64_t>::min();
    QCOMPARE(OneNode().in({10, 20}).ints({-3, 2}).ints({big, 100}).ints({0, 1}).shape("Slice"), (Ints{3, 18}));
    QCOMPARE(OneNode().in({10, 20}).ints({-1}).ints({small}).ints({0}).ints({-1}).shape("Slice"), (Ints{10, 20}));
    QCOMPARE(OneNode().in({10, 20}).ints({5}).ints({2}).ints({-1}).ints({-2}).shape("Slice"), (Ints{10, 2}));
    QCOMPARE(OneNode().in({10, 20}).ints({-100}).ints({-50}).ints({1}).shape("Slice"), (Ints{10, 0}));
    QCOMPARE(OneNode().in({10, 20}).ints({0}).ints({7}).none().ints({3}).shape("Slice"), (Ints{3, 20}));
    QCOMPARE(OneNode().in({10, 20}).shape("Slice", {{"starts", Ints{1}}, {"ends", Ints{-1}}, {"axes", Ints{1}}}),
             (Ints{10, 18}));
    QVERIFY(!errorOf([] { OneNode().in({10}).ints({0}).ints({5}).ints({0}).ints({0}).shape("Slice"); }).empty());
  }

  void gatherSplitReduce() {
    QCOMPARE(OneNode().in({5, 4, 3}).ints({0, 1, 3, 2}).shape("Gather", {{"axis", int64_t(1)}}), (Ints{5, 4, 3}));
    QCOMPARE(OneNode().in({5, 4, 3}).in({2, 2}, DType::Int64).shape("Gather", {{"axis", int64_t(1)}}),
             (Ints{5, 2, 2, 3}));
    {
      GraphBuilder b("t");
      b.output(b.node("n", "Gather", {b.input("x", {5, 4, 3}), b.ints("i", {}, {2})}, {{"axis", int64_t(-1)}}));
      QCOMPARE(b.finish().value("n").shape, (Ints{5, 4}));
    }
    QVERIFY(errorOf([] {
              OneNode().in({5, 4}).ints({4}).shape("Gather", {{"axis", int64_t(1)}});
            }).find("out of range") != std::string::npos);
    Graph s = OneNode().in({6, 4}).run("Split", {}, 3);
    QCOMPARE(s.value("n:2").shape, (Ints{2, 4}));
    s = OneNode().in({6, 4}).ints({1, 3}).run("Split", {{"axis", int64_t(-1)}}, 2);
    QCOMPARE(s.value("n:1").shape, (Ints{6, 3}));
    s = OneNode().in({10}).run("Split", {{"num_outputs", int64_t(4)}}, 4);
    QCOMPARE(s.value("n:0").shape, (Ints{3}));
    QCOMPARE(s.value("n:3").shape, (Ints{1}));
    QVERIFY(!errorOf([] { OneNode().in({7}).run("Split", {}, 2); }).empty());
    QCOMPARE(OneNode().in({2, 3, 4}).shape("ReduceMean", {{"axes", Ints{-1}}, {"keepdims", int64_t(0)}}), (Ints{2, 3}));
    QCOMPARE(OneNode().in({2, 3, 4}).ints({0, 2}).shape("ReduceMean"), (Ints{1, 3, 1}));
    QCOMPARE(OneNode().in({2, 3, 4}).shape("ReduceMean"), (Ints{1, 1, 1}));
  }

  void constantsShapeCast() {
    Graph g = OneNode().in({2, 3, 4}).run("Shape");
    QCOMPARE(g.value("n:0").shape, (Ints{3}));
    QCOMPARE(g.value("n:0").dtype, DType::Int64);
    QCOMPARE(OneNode().in({2, 3, 4}).shape("Shape", {{"start", int64_t(-2)}}), (Ints{2}));
    g = OneNode().in({2, 3}).run("Cast", {{"to", int64_t(7)}});
    QCOMPARE(g.value("n:0").dtype, DType::Int64);
    g = OneNode().in({2, 3}).run("Dropout", {}, 2);
    QCOMPARE(g.value("n:1").dtype, DType::Bool);
    g = OneNode().run("Constant", {{"value_ints", Ints{1, 2, 3}}});
    QCOMPARE(g.value("n:0").shape, (Ints{3}));
    QCOMPARE(g.value("n:0").dtype, DType::Int64);
    g = OneNode().run("Constant", {{"value_float", 2.5}});
    QCOMPARE(g.value("n:0").shape, (Ints{}));
    QCOMPARE(g.value("n:0").dtype, DType::Float32);
    g = OneNode().run("Constant", {{"value_floats", std::vector<double>{1, 2}}});
    QCOMPARE(g.value("n:0").shape, (Ints{2}));
    QVERIFY(!errorOf([] { OneNode().run("Constant"); }).empty());
  }

  // One registry entry per op, complete: every op has a shape rule, a
  // lowering to tensor expressions and a FLOP count, views cost nothing, and the patterns fusion reads agree
  // with the shape rules (Softmax keeps its shape and is a reduction).
  void opRegistryIsComplete() {
    QVERIFY(ops().size() >= 40);
    QCOMPARE(supportedOps().size(), ops().size());
    for (const OpDef& d : ops()) {
      QVERIFY2(d.infer, d.name.c_str());
      QVERIFY2(d.lower, d.name.c_str());
      QVERIFY2(d.flops, d.name.c_str());
      QCOMPARE(findOp(d.name), &d);
      QVERIFY(isSupportedOp(d.name));
    }
    QVERIFY(!findOp("NonMaxSuppression"));
    // Load-time evaluation: shape arithmetic and data movement, not the heavy ops.
    for (const char* op : {"Shape", "Gather", "Concat", "Add", "Reshape", "Constant", "Cast"})
      QVERIFY2(findOp(op)->eval, op);
    QVERIFY(!findOp("Conv")->eval && findOp("Shape")->evalFromShapes);
    QCOMPARE(findOp("Softmax")->pattern, OpPattern::Reduction);
    QCOMPARE(OneNode().in({2, 5}).shape("Softmax"), (Ints{2, 5}));
    QCOMPARE(findOp("Conv")->pattern, OpPattern::OutEWiseFusable);
    QVERIFY(findOp("Reshape")->view && !findOp("Transpose")->view);
    QVERIFY(findOp("Conv")->image && findOp("BatchNormalization")->image && !findOp("MatMul")->image);
    // Graph FLOPs are the heavy ops' multiply-adds (2 per MAC), from the registry.
    Graph g = OneNode().in({4, 8}).in({8, 3}).run("MatMul");
    QCOMPARE(g.flops(), 2.0 * 4 * 3 * 8);
    QCOMPARE(taskNameOf(g, g.nodes[0]), std::string("matmul"));
    QCOMPARE(findOp("Reshape")->flops(g, g.nodes[0]), 0.0);
  }

  void unsupportedOpAndBadGraphs() {
    std::string e = errorOf([] { OneNode().in({2}).shape("NonMaxSuppression"); });
    QVERIFY2(e.find("node 'n' (NonMaxSuppression)") != std::string::npos && e.find("unsupported") != std::string::npos,
             e.c_str());
    e = errorOf([] {
      Graph g;
      g.nodes.push_back(Node{"r", "Relu", {"missing"}, {"y"}, {}});
      inferShapes(g);
    });
    QVERIFY2(e.find("node 'r' (Relu)") != std::string::npos && e.find("missing") != std::string::npos, e.c_str());
  }

  // Reshape's target computed from Shape -> Gather -> Unsqueeze -> Concat, as
  // exported by PyTorch's x.view(x.size(0), -1).
  Graph shapeChain() {
    GraphBuilder b("chain");
    std::string x = b.input("x", {2, 3, 4});
    std::string s = b.node("shape", "Shape", {x});
    std::string d0 = b.node("dim0", "Gather", {s, b.ints("zero", {}, {0})}, {{"axis", int64_t(0)}});
    std::string u = b.node("unsq", "Unsqueeze", {d0, b.ints("axes0", {0})});
    std::string minus1 = b.node("minus1", "Constant", {}, {{"value_ints", Ints{-1}}});
    std::string c = b.node("cat", "Concat", {u, minus1}, {{"axis", int64_t(0)}});
    b.output(b.node("reshape", "Reshape", {x, c}));
    b.node("unused", "Relu", {x});  // dead: nobody reads it
    return b.finish();
  }

  void shapeChainInference() { QCOMPARE(shapeChain().value("reshape").shape, (Ints{2, 12})); }

  void foldConstantsChain() {
    Graph g = shapeChain();
    foldConstants(g);
    QCOMPARE(int(g.nodes.size()), 1);
    QCOMPARE(QString::fromStdString(g.nodes[0].op), QString("Reshape"));
    const std::string& target = g.nodes[0].inputs[1];
    QVERIFY(g.isInitializer(target));
    QCOMPARE(g.initializers.at(target).ints, (Ints{2, -1}));
    QCOMPARE(g.value("reshape").shape, (Ints{2, 12}));
    QVERIFY(!g.isInitializer("zero") && !g.isInitializer("axes0"));  // only the folded nodes read them
    g.validate();

    // Float element-wise on constants with data folds too; lazy weights do not.
    GraphBuilder b("f");
    std::string sum = b.node("sum", "Add", {b.floats("a", {2}, {1, 2}), b.floats("c", {}, {10})});
    std::string lazy = b.node("lazy", "Mul", {b.weight("w", {2}, 0.1f), sum});
    b.output(b.node("out", "Add", {b.input("x", {2}), lazy}));
    Graph f = b.finish();
    foldConstants(f);
    QCOMPARE(int(f.nodes.size()), 2);
    QCOMPARE(f.initializers.at("sum").data, (std::vector<float>{11, 12}));
  }

  void foldBatchNormExact_data() {
    QTest::addColumn<bool>("withBias");
    QTest::newRow("conv with bias") << true;
    QTest::newRow("conv without bias") << false;
  }

  void foldBatchNormExact() {
    QFETCH(bool, withBias);
    GraphBuilder b("bn");
    std::string x = b.input("x", {1, 3, 6, 5});
    std::vector<std::string> convIn = {x, b.weight("w", {4, 3, 3, 3}, 0.5f)};
    if (withBias) convIn.push_back(b.weight("bias", {4}, 0.5f));
    std::string c = b.node("conv", "Conv", convIn, {{"pads", Ints{1, 1, 1, 1}}});
    std::string y = b.node("bn", "BatchNormalization",
                           {c, b.weight("gamma", {4}, 2.0f), b.weight("beta", {4}, 1.0f), b.weight("mean", {4}, 0.5f),
                            b.floats("var", {4}, {0.5f, 1.0f, 2.0f, 0.01f})},
                           {{"epsilon", 1e-3}});
    b.output(b.node("relu", "Relu", {y}));
    Graph g = b.finish();
    for (auto& [name, init] : g.initializers)
      init.materialise();
    Initializer input;
    input.info = g.value("x");
    input.seed = 7;
    input.scale = 1.0f;
    input.materialise();

    const Ints ws{4, 3, 3, 3};
    auto in = [&](const std::string& n) { return g.initializers.at(n).data; };
    std::vector<float> ref =
        naiveConv(input.data, input.info.shape, in("w"), ws, withBias ? &g.initializers.at("bias").data : nullptr, 1);
    size_t plane = ref.size() / 4;
    for (size_t m = 0; m < 4; ++m)
      for (size_t i = 0; i < plane; ++i) {
        double v = ref[m * plane + i];
        v = (v - in("mean")[m]) / std::sqrt(double(in("var")[m]) + 1e-3) * in("gamma")[m] + in("beta")[m];
        ref[m * plane + i] = float(v);
      }

    foldBatchNorm(g);
    QCOMPARE(countOp(g, "BatchNormalization"), 0);
    QCOMPARE(int(g.nodes.size()), 2);
    const Node& conv = g.nodes[0];
    QCOMPARE(conv.outputs[0], std::string("bn"));
    QCOMPARE(g.nodes[1].inputs[0], std::string("bn"));
    QCOMPARE(int(conv.inputs.size()), 3);
    QVERIFY(!g.isInitializer("gamma") && !g.isInitializer("var"));
    g.validate();
    std::vector<float> got = naiveConv(input.data, input.info.shape, g.initializers.at(conv.inputs[1]).data, ws,
                                       &g.initializers.at(conv.inputs[2]).data, 1);
    QCOMPARE(got.size(), ref.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::fabs(double(got[i]) - ref[i]) / std::max(1.0, std::fabs(double(ref[i]))));
    QVERIFY2(worst < 1e-5, qPrintable(QString("relative error %1").arg(worst)));
  }

  // LayerNorm as exporters below opset 17 write it becomes one node; a
  // pattern whose parts are read elsewhere stays as it is.
  void fuseLayerNormPattern() {
    for (int variant = 0; variant < 3; ++variant) {
      const bool affine = variant != 1, leaky = variant == 2;
      GraphBuilder b("ln");
      const std::string x = b.input("x", {2, 5, 8});
      const std::string axes = b.ints("axes", {-1});
      const std::string mean = b.node("mean", "ReduceMean", {x, axes});
      const std::string d = b.node("d", "Sub", {x, mean});
      const std::string var = b.node("var", "ReduceMean", {b.node("sq", "Pow", {d, b.scalar("two", 2.0f)}), axes});
      const std::string root = b.node("root", "Sqrt", {b.node("ve", "Add", {var, b.scalar("eps", 1e-6f)})});
      std::string y = b.node("norm", "Div", {d, root});
      if (affine)
        y = b.node("bias", "Add",
                   {b.node("scale", "Mul", {y, b.weight("gamma", {8}, 1.0f)}), b.weight("beta", {8}, 1.0f)});
      b.output(y);
      if (leaky) b.output(d);
      Graph g = b.finish();
      fuseLayerNorm(g);
      g.validate();
      if (leaky) {
        QCOMPARE(countOp(g, "LayerNormalization"), 0);
        continue;
      }
      QCOMPARE(int(g.nodes.size()), 1);
      const Node& ln = g.nodes[0];
      QCOMPARE(ln.op, std::string("LayerNormalization"));
      QCOMPARE(ln.outputs[0], y);
      QCOMPARE(ln.inputs[0], x);
      QCOMPARE(ln.attrInt("axis", 0), int64_t(-1));
      QVERIFY(std::fabs(ln.attrFloat("epsilon", 0) - 1e-6) < 1e-12);
      if (affine) {
        QCOMPARE(ln.inputs, (std::vector<std::string>{x, "gamma", "beta"}));
      } else {
        QCOMPARE(ln.inputs.size(), size_t(2));
        QCOMPARE(g.initializers.at(ln.inputs[1]).data, std::vector<float>(8, 1.0f));
      }
      QCOMPARE(g.value(y).shape, (Ints{2, 5, 8}));
    }
  }

  // Gemm(transB=1) over constant [N, K] weights becomes Gemm(transB=0) over
  // [K, N] with the same products; a weight another node reads is copied.
  void pretransposeGemmWeightsExact() {
    GraphBuilder b("fc");
    std::string x = b.input("x", {2, 5});
    std::string w = b.weight("w", {3, 5}, 0.5f), bias = b.weight("bias", {3}, 0.5f);
    std::string y = b.node("fc", "Gemm", {x, w, bias}, {{"transB", int64_t(1)}, {"alpha", 0.5}});
    std::string z = b.node("fc2", "Gemm", {x, w}, {{"transB", int64_t(1)}});
    b.output(y);
    b.output(z);
    Graph g = b.finish();
    for (auto& [name, init] : g.initializers)
      init.materialise();
    const std::vector<float> w0 = g.initializers.at("w").data;

    pretransposeGemmWeights(g);
    g.validate();
    for (const Node& n : g.nodes)
      QCOMPARE(n.attrInt("transB", -1), int64_t(0));
    // The first Gemm gets a copy (the second still read "w"); the second, then
    // its only reader, transposes "w" in place.
    QCOMPARE(g.nodes[0].inputs[1], std::string("w_kn"));
    QCOMPARE(g.nodes[1].inputs[1], std::string("w"));
    for (const Node& n : g.nodes) {
      const Initializer& kn = g.initializers.at(n.inputs[1]);
      QCOMPARE(kn.info.shape, (Ints{5, 3}));
      for (int64_t k = 0; k < 5; ++k)
        for (int64_t j = 0; j < 3; ++j)
          QCOMPARE(kn.data[size_t(k * 3 + j)], w0[size_t(j * 5 + k)]);
    }
    QCOMPARE(g.value("fc").shape, (Ints{2, 3}));

    // A weight read by one Gemm only is transposed in place, nothing copied.
    GraphBuilder b2("one");
    std::string x2 = b2.input("x", {1, 4});
    b2.output(b2.node("fc", "Gemm", {x2, b2.weight("w", {6, 4}, 0.5f)}, {{"transB", int64_t(1)}}));
    Graph one = b2.finish();
    const size_t before = one.initializers.size();
    pretransposeGemmWeights(one);
    QCOMPARE(one.initializers.size(), before);
    QCOMPARE(one.initializers.at("w").info.shape, (Ints{4, 6}));
    QCOMPARE(one.value("fc").shape, (Ints{1, 6}));
  }

  void zooPublishedFigures_data() {
    QTest::addColumn<QString>("name");
    for (const ZooEntry& e : zooModels())
      QTest::newRow(e.name.c_str()) << QString::fromStdString(e.name);
  }

  // Parameter counts match exactly (every figure in the table is an exact
  // count, see zoo.cpp for sources); FLOPs (2 x multiply-adds) within 3 % of
  // the published figure, which is rounded (torchvision: 1.81, 4.09, 0.30,
  // 17.56 GMACs).
  void zooPublishedFigures() {
    QFETCH(QString, name);
    const ZooEntry* entry = nullptr;
    for (const ZooEntry& e : zooModels())
      if (e.name == name.toStdString()) entry = &e;
    QVERIFY(entry && isZooModel(entry->name));
    Graph g = makeZooModel(entry->name);
    g.validate();
    QCOMPARE(g.parameterCount(), entry->publishedParams);
    double gflops = g.flops() / 1e9;
    QVERIFY2(std::fabs(gflops - entry->publishedGflops) <= 0.03 * entry->publishedGflops,
             qPrintable(QString("%1 GFLOP vs published %2").arg(gflops).arg(entry->publishedGflops)));
    for (const auto& [n, init] : g.initializers)
      if (init.info.dtype == DType::Float32 && init.info.numElements() > 4096) QVERIFY(init.data.empty());
    for (const std::string& o : g.outputs)
      for (int64_t d : g.value(o).shape)
        QVERIFY(d > 0);
  }

  // The passes on whole zoo models: nothing to fold in the lazily weighted
  // graphs; every BN of the CNNs (depthwise convs included) merges.
  void zooPasses() {
    for (const char* name : {"bert_tiny", "vit_b16"}) {
      Graph g = makeZooModel(name);
      size_t nodes = g.nodes.size();
      foldConstants(g);
      QCOMPARE(g.nodes.size(), nodes);
      QCOMPARE(g.parameterCount(), makeZooModel(name).parameterCount());
    }
    for (const char* name : {"resnet50", "mobilenet_v2"}) {
      Graph g = makeZooModel(name);
      double flops = g.flops();
      foldBatchNorm(g);
      QCOMPARE(countOp(g, "BatchNormalization"), 0);
      QCOMPARE(g.flops(), flops);
      QCOMPARE(g.value(g.outputs[0]).shape, (Ints{1, 1000}));
      g.validate();
    }
  }

  void zooResnet18() {
    Graph g = makeZooModel("resnet18");
    QCOMPARE(g.parameterCount(), int64_t(11689512));
    QVERIFY(std::fabs(g.flops() / 1e9 - 3.64) < 0.03 * 3.64);  // 2 x 1.82 G multiply-adds
    QCOMPARE(g.value(g.outputs[0]).shape, (Ints{1, 1000}));
    QCOMPARE(countOp(g, "Conv"), 20);
    QCOMPARE(countOp(g, "BatchNormalization"), 20);
    double flops = g.flops();
    foldBatchNorm(g);
    QCOMPARE(countOp(g, "BatchNormalization"), 0);
    QCOMPARE(g.flops(), flops);
    // BN's 4,800 scales and 4,800 shifts become 4,800 conv biases.
    QCOMPARE(g.parameterCount(), int64_t(11689512 - 4800));
    QCOMPARE(g.value(g.outputs[0]).shape, (Ints{1, 1000}));
    g.validate();
  }

  // Multi-head attention: Softmax feeding a batched MatMul (the fusion rules rely on it).
  void zooAttention_data() {
    QTest::addColumn<QString>("name");
    for (const char* n : {"bert_tiny", "vit_b16", "detr_encoder_e3", "vit_base_encoder"})
      QTest::newRow(n) << QString(n);
  }

  void zooAttention() {
    QFETCH(QString, name);
    Graph g = makeZooModel(name.toStdString());
    int found = 0;
    for (const Node& n : g.nodes) {
      if (n.op != "Softmax") continue;
      for (size_t c : g.consumers(n.outputs[0]))
        if (g.nodes[c].op == "MatMul" && g.value(g.nodes[c].inputs[0]).shape.size() >= 3 &&
            g.value(g.nodes[c].inputs[1]).shape.size() >= 3)
          ++found;
    }
    QVERIFY(found > 0);
    QCOMPARE(found, countOp(g, "Softmax"));
  }

  void zooMisc() {
    Graph bert = makeZooModel("bert_tiny");
    QCOMPARE(bert.inputs.at(0).dtype, DType::Int64);
    QCOMPARE(bert.value(bert.outputs[0]).shape, (Ints{1, 128, 128}));
    QCOMPARE(bert.value(bert.outputs[1]).shape, (Ints{1, 128}));
    Graph detr = makeZooModel("detr_encoder_e6");
    QCOMPARE(detr.value(detr.outputs[0]).shape, (Ints{1050, 1, 256}));
    std::string e = errorOf([] { makeZooModel("resnet1000"); });
    QVERIFY2(e.find("resnet1000") != std::string::npos && e.find("mobilenet_v2") != std::string::npos &&
                 e.find("vit_huge_encoder") != std::string::npos,
             e.c_str());
    QVERIFY(!isZooModel("resnet1000"));
    // Weights materialise deterministically and finite.
    Initializer w = bert.initializers.at("encoder.layer.0.attention.query.weight");
    w.materialise();
    Initializer w2 = makeZooModel("bert_tiny").initializers.at("encoder.layer.0.attention.query.weight");
    w2.materialise();
    QCOMPARE(w.data, w2.data);
    QVERIFY(std::isfinite(w.data[0]) && std::fabs(w.data[0]) <= w.scale);
  }
};

QTEST_APPLESS_MAIN(TestGraph)
#include "test_graph.moc"
