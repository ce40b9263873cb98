// The TorchScript importer's machinery, shared by torchscript_import.cpp
// (loading, freezing, walking forward's graph, evaluating constants) and
// torchscript_converters.cpp (one converter per kind of aten op). Internal
// to core/frontend/; compiled into tessel_reference with LibTorch's headers.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/script.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "frontend/attention_nodes.h"
#include "graph/graph.h"
#include "graph/shape_utils.h"

namespace tessel::frontend::torchscript {

using graph::AttrValue;
using graph::GraphError;
using Shape = std::vector<int64_t>;
using torch::jit::Value;

// What a TorchScript value is in the Tessel graph.
struct Slot {
  enum class Kind { Tensor, Const, List, Tuple };
  Kind kind = Kind::Const;
  std::string name;         // Tensor: the graph value
  c10::IValue value;        // Const: ints, floats, lists, None, constant tensors
  std::vector<Slot> items;  // List (of tensors) / Tuple
};

inline Slot tensorSlot(std::string name) {
  Slot s;
  s.kind = Slot::Kind::Tensor;
  s.name = std::move(name);
  return s;
}

inline Slot constSlot(c10::IValue v) {
  Slot s;
  s.value = std::move(v);
  return s;
}

inline std::string firstLine(const std::string& s) {
  const size_t start = s.find_first_not_of(" \n");
  if (start == std::string::npos) return s;
  return s.substr(start, s.find('\n', start) - start);
}

// "<file>:4:11: y = torch.cumsum(x, 1)": the original source when the
// archive has its debug information, else the serialised code.
inline std::string position(const torch::jit::Node* n) {
  torch::jit::SourceRange range = n->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated()) range = *original;
  const std::shared_ptr<torch::jit::Source>& source = range.source();
  if (!source) return "<unknown position>";
  const size_t line = source->lineno_for_offset(range.start());
  const size_t column = range.start() - source->offset_for_line(line);
  std::string where = source->filename().value_or("<source>") + ":" +
                      std::to_string(source->lineno_to_source_lineno(line) + (source->filename() ? 0 : 1)) + ":" +
                      std::to_string(column + 1);
  std::string text = source->get_line(line).str();
  text.erase(0, std::min(text.find_first_not_of(" \t"), text.size()));
  text = text.substr(0, text.find('\n'));
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text.empty() ? where : where + ": " + text;
}

class Importer {
 public:
  Importer(std::string path, std::vector<Shape> shapes) : path_(std::move(path)), shapes_(std::move(shapes)) {}

  graph::Graph run();

 private:
  std::string path_;
  std::vector<Shape> shapes_;
  graph::Graph g_;
  std::map<const Value*, Slot> slots_;
  std::map<const void*, std::string> constNames_;  // constant tensor -> initializer
  std::set<std::string> names_;                    // every value and node name used
  const torch::jit::Node* current_ = nullptr;
  int counter_ = 0;

  torch::jit::Module load();

  std::string kind() const { return current_ ? current_->kind().toQualString() : std::string("?"); }

  [[noreturn]] void fail(const std::string& what) const {
    throw GraphError(path_ + ": TorchScript op '" + kind() + "' at " + position(current_) + ": " + what);
  }
  [[noreturn]] void unsupported() const {
    throw GraphError(path_ + ": unsupported TorchScript op '" + kind() + "' at " + position(current_));
  }

  std::string unique(std::string base) {
    for (char& c : base)
      if (c == ' ') c = '_';
    if (base.empty()) base = "v";
    std::string name = base;
    for (int i = 1; names_.count(name) || g_.initializers.count(name); ++i)
      name = base + "_" + std::to_string(i);
    names_.insert(name);
    return name;
  }

  // ---- inputs and outputs --------------------------------------------------

  void addInputs(const torch::jit::Graph& jit);

  void addOutput(const Slot& s);

  // ---- values ----------------------------------------------------------------

