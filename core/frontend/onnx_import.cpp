// ONNX ModelProto -> graph::Graph, through libonnx's generated protobuf
// classes (Debian builds them with ONNX_NAMESPACE=onnx and ONNX_ML=1).
//
// Choices (see also onnx_import_options.h):
// - Opsets: the default domain ("" or "ai.onnx") must be at opset 11..17 for
//   users; the conformance runner widens that to 1..17 with a per-op check
//   (minOpset() below): the first opset whose semantics are opset 17's once the
//   importer has upgraded older forms (below; those of opsets 1-6 are
//   dropped hints: consumed_inputs, is_test=1, `broadcast` without `axis`).
//   Other domains are unsupported.
// - Older forms upgraded to opset 17's: Squeeze/Unsqueeze `axes` and Split
//   `split` attributes (< 13), Clip `min`/`max` (< 11), Pad `pads`/`value`
//   (< 11) and Slice `starts`/`ends`/`axes` (< 10) become int64/float
//   initializer inputs; Softmax < 13 (which flattens to 2-D at `axis`) becomes
//   Reshape -> Softmax(axis=-1) -> Reshape unless `axis` is the last axis.
// - Symbolic dimensions (dim_param, e.g. a dynamic batch) take the sizes the
//   user gives (ImportOptions::inputShapes, the CLI's --input-shapes); else
//   they are taken as 1, noted in Graph::assumptions: Tessel tunes for static
//   shapes, and batch 1 is what inference tuning uses. A dimension with
//   neither a value nor a name, or an input without a shape, needs a given
//   shape (a GraphError naming the input otherwise).
// - Initializers: FLOAT, DOUBLE (converted to float32), INT64, INT32, BOOL;
//   data in raw_data or the typed fields. External data, other dtypes and
//   attribute kinds other than INT, FLOAT, STRING, INTS, FLOATS (and TENSOR
//   of Constant) are unsupported. Constant nodes become initializers.
#include "frontend/onnx_import.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx_import_options.h"
#include "frontend/onnx_tensors.h"
#include "graph/op_registry.h"
#include "support/input_file.h"

namespace tessel::frontend {

namespace {

using graph::DType;
using graph::GraphError;

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

std::string readFile(const std::string& path) {
  try {
    return support::readRegularFile(path, "ONNX file", kMaxProtobufBytes);
  } catch (const support::InputFileError& e) {
    throw GraphError(e.what());
  }
}

// The first opset whose semantics of each op equal opset 17's, after the
// upgrades this file makes. Ops missing here are not supported.
int minOpset(const std::string& op) {
  static const std::map<std::string, int> table = {
      {"Conv", 1},
      {"Gemm", 1},
      {"MatMul", 1},
      {"Add", 1},
      {"Sub", 1},
      {"Mul", 1},
      {"Div", 1},
      {"Pow", 1},
      {"Sqrt", 1},
      {"Relu", 1},
      {"Clip", 6},
      {"Sigmoid", 1},
      {"Tanh", 1},
      {"Erf", 9},
      {"Gelu", 1},  // ONNX's own Gelu is opset 20; exporters' Gelu nodes are accepted as its semantics
      {"Softmax", 1},
      {"LayerNormalization", 17},
      {"BatchNormalization", 1},
      {"MaxPool", 1},
      {"AveragePool", 1},
      {"GlobalAveragePool", 1},
      {"Flatten", 1},
      {"Reshape", 5},
      {"Transpose", 1},
      {"Concat", 4},
      {"Slice", 1},
      {"Gather", 1},
      {"Squeeze", 1},
      {"Unsqueeze", 1},
      {"Split", 2},
      {"Pad", 2},
      {"Constant", 1},
      {"Identity", 1},
      {"ReduceMean", 1},
      {"Shape", 1},
      {"Exp", 1},
      {"Neg", 1},
      {"Abs", 1},
      {"Reciprocal", 1},
      {"Max", 6},
      {"Min", 6},
      {"Cast", 6},
      {"Dropout", 1},
      {"ReduceSum", 1},
      {"ReduceL1", 1},
      {"ReduceL2", 1},
      {"ReduceSumSquare", 1},
      {"ReduceLogSum", 1},
      {"ReduceLogSumExp", 1},
      {"LogSoftmax", 1},
      {"InstanceNormalization", 6},
      {"Xor", 7},
      {"Trilu", 14},
      {"ReduceMax", 1},
      {"ReduceMin", 1},
      {"Log", 1},
      {"Softplus", 1},
      {"Elu", 6},
      {"LeakyRelu", 6},
      {"HardSigmoid", 6},
      {"HardSwish", 14},
      {"Not", 1},
      {"Equal", 7},
      {"Less", 7},
      {"Greater", 7},
      {"LessOrEqual", 12},
      {"GreaterOrEqual", 12},
      {"And", 7},
      {"Or", 7},
      {"Mod", 10},
      {"Where", 9},
      {"Expand", 8},
      {"Tile", 6},
      {"ConstantOfShape", 9},
      {"Range", 11},
      {"ScatterND", 11},
      {"Size", 1},
      {"Resize", 10},
      {"Upsample", 7},  // imported as Resize
  };
  auto it = table.find(op);
  return it == table.end() ? 1 : it->second;
}

}  // namespace

int onnxMinOpset(const std::string& op) {
  return minOpset(op);
}

namespace {

class Importer {
 public:
  Importer(const std::string& what, const ImportOptions& options) : what_(what), options_(options) {}

