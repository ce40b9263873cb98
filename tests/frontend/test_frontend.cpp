// ONNX import (core/frontend/onnx_import.h) and the conformance runner on
// Debian's libonnx-testdata node cases, one or more per supported op.
#include <onnx/onnx_pb.h>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "chain_model.h"
#include "frontend/conformance.h"
#include "frontend/onnx_import.h"
#include "frontend/onnx_import_options.h"
#include "tessel_test.h"

using namespace tessel;

namespace {

const std::string kNode = "/usr/share/libonnx-testdata/data/node";

bool haveTestData() {
  return std::filesystem::exists(kNode + "/test_relu/model.onnx");
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The message of the GraphError `f` throws ("" when it throws none).
template <typename F>
std::string errorOf(F&& f) {
  try {
    f();
  } catch (const graph::GraphError& e) {
    return e.what();
  }
  return "";
}

void addTensorValue(onnx::ValueInfoProto* v, const std::string& name, int elemType, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elemType);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
}

// A one-node model: y = op(x) with x float [2,3], at `opset`.
onnx::ModelProto oneNodeModel(const std::string& op, const std::string& nodeName, int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("one_node");
  addTensorValue(g->add_input(), "x", onnx::TensorProto_DataType_FLOAT, {2, 3});
  addTensorValue(g->add_output(), "y", onnx::TensorProto_DataType_FLOAT, {2, 3});
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(nodeName);
  n->add_input("x");
  n->add_output("y");
  return m;
}

std::string bytesOf(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

const graph::Node& nodeByOp(const graph::Graph& g, const std::string& op) {
  for (const graph::Node& n : g.nodes)
    if (n.op == op) return n;
  throw std::runtime_error("no " + op + " node");
}

}  // namespace

class TestFrontend : public QObject {
  Q_OBJECT

 private slots:
  void missingFileNamesIt() {
    const std::string msg = errorOf([] { frontend::importOnnx("/nonexistent/dir/model.onnx"); });
    QVERIFY2(msg.find("/nonexistent/dir/model.onnx") != std::string::npos, msg.c_str());
  }

  void garbageBytesNameTheModel() {
    for (std::string bytes :
         {std::string("\xff\xff\xff\xff garbage, not a protobuf"), std::string("hello world"), std::string()}) {
      const std::string msg = errorOf([&] { frontend::importOnnxBytes(bytes, "garbage.onnx"); });
      QVERIFY2(msg.find("garbage.onnx") != std::string::npos, msg.c_str());
    }
    // A file of garbage: the message names the file.
    QTemporaryDir dir;
    const std::string path = dir.filePath("junk.onnx").toStdString();
    std::ofstream(path, std::ios::binary) << std::string("\x0a\xff\xff\xff\xff\x0f", 6);
    const std::string msg = errorOf([&] { frontend::importOnnx(path); });
    QVERIFY2(msg.find(path) != std::string::npos, msg.c_str());
  }

  void truncatedModelIsAnError() {
    const std::string bytes = bytesOf(oneNodeModel("Relu", "r"));
    for (size_t cut : {bytes.size() / 2, bytes.size() - 3}) {
      const std::string msg = errorOf([&] { frontend::importOnnxBytes(bytes.substr(0, cut), "cut.onnx"); });
      QVERIFY2(msg.find("cut.onnx") != std::string::npos, msg.c_str());
    }
  }