  const Slot& slot(const Value* v) const {
    auto it = slots_.find(v);
    if (it == slots_.end()) throw GraphError(path_ + ": value '" + v->debugName() + "' is not defined");
    return it->second;
  }
  bool isConst(const Value* v) const { return slot(v).kind == Slot::Kind::Const; }
  bool isNone(const Value* v) const { return isConst(v) && slot(v).value.isNone(); }
  const c10::IValue& constant(const Value* v, const char* what) const {
    const Slot& s = slot(v);
    if (s.kind != Slot::Kind::Const) fail(std::string(what) + " must be a constant");
    return s.value;
  }
  int64_t intArg(const Value* v, const char* what) const {
    const c10::IValue& iv = constant(v, what);
    if (iv.isInt()) return iv.toInt();
    if (iv.isBool()) return iv.toBool() ? 1 : 0;
    fail(std::string(what) + " must be an integer");
  }
  double floatArg(const Value* v, const char* what) const {
    const c10::IValue& iv = constant(v, what);
    if (iv.isDouble()) return iv.toDouble();
    if (iv.isInt()) return double(iv.toInt());
    if (iv.isBool()) return iv.toBool() ? 1.0 : 0.0;
    if (iv.isTensor() && iv.toTensor().numel() == 1) return iv.toTensor().item<double>();
    fail(std::string(what) + " must be a number");
  }
  bool boolArg(const Value* v, const char* what) const { return intArg(v, what) != 0; }
  // A list of ints, or one int repeated `n` times (stride=2 for [2, 2]).
  Shape intsArg(const Value* v, const char* what, size_t n = 0) const {
    const c10::IValue& iv = constant(v, what);
    Shape out;
    if (iv.isIntList())
      out = iv.toIntVector();
    else if (iv.isInt())
      out.assign(std::max<size_t>(n, 1), iv.toInt());
    else
      fail(std::string(what) + " must be a list of integers");
    if (n && out.size() == 1 && n > 1) out.assign(n, out[0]);
    return out;
  }