  graph::Graph run(const onnx::ModelProto& model) {
    readOpset(model);
    const onnx::GraphProto& gp = model.graph();
    g_.name = gp.name().empty() ? what_ : gp.name();
    checkInterface(gp);
    for (const onnx::NodeProto& n : gp.node())
      for (const std::string& o : n.output())
        taken_.insert(o);
    for (const onnx::ValueInfoProto& v : gp.input())
      taken_.insert(v.name());

    for (const onnx::TensorProto& t : gp.initializer()) {
      if (t.name().empty()) throw GraphError(what_ + ": an initializer has no name");
      taken_.insert(t.name());
      addInitializer(makeInitializer(t.name(), convertTensor(t, "initializer '" + t.name() + "'"),
                                     "initializer '" + t.name() + "'"));
    }
    if (gp.sparse_initializer_size()) throw UnsupportedError(what_ + ": sparse initializers are not supported");
    for (const onnx::ValueInfoProto& v : gp.input())
      if (!g_.isInitializer(v.name())) addInput(v);
    if (!options_.inputShapes.empty() && options_.inputShapes.size() != g_.inputs.size())
      throw GraphError(what_ + ": " + std::to_string(options_.inputShapes.size()) +
                       " input shapes were given for the model's " + std::to_string(g_.inputs.size()) + " inputs");
    for (const onnx::NodeProto& n : gp.node())
      addNode(n);
    for (const onnx::ValueInfoProto& v : gp.output())
      addOutput(v);

    if (options_.beforeShapes) options_.beforeShapes(g_);
    if (!options_.inferShapes) {
      checkImplemented();
      return std::move(g_);
    }
    // Shapes first, then the shape arithmetic exporters write is evaluated
    // (folded), so that what is checked is only the tensor work.
    finish([&] {
      graph::inferShapes(g_);
      if (rewriteCoercedSoftmax()) graph::inferShapes(g_);
      g_.fileParameters = g_.parameterCount();
      graph::foldConstants(g_);
      graph::fuseLayerNorm(g_);
    });
    checkImplemented();
    finish([&] {
      graph::inferShapes(g_);
      g_.validate();
    });
    return std::move(g_);
  }