  // A graph input or output listed twice, or no output at all, is refused
  // with the reason (both were once accepted: "0 nodes, 0 tasks").
  void ambiguousInterfaceIsRefused() {
    onnx::ModelProto twice = oneNodeModel("Relu", "r");
    addTensorValue(twice.mutable_graph()->add_input(), "x", onnx::TensorProto_DataType_FLOAT, {4, 5});
    std::string msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(twice), "dup.onnx"); });
    QVERIFY2(msg.find("dup.onnx: graph input 'x' is listed twice") != std::string::npos, msg.c_str());

    onnx::ModelProto outTwice = oneNodeModel("Relu", "r");
    addTensorValue(outTwice.mutable_graph()->add_output(), "y", onnx::TensorProto_DataType_FLOAT, {2, 3});
    msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(outTwice), "dup.onnx"); });
    QVERIFY2(msg.find("graph output 'y' is listed twice") != std::string::npos, msg.c_str());

    onnx::ModelProto none = oneNodeModel("Relu", "r");
    none.mutable_graph()->clear_output();
    msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(none), "none.onnx"); });
    QVERIFY2(msg.find("none.onnx: the graph has no outputs") != std::string::npos, msg.c_str());
    // The same model with its output imports.
    QCOMPARE(frontend::importOnnxBytes(bytesOf(oneNodeModel("Relu", "r")), "ok.onnx").nodes.size(), size_t(1));
  }

  void unsupportedOpNamesOpAndNode() {
    std::string msg = errorOf([] { frontend::importOnnxBytes(bytesOf(oneNodeModel("Frobnicate", "frob_7")), "m"); });
    QVERIFY2(msg.find("unsupported op 'Frobnicate' in node 'frob_7'") != std::string::npos, msg.c_str());
    onnx::ModelProto m = oneNodeModel("Gelu", "g1");
    m.mutable_graph()->mutable_node(0)->set_domain("com.microsoft");
    msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m"); });
    QVERIFY2(msg.find("unsupported op 'com.microsoft.Gelu' in node 'g1'") != std::string::npos, msg.c_str());
    // Unnamed nodes get a name from their op and position.
    msg = errorOf([] { frontend::importOnnxBytes(bytesOf(oneNodeModel("Frobnicate", "")), "m"); });
    QVERIFY2(msg.find("unsupported op 'Frobnicate' in node 'Frobnicate_0'") != std::string::npos, msg.c_str());
    // The conformance runner's error class.
    bool unsupported = false;
    try {
      frontend::importOnnxBytes(bytesOf(oneNodeModel("Frobnicate", "f")), "m");
    } catch (const frontend::UnsupportedError&) {
      unsupported = true;
    } catch (...) {
    }
    QVERIFY(unsupported);
  }

  // Import is linear in the nodes and its recursion does not depend on the
  // graph: chains of 20,000 and 100,000 nodes import whole (a quadratic pass
  // would take minutes for the second and end at the test's timeout; the
  // times are in docs/reliability.md, from bench_import_scaling).
  void longChainsImport() {
    for (int n : {20000, 100000}) {
      const graph::Graph g = frontend::importOnnxBytes(bytesOf(testing::chainModel(n)), "chain.onnx");
      QCOMPARE(int(g.nodes.size()), n);
      QCOMPARE(g.value("y").shape, (std::vector<int64_t>{2, 3}));
    }
  }

  void opsetOutsideRangeIsNamed() {
    for (int opset : {9, 18}) {
      const std::string msg =
          errorOf([&] { frontend::importOnnxBytes(bytesOf(oneNodeModel("Relu", "r", opset)), "old.onnx"); });
      QVERIFY2(msg.find("opset " + std::to_string(opset)) != std::string::npos, msg.c_str());
      QVERIFY2(msg.find("old.onnx") != std::string::npos, msg.c_str());
    }
    onnx::ModelProto m = oneNodeModel("Relu", "r");
    m.clear_opset_import();
    m.add_opset_import()->set_domain("ai.onnx.ml");
    const std::string msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m"); });
    QVERIFY2(msg.find("default ONNX domain") != std::string::npos, msg.c_str());
    // In range: a graph with its shapes.
    graph::Graph g = frontend::importOnnxBytes(bytesOf(oneNodeModel("Relu", "r", 11)), "ok");
    QCOMPARE(g.nodes.size(), size_t(1));
    QCOMPARE(g.value("y").shape, (std::vector<int64_t>{2, 3}));
  }

  void symbolicDimsAreOneAndUnknownDimsAnError() {
    onnx::ModelProto m = oneNodeModel("Relu", "r");
    auto* dim =
        m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0);
    dim->set_dim_param("batch");
    graph::Graph g = frontend::importOnnxBytes(bytesOf(m), "m");
    QCOMPARE(g.inputs.at(0).shape, (std::vector<int64_t>{1, 3}));
    QCOMPARE(g.value("y").shape, (std::vector<int64_t>{1, 3}));
    QCOMPARE(g.assumptions.size(), size_t(1));  // the user is told
    QVERIFY2(g.assumptions[0].find("'batch' taken as 1") != std::string::npos, g.assumptions[0].c_str());
    // Given shapes size the symbolic dimension; a static one must agree.
    frontend::ImportOptions sized;
    sized.inputShapes = {{4, 3}};
    graph::Graph g4 = frontend::importOnnxBytes(bytesOf(m), "m", sized);
    QCOMPARE(g4.value("y").shape, (std::vector<int64_t>{4, 3}));
    QVERIFY(g4.assumptions.empty());
    sized.inputShapes = {{4, 5}};
    const std::string clash = errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m", sized); });
    QVERIFY2(clash.find("input 'x': dimension 1 is 3 in the model, 5 in the shape given") != std::string::npos,
             clash.c_str());
    sized.inputShapes = {{4, 3}, {1}};
    QVERIFY(errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m", sized); }).find("2 input shapes") !=
            std::string::npos);
    sized.inputShapes = {{4, 3, 1}};
    QVERIFY(errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m", sized); }).find("has rank 2") !=
            std::string::npos);
    dim->Clear();
    const std::string msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m"); });
    QVERIFY2(msg.find("input 'x'") != std::string::npos && msg.find("dimension 0") != std::string::npos, msg.c_str());
    // Non-tensor and unsupported-dtype inputs name the input.
    onnx::ModelProto u8 = oneNodeModel("Relu", "r");
    u8.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto_DataType_UINT8);
    const std::string msg2 = errorOf([&] { frontend::importOnnxBytes(bytesOf(u8), "m"); });
    QVERIFY2(msg2.find("input 'x'") != std::string::npos && msg2.find("UINT8") != std::string::npos, msg2.c_str());
  }

  void initializersAndConstantsConvert() {
    // y = ((x + a) * b) + c + d, a: float_data, b: raw_data, c: double, d: a Constant node;
    // then Reshape by an int64 initializer (int64_data) and Unsqueeze (opset 11: axes attribute).
    onnx::ModelProto m = oneNodeModel("Add", "add_a", 11);
    auto* g = m.mutable_graph();
    g->mutable_node(0)->add_input("a");
    g->mutable_node(0)->set_output(0, "t1");
    auto addInit = [&](const std::string& name, int type, std::vector<int64_t> dims) {
      auto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(type);
      for (int64_t d : dims)
        t->add_dims(d);
      return t;
    };
    auto* a = addInit("a", onnx::TensorProto_DataType_FLOAT, {3});
    for (float v : {1.f, 2.f, 3.f})
      a->add_float_data(v);
    auto* b = addInit("b", onnx::TensorProto_DataType_FLOAT, {2, 1});
    const float braw[2] = {0.5f, -2.f};
    b->set_raw_data(std::string(reinterpret_cast<const char*>(braw), sizeof braw));
    auto* c = addInit("c", onnx::TensorProto_DataType_DOUBLE, {});
    c->add_double_data(0.25);
    auto* shape = addInit("shape", onnx::TensorProto_DataType_INT64, {2});
    shape->add_int64_data(3);
    shape->add_int64_data(-1);
    auto node = [&](const std::string& op, std::vector<std::string> ins, const std::string& out) {
      auto* n = g->add_node();
      n->set_op_type(op);
      for (const auto& i : ins)
        n->add_input(i);
      n->add_output(out);
      return n;
    };
    node("Mul", {"t1", "b"}, "t2");
    node("Add", {"t2", "c"}, "t3");
    auto* k = node("Constant", {}, "d");
    auto* attr = k->add_attribute();
    attr->set_name("value");
    attr->set_type(onnx::AttributeProto::TENSOR);
    attr->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
    attr->mutable_t()->add_float_data(10.f);
    node("Add", {"t3", "d"}, "t4");
    node("Reshape", {"t4", "shape"}, "t5");
    auto* un = node("Unsqueeze", {"t5"}, "y");
    auto* axes = un->add_attribute();
    axes->set_name("axes");
    axes->set_type(onnx::AttributeProto::INTS);
    axes->add_ints(0);
    auto* outShape = g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    outShape->Clear();

    graph::Graph gr = frontend::importOnnxBytes(bytesOf(m), "m");
    QCOMPARE(gr.initializers.at("a").data, (std::vector<float>{1, 2, 3}));
    QCOMPARE(gr.initializers.at("b").data, (std::vector<float>{0.5f, -2.f}));
    QCOMPARE(gr.initializers.at("b").info.shape, (std::vector<int64_t>{2, 1}));
    QCOMPARE(gr.initializers.at("c").data, (std::vector<float>{0.25f}));
    QCOMPARE(gr.initializers.at("c").info.dtype, graph::DType::Float32);
    QVERIFY(gr.initializers.at("c").info.shape.empty());
    QCOMPARE(gr.initializers.at("d").data, (std::vector<float>{10.f}));
    QCOMPARE(gr.initializers.at("shape").ints, (std::vector<int64_t>{3, -1}));
    QCOMPARE(gr.initializers.at("shape").info.dtype, graph::DType::Int64);
    for (const graph::Node& n : gr.nodes)
      QVERIFY(n.op != "Constant");
    const graph::Node& u = nodeByOp(gr, "Unsqueeze");
    QVERIFY(!u.has("axes"));
    QCOMPARE(u.inputs.size(), size_t(2));
    QCOMPARE(gr.initializers.at(u.inputs[1]).ints, (std::vector<int64_t>{0}));
    QCOMPARE(gr.value("y").shape, (std::vector<int64_t>{1, 3, 2}));
    QCOMPARE(gr.inputs.size(), size_t(1));

    // External data is a clear error.
    auto* ext = addInit("e", onnx::TensorProto_DataType_FLOAT, {4});
    ext->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    auto* kv = ext->add_external_data();
    kv->set_key("location");
    kv->set_value("weights.bin");
    const std::string msg = errorOf([&] { frontend::importOnnxBytes(bytesOf(m), "m"); });
    QVERIFY2(msg.find("weights.bin") != std::string::npos && msg.find("'e'") != std::string::npos, msg.c_str());
  }

  void softmaxBeforeOpset13IsCoercedTo2d() {
    onnx::ModelProto m = oneNodeModel("Softmax", "sm", 11);
    auto* g = m.mutable_graph();
    for (auto* v : {g->mutable_input(0), g->mutable_output(0)}) {
      auto* s = v->mutable_type()->mutable_tensor_type()->mutable_shape();
      s->Clear();
      for (int64_t d : {2, 3, 4})
        s->add_dim()->set_dim_value(d);
    }
    graph::Graph gr = frontend::importOnnxBytes(bytesOf(m), "m");  // axis defaults to 1: softmax over 3 x 4
    QCOMPARE(gr.nodes.size(), size_t(3));
    QCOMPARE(gr.nodes[0].op, std::string("Reshape"));
    QCOMPARE(gr.nodes[1].op, std::string("Softmax"));
    QCOMPARE(gr.nodes[1].attrInt("axis", 0), int64_t(-1));
    QCOMPARE(gr.value(gr.nodes[1].inputs[0]).shape, (std::vector<int64_t>{2, 12}));
    QCOMPARE(gr.value("y").shape, (std::vector<int64_t>{2, 3, 4}));
    // axis 2 (the last): no reshapes.
    auto* axis = g->mutable_node(0)->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(2);
    QCOMPARE(frontend::importOnnxBytes(bytesOf(m), "m").nodes.size(), size_t(1));
  }

  void testdataModelsConvert() {
    if (!haveTestData())
      TESSEL_SKIP("onnx-testdata", "libonnx-testdata is not installed (/usr/share/libonnx-testdata)");
    graph::Graph g = frontend::importOnnx(kNode + "/test_conv_with_strides_padding/model.onnx");
    QCOMPARE(g.nodes.size(), size_t(1));
    const graph::Node& conv = g.nodes[0];
    QCOMPARE(conv.op, std::string("Conv"));
    QCOMPARE(conv.attrInts("kernel_shape"), (std::vector<int64_t>{3, 3}));
    QCOMPARE(conv.attrInts("pads"), (std::vector<int64_t>{1, 1, 1, 1}));
    QCOMPARE(conv.attrInts("strides"), (std::vector<int64_t>{2, 2}));
    QCOMPARE(g.inputs.size(), size_t(2));
    QCOMPARE(g.value("x").shape, (std::vector<int64_t>{1, 1, 7, 5}));
    QCOMPARE(g.value("y").shape, (std::vector<int64_t>{1, 1, 4, 3}));

    graph::Graph ln = frontend::importOnnx(kNode + "/test_layer_normalization_3d_axis1_epsilon/model.onnx");
    QCOMPARE(ln.nodes.at(0).attrInt("axis", 0), int64_t(1));
    QVERIFY(std::abs(ln.nodes.at(0).attrFloat("epsilon", 0) - 0.1) < 1e-6);

    graph::Graph gemm = frontend::importOnnx(kNode + "/test_gemm_all_attributes/model.onnx");
    QCOMPARE(gemm.nodes.at(0).attrInt("transA", 0), int64_t(1));
    QVERIFY(std::abs(gemm.nodes.at(0).attrFloat("alpha", 0) - 0.25) < 1e-6);

    // The opset-1 GlobalAveragePool case is outside the users' range ...
    const std::string msg = errorOf([] { frontend::importOnnx(kNode + "/test_globalaveragepool/model.onnx"); });
    QVERIFY2(msg.find("opset 1 ") != std::string::npos, msg.c_str());
    // ... and accepted with the conformance runner's options.
    frontend::ImportOptions wide;
    wide.minOpset = 1;
    graph::Graph gap = frontend::importOnnxBytes(readBytes(kNode + "/test_globalaveragepool/model.onnx"), "gap", wide);
    QCOMPARE(gap.value("y").shape, (std::vector<int64_t>{1, 3, 1, 1}));

    frontend::LoadedTensor t =
        frontend::loadTensorProto(kNode + "/test_conv_with_strides_padding/test_data_set_0/input_0.pb");
    QCOMPARE(t.name, std::string("x"));
    QCOMPARE(t.dtype, graph::DType::Float32);
    QCOMPARE(t.shape, (std::vector<int64_t>{1, 1, 7, 5}));
    QCOMPARE(t.floats.size(), size_t(35));
    QCOMPARE(t.floats[34], 34.0f);
    frontend::LoadedTensor idx = frontend::loadTensorProto(kNode + "/test_gather_0/test_data_set_0/input_1.pb");
    QCOMPARE(idx.dtype, graph::DType::Int64);
    QCOMPARE(idx.ints, (std::vector<int64_t>{0, 1, 3}));
    QVERIFY(!errorOf([] { frontend::loadTensorProto("/nonexistent.pb"); }).empty());
  }

  void conformanceFindsAndRejects() {
    if (!haveTestData())
      TESSEL_SKIP("onnx-testdata", "libonnx-testdata is not installed (/usr/share/libonnx-testdata)");
    std::vector<std::string> cases = frontend::findConformanceCases({kNode}, "test_softmax_");
    QVERIFY(cases.size() >= 7);
    QVERIFY(!errorOf([] { frontend::findConformanceCases({"/nonexistent"}); }).empty());
    // A case that runs too long is a failure, and the runner goes on (the child is killed).
    // (Its kernel compiled, not found in the kernel cache, so that it cannot end in time.)
    frontend::ConformanceOptions hurry;
    hurry.timeoutSeconds = 0.01;
    qputenv("TESSEL_KERNEL_CACHE", "off");
    frontend::CaseResult slow = frontend::runConformanceCase(kNode + "/test_relu", hurry);
    qunsetenv("TESSEL_KERNEL_CACHE");
    QCOMPARE(slow.status, frontend::CaseStatus::Fail);
    QVERIFY2(slow.reason.find("timed out") != std::string::npos, slow.reason.c_str());
    // In process, too.
    frontend::ConformanceOptions here;
    here.isolate = false;
    frontend::CaseResult relu = frontend::runConformanceCase(kNode + "/test_relu", here);
    QVERIFY2(relu.status == frontend::CaseStatus::Pass, relu.reason.c_str());
    // An int64 output known at load time (Shape of a static shape) is compared exactly.
    frontend::CaseResult shape = frontend::runConformanceCase(kNode + "/test_shape");
    QVERIFY2(shape.status == frontend::CaseStatus::Pass, shape.reason.c_str());
    // Unsupported: an op Tessel lacks, a uint8 input, a Range of computed values (no static shape).
    for (const char* name :
         {"test_argmax_default_axis_example", "test_add_uint8", "test_range_float_type_positive_delta"}) {
      frontend::CaseResult r = frontend::runConformanceCase(kNode + "/" + name);
      QVERIFY2(r.status == frontend::CaseStatus::Unsupported, (std::string(name) + ": " + r.reason).c_str());
      QVERIFY(!r.reason.empty());
    }
  }

  void cliConformance() {
#ifndef TESSEL_CLI_PATH
    QSKIP("the tessel CLI is not built");
#else
    if (!haveTestData())
      TESSEL_SKIP("onnx-testdata", "libonnx-testdata is not installed (/usr/share/libonnx-testdata)");
    auto run = [](const QStringList& args, QByteArray* out = nullptr) {
      QProcess p;
      p.start(TESSEL_CLI_PATH, args);
      if (!p.waitForFinished(300000)) p.kill();
      if (out) *out = p.readAllStandardOutput();
      return p.exitCode();
    };
    QCOMPARE(run({"conformance"}), 2);
    QCOMPARE(run({"conformance", "/nonexistent/cases"}), 2);
    QCOMPARE(run({"conformance", "--help"}), 0);
    QByteArray out;
    QCOMPARE(run({"conformance", QString::fromStdString(kNode), "--filter", "test_gemm_default_", "--json"}, &out), 0);
    const QJsonObject j = QJsonDocument::fromJson(out).object();
    QVERIFY2(j["cases"].toArray().size() >= 5, out.constData());
    QCOMPARE(j["fail"].toInt(), 0);
    QCOMPARE(j["supported"].toInt(), j["pass"].toInt() + j["fail"].toInt());
    QCOMPARE(j["pass_rate"].toDouble(), 1.0);
    for (const QJsonValue& c : j["cases"].toArray()) {
      QVERIFY(c.toObject()["name"].toString().startsWith("test_gemm_default_"));
      QVERIFY(c.toObject().contains("status") && c.toObject().contains("reason"));
    }
    // Text: a line per case and the totals.
    QCOMPARE(run({"conformance", QString::fromStdString(kNode + "/test_relu")}, &out), 0);
    QVERIFY2(out.startsWith("pass") && out.contains("test_relu") && out.contains("pass rate 100.0 %"), out.constData());
#endif
  }

  // Every supported op through the importer and the executor, on all the
  // ONNX test suite's cases for it (by name prefix). None may fail: each
  // passes or is unsupported for a reason the runner gives (a dtype, mode or
  // zero-size tensor Tessel does not implement); each op passes at least once.
  void conformancePerOp() {
    if (!haveTestData())
      TESSEL_SKIP("onnx-testdata", "libonnx-testdata is not installed (/usr/share/libonnx-testdata)");
    const std::vector<std::pair<std::string, std::vector<std::string>>> perOp = {
        {"Conv", {"test_conv_", "test_basic_conv_"}},
        {"Gemm", {"test_gemm_"}},
        {"MatMul", {"test_matmul_"}},
        {"Add", {"test_add"}},
        {"Sub", {"test_sub"}},
        {"Mul", {"test_mul"}},
        {"Div", {"test_div"}},
        {"Pow", {"test_pow"}},
        {"Sqrt", {"test_sqrt"}},
        {"Relu", {"test_relu"}},
        {"Clip", {"test_clip"}},
        {"Sigmoid", {"test_sigmoid"}},
        {"Tanh", {"test_tanh"}},
        {"Erf", {"test_erf"}},
        {"Exp", {"test_exp"}},
        {"Neg", {"test_neg"}},
        {"Abs", {"test_abs"}},
        {"Reciprocal", {"test_reciprocal"}},
        {"Max", {"test_max_"}},
        {"Min", {"test_min_"}},
        {"Softmax", {"test_softmax_"}},
        {"LayerNormalization", {"test_layer_normalization_"}},
        {"BatchNormalization", {"test_batchnorm_"}},
        {"MaxPool", {"test_maxpool_"}},
        {"AveragePool", {"test_averagepool_"}},
        {"GlobalAveragePool", {"test_globalaveragepool"}},
        {"Flatten", {"test_flatten"}},
        {"Reshape", {"test_reshape_"}},
        {"Transpose", {"test_transpose_"}},
        {"Concat", {"test_concat_"}},
        {"Slice", {"test_slice"}},
        {"Gather", {"test_gather_"}},
        {"Squeeze", {"test_squeeze"}},
        {"Unsqueeze", {"test_unsqueeze"}},
        {"Split", {"test_split_"}},
        {"Pad", {"test_constant_pad", "test_edge_pad", "test_reflect_pad"}},
        {"Constant", {"test_constant"}},
        {"Identity", {"test_identity"}},
        {"ReduceMean", {"test_reduce_mean_"}},
        {"Dropout", {"test_dropout_", "test_training_dropout"}},
        {"decomposed", {"test_mvn_expanded"}},
        // The ops of exported models (shape arithmetic, activations, masks).
        {"ConstantOfShape", {"test_constantofshape_"}},
        {"Range", {"test_range_"}},
        {"Size", {"test_size"}},
        {"Equal", {"test_equal"}},
        {"Less", {"test_less"}},
        {"Greater", {"test_greater"}},
        {"Not", {"test_not_"}},
        {"And", {"test_and"}},
        {"Or", {"test_or"}},
        {"Where", {"test_where_"}},
        {"Mod", {"test_mod_"}},
        {"Expand", {"test_expand_"}},
        {"Tile", {"test_tile"}},
        {"ReduceSum", {"test_reduce_sum_"}},
        {"ReduceMax", {"test_reduce_max_"}},
        {"ReduceMin", {"test_reduce_min_"}},
        {"HardSigmoid", {"test_hardsigmoid"}},
        {"HardSwish", {"test_hardswish"}},
        {"LeakyRelu", {"test_leakyrelu"}},
        {"Elu", {"test_elu"}},
        {"Softplus", {"test_softplus"}},
        {"Log", {"test_log_example"}},
        {"LogSoftmax", {"test_logsoftmax"}},
        {"ReduceL1", {"test_reduce_l1_"}},
        {"ReduceL2", {"test_reduce_l2_"}},
        {"ReduceSumSquare", {"test_reduce_sum_square_"}},
        {"ReduceLogSum", {"test_reduce_log_sum_"}},
        {"InstanceNormalization", {"test_instancenorm"}},
        {"Xor", {"test_xor"}},
        {"Trilu", {"test_tril", "test_triu"}},
        {"Resize", {"test_resize_"}},
        {"Upsample", {"test_upsample_"}},
    };
    std::vector<std::string> dirs;
    std::map<std::string, std::string> opOf;
    for (const std::string& dir : frontend::findConformanceCases({kNode})) {
      const std::string name = std::filesystem::path(dir).filename().string();
      // The op of the longest matching prefix (test_constantofshape_ is not Constant's).
      size_t longest = 0;
      for (const auto& [op, prefixes] : perOp)
        for (const std::string& p : prefixes)
          if (name.rfind(p, 0) == 0 && p.size() > longest) {
            longest = p.size();
            opOf[name] = op;
          }
      dirs.push_back(dir);  // every case: none may fail
    }
    QVERIFY2(dirs.size() > 900, std::to_string(dirs.size()).c_str());
    frontend::ConformanceOptions options;
    options.parallel = 2;
    options.jobs = 1;
    frontend::ConformanceSummary s = frontend::runConformance(dirs, options);
    std::set<std::string> passedOps;
    std::string failures;
    for (const frontend::CaseResult& r : s.cases) {
      if (r.status == frontend::CaseStatus::Pass) passedOps.insert(opOf[r.name]);
      if (r.status == frontend::CaseStatus::Fail) failures += "\n  " + r.name + ": " + r.reason;
      if (r.status == frontend::CaseStatus::Unsupported) QVERIFY2(!r.reason.empty(), r.name.c_str());
    }
    QVERIFY2(failures.empty(), failures.c_str());
    std::string missing;
    for (const auto& [op, prefixes] : perOp)
      if (!passedOps.count(op)) missing += " " + op;
    QVERIFY2(missing.empty(), ("no passing case for" + missing).c_str());
    QVERIFY2(s.pass >= 400, std::to_string(s.pass).c_str());  // of the suite's 932 cases
  }
};

QTEST_APPLESS_MAIN(TestFrontend)
#include "test_frontend.moc"