  const graph::ValueInfo& info(const std::string& name) {
    if (!g_.values.count(name)) graph::inferShapes(g_);
    return g_.value(name);
  }
  const Shape& shapeOf(const std::string& name) { return info(name).shape; }
  int64_t rankOf(const std::string& name) { return int64_t(shapeOf(name).size()); }
  int64_t axis(int64_t a, int64_t rank) const {
    if (a < -rank || a >= rank)
      fail("dimension " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    return a < 0 ? a + rank : a;
  }

  // A constant tensor as an initializer (each tensor once).
  std::string initializer(const at::Tensor& tensor, const std::string& hint) {
    auto key = static_cast<const void*>(tensor.unsafeGetTensorImpl());
    if (auto it = constNames_.find(key); it != constNames_.end()) return it->second;
    const std::string name = unique(hint);
    graph::Initializer& init = g_.initializers[name];
    init.info.name = name;
    init.info.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
    if (at::isFloatingType(tensor.scalar_type())) {
      const at::Tensor t = tensor.to(at::kFloat).contiguous();
      init.info.dtype = graph::DType::Float32;
      init.data.assign(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    } else if (at::isIntegralType(tensor.scalar_type(), /*includeBool=*/true)) {
      const at::Tensor t = tensor.to(at::kLong).contiguous();
      init.info.dtype = tensor.scalar_type() == at::kBool ? graph::DType::Bool : graph::DType::Int64;
      init.ints.assign(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
    } else {
      fail(std::string("constant tensors of type ") + c10::toString(tensor.scalar_type()) + " are not supported");
    }
    constNames_[key] = name;
    return name;
  }
  std::string floats(const std::string& hint, Shape shape, std::vector<float> values) {
    const std::string name = unique(hint);
    graph::Initializer& init = g_.initializers[name];
    init.info = graph::ValueInfo{name, std::move(shape), graph::DType::Float32};
    init.data = std::move(values);
    return name;
  }
  std::string ints(const std::string& hint, Shape shape, Shape values) {
    const std::string name = unique(hint);
    graph::Initializer& init = g_.initializers[name];
    init.info = graph::ValueInfo{name, std::move(shape), graph::DType::Int64};
    init.ints = std::move(values);
    return name;
  }
  std::string ints(const std::string& hint, Shape values) {
    const int64_t n = int64_t(values.size());
    return ints(hint, {n}, std::move(values));
  }

  // The graph value of a tensor slot (a constant becomes an initializer).
  std::string tensorName(const Slot& s, const std::string& hint = "const") {
    if (s.kind == Slot::Kind::Tensor) return s.name;
    if (s.kind == Slot::Kind::Const && s.value.isTensor()) return initializer(s.value.toTensor(), hint);
    fail("a tensor operand is expected");
  }
  std::string tensor(const Value* v) { return tensorName(slot(v), v->debugName()); }
  // A tensor operand, or a number as a scalar initializer of `like`'s type.
  std::string operand(const Value* v, const std::string& like, double scale = 1.0) {
    const Slot& s = slot(v);
    // Numbers, and 0-d constant tensors (NumToTensor of a size), are scalars of `like`'s type.
    if (s.kind == Slot::Kind::Const && (!s.value.isTensor() || s.value.toTensor().dim() == 0)) {
      const double value = floatArg(v, "operand") * scale;
      if (info(like).dtype == graph::DType::Int64) return ints(outName() + "/scalar", {}, {int64_t(value)});
      return floats(outName() + "/scalar", {}, {float(value)});
    }
    std::string name = tensor(v);
    if (scale != 1.0) name = node("Mul", {name, floats(outName() + "/alpha", {}, {float(scale)})}, {}, "alpha");
    return name;
  }

  // ---- nodes -----------------------------------------------------------------

  // The name of the current node's first output (the value name in the graph).
  std::string outName() const {
    const std::string base = current_->outputs().empty() ? std::string("out") : current_->output(0)->debugName();
    return base;
  }

  // Adds a node; its output is named after the TorchScript value (or
  // "<value>/<suffix>" for the helper nodes of a conversion).
  std::string node(const std::string& op, std::vector<std::string> inputs, std::map<std::string, AttrValue> attrs = {},
                   const std::string& suffix = "") {
    const std::string name = unique(suffix.empty() ? outName() : outName() + "/" + suffix);
    g_.nodes.push_back(graph::Node{name, op, std::move(inputs), {name}, std::move(attrs)});
    return name;
  }
  std::vector<std::string> nodeN(const std::string& op, std::vector<std::string> inputs, size_t outputs,
                                 std::map<std::string, AttrValue> attrs = {}) {
    const std::string name = unique(outName());
    std::vector<std::string> outs;
    for (size_t i = 0; i < outputs; ++i)
      outs.push_back(unique(name + ":" + std::to_string(i)));
    g_.nodes.push_back(graph::Node{name, op, std::move(inputs), outs, std::move(attrs)});
    return outs;
  }
  void result(const std::string& name, size_t output = 0) { slots_[current_->output(output)] = tensorSlot(name); }

  // ---- conversion --------------------------------------------------------------

  // A list or tuple of constants as one constant.
  static c10::IValue constantList(const torch::jit::Node* n, const std::vector<Slot>& items);

  // Runs the node with the JIT's own operator when every input is a constant.
  bool fold(torch::jit::Node* n);

  void convert(torch::jit::Node* n);

  // aten::OP by its converter (atenConverters below); unsupported otherwise.
  void convertAten(torch::jit::Node* n, const std::string& op);

  using AtenConverter = std::function<void(Importer&, torch::jit::Node*)>;
  static const std::map<std::string, AtenConverter>& atenConverters();

 public:
  static const std::map<std::string, AtenConverter>& atenOps() { return atenConverters(); }

 private:
  // ---- converters, one per kind of aten op ------------------------------------
  static const Value* arg(torch::jit::Node* n, size_t i) { return n->input(i); }

  // Shapes of graph tensors are static: their sizes are constants.
  void sizeOf(torch::jit::Node* n);
  void dimOf(torch::jit::Node* n);
  void numelOf(torch::jit::Node* n);
  void identity(torch::jit::Node* n);
  void matmul(torch::jit::Node* n);
  void addmm(torch::jit::Node* n);

  // add/sub: self +- alpha * other; rsub: other - alpha * self.
  void addSub(torch::jit::Node* n, bool subtract, bool reversed);

  // Element-wise with two operands. `division`: no rounding mode; `orReduction`:
  // max/min with one tensor argument are reductions, not supported.
  void binary(torch::jit::Node* n, const std::string& onnxOp, bool division, bool orReduction);

  void unary(torch::jit::Node* n, const std::string& onnxOp);
  void rsqrt(torch::jit::Node* n);
  void gelu(torch::jit::Node* n);
  void softmax(torch::jit::Node* n);

  // Clip with bounds: fixed (relu6), or the arguments from `loArg` / `hiArg` (0: none).
  void clamp(torch::jit::Node* n, size_t loArg, size_t hiArg, bool relu6);

  void mean(torch::jit::Node* n);
  void reshape(torch::jit::Node* n);
  void permute(torch::jit::Node* n);
  // transpose(dim0, dim1) swaps two axes; t and numpy_T reverse them all.
  void transpose(torch::jit::Node* n, bool swapTwo);
  // cat along an axis; stack along a new one.
  void concat(torch::jit::Node* n, bool stack);
  void slice(torch::jit::Node* n);
  void select(torch::jit::Node* n);
  void unsqueeze(torch::jit::Node* n);
  void squeeze(torch::jit::Node* n);
  // ---- activations, padding, masks and attention of exported models ---------

  void silu(torch::jit::Node* n);
  // torch's hardsigmoid is relu6(x + 3) / 6: ONNX's with alpha 1/6.
  void hardsigmoid(torch::jit::Node* n);
  // F.pad: pairs from the last axis backwards; ONNX: all begins, then all ends.
  void pad(torch::jit::Node* n);
  // roll: per axis, the last `shift` elements first (a Slice pair and a Concat).
  void roll(torch::jit::Node* n);
  // F.interpolate (upsample_*): Resize with PyTorch's coordinates. Nearest
  // floors x / scale (asymmetric); linear is half_pixel, or align_corners.
  // Scales are kept where given (the coordinates use them), else sizes.
  void upsample(torch::jit::Node* n, bool linear);
  // new_zeros of a constant size is a constant: the in-place fills and
  // slices that build Swin's masks on it are then evaluated by the JIT.
  void newZeros(torch::jit::Node* n);
  void compare(torch::jit::Node* n, bool negate);
  void maskedFill(torch::jit::Node* n);
  // expand: -1 keeps the axis; new leading axes broadcast.
  void expand(torch::jit::Node* n);

  // PyTorch's fused attention (nn.MultiheadAttention's and
  // nn.TransformerEncoderLayer's fast paths), spelled out (attention_nodes.h).
  NodeEmitter emitter();
  AttentionWeights attentionWeights(torch::jit::Node* n, size_t embed);
  void nativeMultiHeadAttention(torch::jit::Node* n);
  void transformerEncoderLayer(torch::jit::Node* n);

  void embedding(torch::jit::Node* n);

  // The first tensor operand's graph name (for the type of scalar operands).
  std::string firstTensor(torch::jit::Node* n);

  // conv1d/2d/3d, or (full) _convolution/convolution with its transposed flag.
  void conv(torch::jit::Node* n, bool full);

  void linear(torch::jit::Node* n);
  std::vector<at::Tensor> keepAlive_;

  void layerNorm(torch::jit::Node* n);

  void batchNorm(torch::jit::Node* n);

  void pool(torch::jit::Node* n, bool max, size_t sp);

  void adaptivePool(torch::jit::Node* n);

  void flatten(torch::jit::Node* n);

  // How a split's second argument is read.
  enum class SplitBy { SizeOrSizes, Chunks, TensorSplitChunks };

  void split(torch::jit::Node* n, SplitBy by);
};

}  // namespace tessel::frontend::torchscript