  // ONNX names every value once: a graph input or output listed twice is
  // ambiguous (which shape, which tensor?), and a graph without outputs
  // computes nothing.
  void checkInterface(const onnx::GraphProto& gp) const {
    if (gp.output_size() == 0) throw GraphError(what_ + ": the graph has no outputs, so it computes nothing");
    std::set<std::string> seen;
    for (const onnx::ValueInfoProto& v : gp.input())
      if (!seen.insert(v.name()).second) throw GraphError(what_ + ": graph input '" + v.name() + "' is listed twice");
    seen.clear();
    for (const onnx::ValueInfoProto& v : gp.output())
      if (!seen.insert(v.name()).second) throw GraphError(what_ + ": graph output '" + v.name() + "' is listed twice");
  }

 private:
  void readOpset(const onnx::ModelProto& model) {
    bool found = false;
    for (const onnx::OperatorSetIdProto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") {
        opset_ = int(o.version());
        found = true;
      }
    if (!found) {
      std::string domains;
      for (const onnx::OperatorSetIdProto& o : model.opset_import())
        domains += (domains.empty() ? "'" : ", '") + o.domain() + "'";
      throw UnsupportedError(what_ + ": the model imports no opset of the default ONNX domain, only " + domains +
                             ", which Tessel does not support");
    }
    if (opset_ < options_.minOpset || opset_ > options_.maxOpset)
      throw UnsupportedError(what_ + ": ONNX opset " + std::to_string(opset_) +
                             " is not supported (Tessel imports opsets " + std::to_string(options_.minOpset) + "-" +
                             std::to_string(options_.maxOpset) + "; convert the model with onnx.version_converter)");
  }

  std::string uniqueName(const std::string& base) {
    std::string name = base;
    for (int i = 1; taken_.count(name); ++i)
      name = base + "_" + std::to_string(i);
    taken_.insert(name);
    return name;
  }

  void addInitializer(graph::Initializer init) {
    const std::string name = init.info.name;
    g_.values[name] = init.info;
    g_.initializers[name] = std::move(init);
  }

  std::string intsInitializer(const std::string& base, const std::vector<int64_t>& v) {
    graph::Initializer init;
    init.info.name = uniqueName(base);
    init.info.dtype = DType::Int64;
    init.info.shape = {int64_t(v.size())};
    init.ints = v;
    const std::string name = init.info.name;
    addInitializer(std::move(init));
    return name;
  }

  std::string floatScalarInitializer(const std::string& base, float x) {
    graph::Initializer init;
    init.info.name = uniqueName(base);
    init.info.dtype = DType::Float32;
    init.data = {x};
    const std::string name = init.info.name;
    addInitializer(std::move(init));
    return name;
  }

  std::string describeType(const onnx::TypeProto& t) {
    switch (t.value_case()) {
      case onnx::TypeProto::kSequenceType:
        return "a sequence";
      case onnx::TypeProto::kMapType:
        return "a map";
      case onnx::TypeProto::kOptionalType:
        return "an optional value";
      case onnx::TypeProto::kSparseTensorType:
        return "a sparse tensor";
      default:
        return "not a tensor";
    }
  }

  void addInput(const onnx::ValueInfoProto& v) {
    const std::string who = what_ + ": input '" + v.name() + "'";
    if (!v.type().has_tensor_type())
      throw UnsupportedError(who + " is " + describeType(v.type()) + "; Tessel's values are tensors");
    const onnx::TypeProto_Tensor& tt = v.type().tensor_type();
    graph::ValueInfo info;
    info.name = v.name();
    info.dtype = mapDType(tt.elem_type());
    if (info.dtype == DType::Other)
      throw UnsupportedError(who + " has dtype " + dataTypeName(tt.elem_type()) +
                             "; Tessel's tensors are float32, int64, int32 or bool");
    const size_t index = g_.inputs.size();
    const std::vector<int64_t>* given = index < options_.inputShapes.size() ? &options_.inputShapes[index] : nullptr;
    if (!tt.has_shape() && !given) throw GraphError(who + " has no shape; give it with --input-shapes");
    const int rank = tt.has_shape() ? tt.shape().dim_size() : int(given->size());
    if (given && int(given->size()) != rank)
      throw GraphError(who + " has rank " + std::to_string(rank) + ", the shape given for it " + shapeText(*given) +
                       " has rank " + std::to_string(given->size()));
    std::vector<std::string> symbolic;
    for (int i = 0; i < rank; ++i) {
      const std::string dim = "dimension " + std::to_string(i);
      const onnx::TensorShapeProto_Dimension* d = tt.has_shape() ? &tt.shape().dim(i) : nullptr;
      if (d && d->has_dim_value()) {
        if (d->dim_value() < 0) throw GraphError(who + ": " + dim + " is negative");
        if (given && (*given)[size_t(i)] != d->dim_value())
          throw GraphError(who + ": " + dim + " is " + std::to_string(d->dim_value()) + " in the model, " +
                           std::to_string((*given)[size_t(i)]) + " in the shape given for it");
        info.shape.push_back(d->dim_value());
      } else if (given) {
        info.shape.push_back((*given)[size_t(i)]);
      } else if (d && d->has_dim_param()) {
        info.shape.push_back(1);  // symbolic (e.g. batch): see the top of this file
        symbolic.push_back(dim + " '" + d->dim_param() + "'");
      } else {
        throw GraphError(who + ": " + dim + " is unknown (neither a value nor a name); give it with --input-shapes");
      }
    }
    if (!symbolic.empty()) {
      std::string dims;
      for (const std::string& s : symbolic)
        dims += (dims.empty() ? "" : ", ") + s;
      g_.assumptions.push_back("input '" + v.name() + "': symbolic " + dims + " taken as 1 (--input-shapes sets it)");
    }
    g_.values[info.name] = info;
    g_.inputs.push_back(info);
  }

  void addOutput(const onnx::ValueInfoProto& v) {
    const std::string who = what_ + ": output '" + v.name() + "'";
    if (v.has_type()) {
      if (!v.type().has_tensor_type())
        throw UnsupportedError(who + " is " + describeType(v.type()) + "; Tessel's values are tensors");
      const int et = v.type().tensor_type().elem_type();
      if (et != 0 && mapDType(et) == DType::Other)
        throw UnsupportedError(who + " has dtype " + dataTypeName(et) +
                               "; Tessel's tensors are float32, int64, int32 or bool");
    }
    std::string name = v.name();
    if (g_.isInitializer(name)) {
      // A constant output: give it a node, so that executors need not special-case it.
      graph::Initializer init = g_.initializers.at(name);
      g_.initializers.erase(name);
      g_.values.erase(name);
      init.info.name = uniqueName(name + "_const");
      const std::string source = init.info.name;
      addInitializer(std::move(init));
      graph::Node id;
      id.name = uniqueNodeName(name + "_identity");
      id.op = "Identity";
      id.inputs = {source};
      id.outputs = {name};
      g_.nodes.push_back(std::move(id));
    }
    g_.outputs.push_back(name);
  }

  std::string uniqueNodeName(const std::string& base) {
    std::string name = base;
    for (int i = 1; nodeNames_.count(name); ++i)
      name = base + "_" + std::to_string(i);
    nodeNames_.insert(name);
    return name;
  }

  graph::AttrValue convertAttr(const onnx::AttributeProto& a, const std::string& who) {
    using A = onnx::AttributeProto;
    A::AttributeType type = a.type();
    if (type == A::UNDEFINED) {  // old models: the field that is set says it
      if (a.has_f())
        type = A::FLOAT;
      else if (a.has_i())
        type = A::INT;
      else if (a.has_s())
        type = A::STRING;
      else if (a.has_t())
        type = A::TENSOR;
      else if (a.ints_size())
        type = A::INTS;
      else if (a.floats_size())
        type = A::FLOATS;
      else if (a.has_g())
        type = A::GRAPH;
    }
    switch (type) {
      case A::FLOAT:
        return double(a.f());
      case A::INT:
        return int64_t(a.i());
      case A::STRING:
        return a.s();
      case A::INTS:
        return std::vector<int64_t>(a.ints().begin(), a.ints().end());
      case A::FLOATS:
        return std::vector<double>(a.floats().begin(), a.floats().end());
      default:
        throw UnsupportedError(who + ": attribute '" + a.name() + "' of type " + A::AttributeType_Name(type) +
                               " is not supported");
    }
  }

  // A tensor attribute of one element (ConstantOfShape's `value`) becomes
  // a number, its ONNX data type `<name>_type`; larger ones are unsupported.
  void addScalarTensorAttr(graph::Node& node, const onnx::AttributeProto& a, const std::string& who) {
    const std::string desc = who + " attribute '" + a.name() + "'";
    graph::Initializer v = makeInitializer(a.name(), convertTensor(a.t(), desc), desc);
    if (v.info.numElements() != 1)
      throw UnsupportedError(desc + " holds " + std::to_string(v.info.numElements()) +
                             " values; only single-value tensor attributes are supported");
    if (v.isInt())
      node.attrs[a.name()] = v.ints.at(0);
    else
      node.attrs[a.name()] = double(v.data.at(0));
    node.attrs[a.name() + "_type"] = int64_t(a.t().data_type());
  }

  void addConstant(const onnx::NodeProto& n, const std::string& who) {
    if (n.output_size() != 1 || n.output(0).empty()) throw GraphError(who + ": a Constant needs one output");
    if (n.attribute_size() != 1) throw GraphError(who + ": a Constant needs exactly one value attribute");
    const onnx::AttributeProto& a = n.attribute(0);
    const std::string out = n.output(0);
    const std::string desc = who + " value";
    graph::Initializer init;
    if (a.name() == "value") {
      init = makeInitializer(out, convertTensor(a.t(), desc), desc);
    } else if (a.name() == "value_float" || a.name() == "value_floats") {
      init.info.dtype = DType::Float32;
      if (a.name() == "value_float") {
        init.data = {a.f()};
      } else {
        init.data.assign(a.floats().begin(), a.floats().end());
        init.info.shape = {int64_t(init.data.size())};
      }
    } else if (a.name() == "value_int" || a.name() == "value_ints") {
      init.info.dtype = DType::Int64;
      if (a.name() == "value_int") {
        init.ints = {a.i()};
      } else {
        init.ints.assign(a.ints().begin(), a.ints().end());
        init.info.shape = {int64_t(init.ints.size())};
      }
    } else {
      throw UnsupportedError(who + ": a Constant's '" + a.name() + "' is not supported");
    }
    init.info.name = out;
    addInitializer(std::move(init));
  }

  // Ops imported as another op of the same semantics (after upgrade()).
  static std::string importedAs(const std::string& op) {
    static const std::map<std::string, std::string> renamed = {{"Upsample", "Resize"}};
    auto it = renamed.find(op);
    return it == renamed.end() ? op : it->second;
  }

  void addNode(const onnx::NodeProto& n) {
    graph::Node node;
    node.op = importedAs(n.op_type());
    node.name = uniqueNodeName(n.name().empty() ? n.op_type() + "_" + std::to_string(g_.nodes.size()) : n.name());
    const std::string who = what_ + ": " + node.describe();
    const std::string& domain = n.domain();
    if (!domain.empty() && domain != "ai.onnx")
      throw UnsupportedError(what_ + ": unsupported op '" + domain + "." + n.op_type() + "' in node '" + node.name +
                             "' (only the default ONNX domain is supported)");
    if (!graph::isSupportedOp(node.op))
      throw UnsupportedError(what_ + ": unsupported op '" + node.op + "' in node '" + node.name + "'");
    if (opset_ < minOpset(n.op_type()))
      throw UnsupportedError(who + ": the model's opset " + std::to_string(opset_) + " gives " + n.op_type() +
                             " semantics Tessel does not implement (it does from opset " +
                             std::to_string(minOpset(n.op_type())) + ")");
    if (graph::findOp(node.op)->constant) return addConstant(n, who);

    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    while (!node.outputs.empty() && node.outputs.back().empty())
      node.outputs.pop_back();
    for (const onnx::AttributeProto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::TENSOR) {
        addScalarTensorAttr(node, a, who);
        continue;
      }
      node.attrs[a.name()] = convertAttr(a, who);
    }
    upgrade(node, n.op_type(), who);
    g_.nodes.push_back(std::move(node));
  }

  // Moves attribute `attr` (ints) to input `index` as an int64 initializer.
  void attrToIntsInput(graph::Node& node, const std::string& attr, size_t index) {
    if (!node.has(attr)) return;
    std::vector<int64_t> v = node.attrInts(attr);
    node.attrs.erase(attr);
    if (node.inputs.size() <= index) node.inputs.resize(index + 1);
    node.inputs[index] = intsInitializer(node.name + "_" + attr, v);
  }

  void attrToFloatInput(graph::Node& node, const std::string& attr, size_t index) {
    if (!node.has(attr)) return;
    float v = float(node.attrFloat(attr, 0));
    node.attrs.erase(attr);
    if (node.inputs.size() <= index) node.inputs.resize(index + 1);
    node.inputs[index] = floatScalarInitializer(node.name + "_" + attr, v);
  }

  // Older forms of ops -> opset 17's (see the top of this file), per op as
  // the file names it.
  void upgrade(graph::Node& node, const std::string& sourceOp, const std::string& who) {
    if (opset_ < 6) node.attrs.erase("consumed_inputs");  // a memory hint of opsets 1-5
    const auto& table = upgrades();
    if (auto u = table.find(sourceOp); u != table.end()) u->second(*this, node, who);
  }

  std::string floatsInitializer(const std::string& base, const std::vector<double>& v) {
    graph::Initializer init;
    init.info.name = uniqueName(base);
    init.info.dtype = DType::Float32;
    init.info.shape = {int64_t(v.size())};
    for (double x : v)
      init.data.push_back(float(x));
    const std::string name = init.info.name;
    addInitializer(std::move(init));
    return name;
  }

  using Upgrade = std::function<void(Importer&, graph::Node&, const std::string& who)>;
  static const std::map<std::string, Upgrade>& upgrades() {
    // Legacy broadcasting: B matches a suffix of A's shape (numpy's rule) unless `axis` places it elsewhere.
    static const Upgrade legacyBroadcast = [](Importer& im, graph::Node& n, const std::string& who) {
      if (im.opset_ >= 7) return;
      if (n.attrInt("broadcast", 0) != 0 && n.has("axis"))
        throw UnsupportedError(who + ": opset " + std::to_string(im.opset_) +
                               " broadcasting along an axis is not supported");
      n.attrs.erase("broadcast");
    };
    static const Upgrade isTest = [](Importer& im, graph::Node& n, const std::string& who) {
      if (im.opset_ >= 7) return;
      if (n.attrInt("is_test", 0) == 0) throw UnsupportedError(who + ": training mode (is_test=0) is not supported");
      n.attrs.erase("is_test");
    };
    static const Upgrade axesInput = [](Importer& im, graph::Node& n, const std::string&) {
      if (im.opset_ < 13) im.attrToIntsInput(n, "axes", 1);
    };
    // Softmax and LogSoftmax before opset 13 flatten their input to 2-D at `axis`.
    static const Upgrade coercedTo2D = [](Importer& im, graph::Node& n, const std::string&) {
      if (im.opset_ >= 13) return;
      im.coercedSoftmax_.push_back(n.name);
      if (!n.has("axis")) n.attrs["axis"] = int64_t(1);
    };
    // Upsample (opsets 7-9) and Resize-10 take (X, scales) and map coordinates
    // as Resize's asymmetric mode, nearest rounding down (PyTorch's nearest).
    static const Upgrade scalesOnly = [](Importer& im, graph::Node& n, const std::string&) {
      if (n.has("scales")) {  // Upsample-7: an attribute
        n.inputs.resize(1);
        n.inputs.push_back(im.floatsInitializer(n.name + "_scales", n.attrFloats("scales")));
        n.attrs.erase("scales");
      }
      if (n.inputs.size() == 2) n.inputs.insert(n.inputs.begin() + 1, std::string());  // no roi
      n.attrs["coordinate_transformation_mode"] = std::string("asymmetric");
      n.attrs["nearest_mode"] = std::string("floor");
    };
    static const std::map<std::string, Upgrade> table = {
        {"Upsample", scalesOnly},
        {"Resize",
         [](Importer& im, graph::Node& n, const std::string& who) {
           if (im.opset_ < 11) scalesOnly(im, n, who);
         }},
        {"Add", legacyBroadcast},
        {"Sub", legacyBroadcast},
        {"Mul", legacyBroadcast},
        {"Div", legacyBroadcast},
        {"Pow", legacyBroadcast},
        {"Gemm",
         [](Importer& im, graph::Node& n, const std::string&) {
           if (im.opset_ < 7) n.attrs.erase("broadcast");  // opset 7 always broadcasts C
         }},
        {"BatchNormalization",
         [](Importer& im, graph::Node& n, const std::string& who) {
           isTest(im, n, who);
           if (im.opset_ < 9 && n.attrInt("spatial", 1) != 1)
             throw UnsupportedError(who + ": BatchNormalization with spatial=0 is not supported");
         }},
        {"Dropout",
         [](Importer& im, graph::Node& n, const std::string& who) {
           isTest(im, n, who);
           if (im.opset_ < 12) n.attrs.erase("ratio");  // inference: the identity either way
         }},
        {"Squeeze", axesInput},
        {"Unsqueeze", axesInput},
        {"Split",
         [](Importer& im, graph::Node& n, const std::string&) {
           if (im.opset_ < 13) im.attrToIntsInput(n, "split", 1);
         }},
        {"Clip",
         [](Importer& im, graph::Node& n, const std::string&) {
           if (im.opset_ >= 11) return;
           im.attrToFloatInput(n, "min", 1);
           im.attrToFloatInput(n, "max", 2);
         }},
        {"Pad",
         [](Importer& im, graph::Node& n, const std::string&) {
           if (im.opset_ >= 11) return;
           im.attrToIntsInput(n, "pads", 1);
           im.attrToFloatInput(n, "value", 2);
         }},
        {"Slice",
         [](Importer& im, graph::Node& n, const std::string&) {
           if (im.opset_ >= 10) return;
           im.attrToIntsInput(n, "starts", 1);
           im.attrToIntsInput(n, "ends", 2);
           im.attrToIntsInput(n, "axes", 3);
         }},
        {"Softmax", coercedTo2D},
        {"LogSoftmax", coercedTo2D},
    };
    return table;
  }

  const graph::Initializer* constant(const std::string& v) const {
    auto it = g_.initializers.find(v);
    return it == g_.initializers.end() || !it->second.hasData() ? nullptr : &it->second;
  }

  // Attribute values and forms Tessel's lowering does not implement (each
  // op's checkSupported in the registry): a clear error at import rather
  // than a failure when the graph runs. Also turns integer constants where
  // an op reads floats (Pow's exponent) into float ones (same result).
  void checkImplemented() {
    for (graph::Node& n : g_.nodes) {
      const graph::OpDef& def = graph::opOf(n);
      try {
        if (def.checkSupported) def.checkSupported(g_, n);
      } catch (const UnsupportedError& e) {
        throw UnsupportedError(what_ + ": " + e.what());
      }
      for (size_t i : def.floatConstantInputs) {
        if (n.inputs.size() <= i || n.inputs[i].empty()) continue;
        const graph::Initializer* e = constant(n.inputs[i]);
        if (!e || !e->isInt()) continue;
        graph::Initializer f;
        f.info = e->info;
        f.info.dtype = DType::Float32;
        f.info.name = uniqueName(n.inputs[i] + "_float");
        for (int64_t x : e->ints)
          f.data.push_back(float(x));
        n.inputs[i] = f.info.name;
        addInitializer(std::move(f));
      }
    }
  }

  // Softmax before opset 13 flattens its input to 2-D at `axis`: with the
  // shapes known, make that explicit where `axis` is not the last axis.
  bool rewriteCoercedSoftmax() {
    bool changed = false;
    for (const std::string& name : coercedSoftmax_) {
      auto it = std::find_if(g_.nodes.begin(), g_.nodes.end(), [&](const graph::Node& n) { return n.name == name; });
      if (it == g_.nodes.end() || it->inputs.empty() || it->outputs.empty()) continue;
      const std::vector<int64_t> shape = g_.value(it->inputs.at(0)).shape;
      const int64_t rank = int64_t(shape.size());
      int64_t axis = it->attrInt("axis", 1);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis > rank)
        throw GraphError(what_ + ": " + it->describe() + ": axis out of range for shape " + shapeText(shape));
      if (axis >= rank - 1) {
        it->attrs["axis"] = int64_t(-1);
        continue;
      }
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < rank; ++d)
        (d < axis ? outer : inner) *= shape[size_t(d)];
      graph::Node before, soft = *it, after;
      const std::string x = it->inputs.at(0), y = it->outputs.at(0);
      const std::string x2 = uniqueName(x + "_2d"), y2 = uniqueName(y + "_2d");
      before.name = uniqueNodeName(name + "_to_2d");
      before.op = "Reshape";
      before.inputs = {x, intsInitializer(name + "_shape_2d", {outer, inner})};
      before.outputs = {x2};
      soft.inputs = {x2};
      soft.outputs = {y2};
      soft.attrs["axis"] = int64_t(-1);
      after.name = uniqueNodeName(name + "_from_2d");
      after.op = "Reshape";
      after.inputs = {y2, intsInitializer(name + "_shape", shape)};
      after.outputs = {y};
      size_t at = size_t(it - g_.nodes.begin());
      g_.nodes[at] = soft;
      g_.nodes.insert(g_.nodes.begin() + std::ptrdiff_t(at) + 1, after);
      g_.nodes.insert(g_.nodes.begin() + std::ptrdiff_t(at), before);
      changed = true;
    }
    coercedSoftmax_.clear();
    return changed;
  }

  // Runs a step on the whole graph, naming the model in its errors.
  void finish(const std::function<void()>& step) {
    try {
      step();
    } catch (const UnsupportedError&) {
      throw;
    } catch (const GraphError& e) {
      throw GraphError(what_ + ": " + e.what());
    }
  }

  std::string what_;
  ImportOptions options_;
  graph::Graph g_;
  int opset_ = 0;
  std::set<std::string> taken_;      // value names
  std::set<std::string> nodeNames_;  // node names
  std::vector<std::string> coercedSoftmax_;
};

}  // namespace

graph::Graph importOnnxBytes(const std::string& bytes, const std::string& what, const ImportOptions& options) {
  onnx::ModelProto model;
  if (bytes.empty()) throw GraphError("'" + what + "' is empty, not an ONNX model");
  if (!model.ParseFromString(bytes))
    throw GraphError("'" + what + "' is not a valid ONNX model (the protobuf does not parse: truncated or not ONNX)");
  if (!model.has_graph() || model.opset_import_size() == 0)
    throw GraphError("'" + what + "' is not an ONNX model (it has no graph or no opset_import)");
  return Importer(what, options).run(model);
}

graph::Graph importOnnxBytes(const std::string& bytes, const std::string& what) {
  return importOnnxBytes(bytes, what, ImportOptions{});
}

graph::Graph importOnnx(const std::string& path, const std::vector<std::vector<int64_t>>& inputShapes) {
  ImportOptions options;
  options.inputShapes = inputShapes;
  return importOnnxBytes(readFile(path), path, options);
}

}  // namespace tessel::frontend
