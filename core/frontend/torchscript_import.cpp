// TorchScript import: torch::jit::load, eval, freeze (parameters become
// constants, methods are inlined, dropout goes), then each node of forward's
// graph becomes ONNX-style nodes. Non-tensor values (ints, lists, sizes: the
// input shapes are static, so aten::size is a constant) are evaluated here
// with the JIT's own operators; constant tensors become initializers.
//
// Compiled into tessel_reference (core/reference/CMakeLists.txt), not into
// tessel_frontend: it is one of the few sources that include LibTorch.
#include "frontend/torchscript_import.h"

#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/script.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "frontend/attention_nodes.h"
#include "graph/shape_utils.h"

namespace tessel::frontend {

namespace {

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

Slot tensorSlot(std::string name) {
  Slot s;
  s.kind = Slot::Kind::Tensor;
  s.name = std::move(name);
  return s;
}

Slot constSlot(c10::IValue v) {
  Slot s;
  s.value = std::move(v);
  return s;
}

std::string firstLine(const std::string& s) {
  const size_t start = s.find_first_not_of(" \n");
  if (start == std::string::npos) return s;
  return s.substr(start, s.find('\n', start) - start);
}

// "<file>:4:11: y = torch.cumsum(x, 1)": the original source when the
// archive has its debug information, else the serialised code.
std::string position(const torch::jit::Node* n) {
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

  graph::Graph run() {
    torch::jit::Module module = load();
    // The file's parameters are the module's (freezing below merges equal
    // constants and turns parameters into them).
    int64_t parameters = 0;
    for (const at::Tensor& p : module.parameters())
      parameters += p.numel();
    std::shared_ptr<torch::jit::Graph> jit;
    try {
      module.eval();
      // optimize_numerics off: keep the model's own ops (BatchNormalization
      // stays; Tessel's foldBatchNorm does what freeze would do).
      torch::jit::Module frozen = torch::jit::freeze(module, c10::nullopt, /*optimize_numerics=*/false);
      jit = frozen.get_method("forward").graph()->copy();
      torch::jit::Inline(*jit);
      torch::jit::RemoveTensorMutation(jit);
      torch::jit::EliminateDeadCode(jit);
    } catch (const c10::Error& e) {
      throw GraphError(path_ + ": cannot prepare the TorchScript module: " + e.what_without_backtrace());
    }
    g_.name = std::filesystem::path(path_).stem().string();
    addInputs(*jit);
    for (torch::jit::Node* n : jit->nodes()) {
      current_ = n;
      try {
        convert(n);
      } catch (const GraphError&) {
        throw;
      } catch (const c10::Error& e) {
        fail(firstLine(e.what_without_backtrace()));
      } catch (const std::exception& e) {
        fail(firstLine(e.what()));
      }
    }
    current_ = nullptr;
    for (Value* v : jit->outputs())
      addOutput(slot(v));
    graph::inferShapes(g_);
    g_.validate();
    // As the ONNX importer does: what is known at load time is folded, so
    // that only the tensor work remains.
    g_.fileParameters = parameters;
    graph::foldConstants(g_);
    return std::move(g_);
  }

 private:
  std::string path_;
  std::vector<Shape> shapes_;
  graph::Graph g_;
  std::map<const Value*, Slot> slots_;
  std::map<const void*, std::string> constNames_;  // constant tensor -> initializer
  std::set<std::string> names_;                    // every value and node name used
  const torch::jit::Node* current_ = nullptr;
  int counter_ = 0;

  torch::jit::Module load() {
    if (!std::filesystem::is_regular_file(path_)) throw GraphError("TorchScript file '" + path_ + "' does not exist");
    if (!std::ifstream(path_).good()) throw GraphError("TorchScript file '" + path_ + "' cannot be read");
    try {
      return torch::jit::load(path_);
    } catch (const c10::Error& e) {
      std::string what = e.what_without_backtrace();
      throw GraphError("cannot load TorchScript file '" + path_ + "': " + what.substr(0, what.find('\n')));
    } catch (const std::exception& e) {
      throw GraphError("cannot load TorchScript file '" + path_ + "': " + e.what());
    }
  }

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

  void addInputs(const torch::jit::Graph& jit) {
    size_t next = 0;
    for (const Value* v : jit.inputs()) {
      if (v->type()->cast<c10::ClassType>()) continue;  // self
      if (!v->type()->cast<c10::TensorType>())
        throw GraphError(path_ + ": forward argument '" + v->debugName() + "' is a " + v->type()->str() +
                         ", not a tensor");
      if (next >= shapes_.size())
        throw GraphError(path_ + ": forward takes more tensors than the " + std::to_string(shapes_.size()) +
                         " input shapes given");
      // forward's argument name ("x", not the JIT's "x.1"): what a user names their data after.
      const std::string name = unique(v->debugNameBase());
      g_.inputs.push_back(graph::ValueInfo{name, shapes_[next++], graph::DType::Float32});
      g_.values[name] = g_.inputs.back();
      slots_[v] = tensorSlot(name);
    }
    if (next != shapes_.size())
      throw GraphError(path_ + ": forward takes " + std::to_string(next) + " tensors, " +
                       std::to_string(shapes_.size()) + " input shapes are given");
  }

  void addOutput(const Slot& s) {
    if (s.kind == Slot::Kind::List || s.kind == Slot::Kind::Tuple) {
      for (const Slot& item : s.items)
        addOutput(item);
      return;
    }
    if (s.kind == Slot::Kind::Const && !s.value.isTensor())
      throw GraphError(path_ + ": forward returns a " + s.value.tagKind() + ", not a tensor");
    g_.outputs.push_back(tensorName(s));
  }

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
  static c10::IValue constantList(const torch::jit::Node* n, const std::vector<Slot>& items) {
    if (n->kind() == c10::prim::TupleConstruct) {
      std::vector<c10::IValue> values;
      for (const Slot& s : items)
        values.push_back(s.value);
      return c10::ivalue::Tuple::create(std::move(values));
    }
    const c10::TypePtr element = n->output()->type()->expectRef<c10::ListType>().getElementType();
    if (element->kind() == c10::TypeKind::IntType) {
      c10::List<int64_t> list;
      for (const Slot& s : items)
        list.push_back(s.value.toInt());
      return list;
    }
    if (element->kind() == c10::TypeKind::FloatType) {
      c10::List<double> list;
      for (const Slot& s : items)
        list.push_back(s.value.isInt() ? double(s.value.toInt()) : s.value.toDouble());
      return list;
    }
    if (element->kind() == c10::TypeKind::BoolType) {
      c10::List<bool> list;
      for (const Slot& s : items)
        list.push_back(s.value.toBool());
      return list;
    }
    c10::impl::GenericList list(element);
    for (const Slot& s : items)
      list.push_back(s.value);
    return list;
  }

  // Runs the node with the JIT's own operator when every input is a constant.
  bool fold(torch::jit::Node* n) {
    if (!n->blocks().empty()) return false;
    for (const Value* v : n->inputs())
      if (!isConst(v)) return false;
    static const std::set<std::string> effects = {"prim::RaiseException", "prim::Print", "aten::warn",
                                                  "prim::Uninitialized"};
    if (effects.count(kind())) return false;
    torch::jit::Operation op = n->getOperation();
    torch::jit::Stack stack;
    for (const Value* v : n->inputs())
      stack.push_back(slot(v).value);
    op(stack);
    if (stack.size() != n->outputs().size()) fail("constant evaluation gave the wrong number of results");
    for (size_t i = 0; i < stack.size(); ++i)
      slots_[n->output(i)] = constSlot(stack[i]);
    return true;
  }

  void convert(torch::jit::Node* n) {
    const std::string k = kind();
    if (k == "prim::Constant") {
      auto iv = torch::jit::toIValue(n->output());
      if (!iv) unsupported();
      slots_[n->output()] = constSlot(*iv);
      return;
    }
    // Lists and tuples: the interpreter builds these itself (they have no
    // operator to fold with).
    if (k == "prim::ListConstruct" || k == "prim::TupleConstruct") {
      Slot s;
      s.kind = k == "prim::ListConstruct" ? Slot::Kind::List : Slot::Kind::Tuple;
      bool constant = true;
      for (const Value* v : n->inputs()) {
        s.items.push_back(slot(v));
        constant = constant && isConst(v) && !slot(v).value.isTensor();
      }
      if (constant) s = constSlot(constantList(n, s.items));
      slots_[n->output()] = s;
      return;
    }
    if (k == "prim::ListUnpack" || k == "prim::TupleUnpack") {
      const Slot& s = slot(n->input(0));
      std::vector<Slot> items = s.items;
      if (s.kind == Slot::Kind::Const) {
        items.clear();
        if (s.value.isTuple())
          for (const c10::IValue& v : s.value.toTupleRef().elements())
            items.push_back(constSlot(v));
        else if (s.value.isList())
          for (const c10::IValue& v : s.value.toListRef())
            items.push_back(constSlot(v));
      }
      if (items.size() != n->outputs().size()) fail("unpacks a list of another length");
      for (size_t i = 0; i < items.size(); ++i)
        slots_[n->output(i)] = items[i];
      return;
    }
    if (fold(n)) return;
    if (k == "prim::ConstantChunk") {  // x.chunk(n, dim) unpacked at once
      const std::string x = tensor(n->input(0));
      const Shape& shape = shapeOf(x);
      const int64_t dim = axis(n->i(c10::Symbol::attr("dim")), int64_t(shape.size()));
      const int64_t chunks = n->i(c10::Symbol::attr("chunks")), extent = shape[size_t(dim)];
      const int64_t size = (extent + chunks - 1) / chunks;
      Shape sizes;
      for (int64_t at = 0; at < extent; at += size)
        sizes.push_back(std::min(size, extent - at));
      if (sizes.size() != n->outputs().size()) fail("the chunks do not match the outputs");
      const std::vector<std::string> outs =
          nodeN("Split", {x, ints(outName() + "/split", sizes)}, sizes.size(), {{"axis", dim}});
      for (size_t i = 0; i < outs.size(); ++i)
        result(outs[i], i);
      return;
    }
    if (k.rfind("aten::", 0) != 0) unsupported();
    std::string op = k.substr(6);
    // In-place variants: the functional op, and the mutated value is the result.
    const bool inPlace = op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_';
    if (inPlace) op.pop_back();
    convertAten(n, op);
    if (inPlace && !n->outputs().empty() && slots_.count(n->output(0))) slots_[n->input(0)] = slots_[n->output(0)];
  }

  // aten::OP by its converter (atenConverters below); unsupported otherwise.
  void convertAten(torch::jit::Node* n, const std::string& op) {
    const auto& table = atenConverters();
    auto it = table.find(op);
    if (it == table.end()) unsupported();
    it->second(*this, n);
  }

  using AtenConverter = std::function<void(Importer&, torch::jit::Node*)>;
  static const std::map<std::string, AtenConverter>& atenConverters();

 public:
  static const std::map<std::string, AtenConverter>& atenOps() { return atenConverters(); }

 private:

  // ---- converters, one per kind of aten op ------------------------------------
  static const Value* arg(torch::jit::Node* n, size_t i) { return n->input(i); }

  // Shapes of graph tensors are static: their sizes are constants.
  void sizeOf(torch::jit::Node* n) {
    const Shape& s = shapeOf(tensor(arg(n, 0)));
    if (n->inputs().size() == 1)
      slots_[n->output()] = constSlot(c10::IValue(s));
    else
      slots_[n->output()] = constSlot(c10::IValue(s[size_t(axis(intArg(arg(n, 1), "dim"), int64_t(s.size())))]));
  }
  void dimOf(torch::jit::Node* n) { slots_[n->output()] = constSlot(c10::IValue(rankOf(tensor(arg(n, 0))))); }
  void numelOf(torch::jit::Node* n) {
    slots_[n->output()] = constSlot(c10::IValue(info(tensor(arg(n, 0))).numElements()));
  }
  void identity(torch::jit::Node* n) { slots_[n->output()] = slot(arg(n, 0)); }
  void matmul(torch::jit::Node* n) { result(node("MatMul", {tensor(arg(n, 0)), tensor(arg(n, 1))})); }
  void addmm(torch::jit::Node* n) {
    const size_t argc = n->inputs().size();
    const double beta = argc > 3 ? floatArg(arg(n, 3), "beta") : 1.0;
    const double alpha = argc > 4 ? floatArg(arg(n, 4), "alpha") : 1.0;
    result(node("Gemm", {tensor(arg(n, 1)), tensor(arg(n, 2)), tensor(arg(n, 0))}, {{"alpha", alpha}, {"beta", beta}}));
  }

  // add/sub: self +- alpha * other; rsub: other - alpha * self.
  void addSub(torch::jit::Node* n, bool subtract, bool reversed) {
    const double alpha = n->inputs().size() > 2 ? floatArg(arg(n, 2), "alpha") : 1.0;
    if (reversed) {
      const std::string self = operand(arg(n, 0), firstTensor(n), alpha);
      return result(node("Sub", {operand(arg(n, 1), self), self}));
    }
    const std::string self = operand(arg(n, 0), firstTensor(n));
    result(node(subtract ? "Sub" : "Add", {self, operand(arg(n, 1), self, alpha)}));
  }

  // Element-wise with two operands. `division`: no rounding mode; `orReduction`:
  // max/min with one tensor argument are reductions, not supported.
  void binary(torch::jit::Node* n, const std::string& onnxOp, bool division, bool orReduction) {
    const size_t argc = n->inputs().size();
    if (division && argc > 2 && !isNone(arg(n, 2))) fail("rounding modes are not supported");
    if (orReduction && argc != 2) unsupported();
    const std::string self = operand(arg(n, 0), firstTensor(n));
    result(node(onnxOp, {self, operand(arg(n, 1), self)}));
  }

  void unary(torch::jit::Node* n, const std::string& onnxOp) { result(node(onnxOp, {tensor(arg(n, 0))})); }
  void rsqrt(torch::jit::Node* n) { result(node("Reciprocal", {node("Sqrt", {tensor(arg(n, 0))}, {}, "sqrt")})); }
  void gelu(torch::jit::Node* n) {
    const std::string approximate = n->inputs().size() > 1 ? constant(arg(n, 1), "approximate").toStringRef() : "none";
    result(node("Gelu", {tensor(arg(n, 0))}, {{"approximate", approximate}}));
  }
  void softmax(torch::jit::Node* n) {
    if (n->inputs().size() > 2 && !isNone(arg(n, 2))) fail("a dtype argument is not supported");
    result(node("Softmax", {tensor(arg(n, 0))}, {{"axis", intArg(arg(n, 1), "dim")}}));
  }

  // Clip with bounds: fixed (relu6), or the arguments from `loArg` / `hiArg` (0: none).
  void clamp(torch::jit::Node* n, size_t loArg, size_t hiArg, bool relu6) {
    const std::string x = tensor(arg(n, 0));
    auto bound = [&](size_t i, const char* suffix) -> std::string {
      if (i == 0 || isNone(arg(n, i))) return "";
      return floats(outName() + "/" + suffix, {}, {float(floatArg(arg(n, i), suffix))});
    };
    std::string lo = bound(loArg, "min"), hi = bound(hiArg, "max");
    if (relu6) {
      lo = floats(outName() + "/min", {}, {0.0f});
      hi = floats(outName() + "/max", {}, {6.0f});
    }
    result(node("Clip", {x, lo, hi}));
  }

  void mean(torch::jit::Node* n) {
    const size_t argc = n->inputs().size();
    const std::string x = tensor(arg(n, 0));
    if (argc <= 2) return result(node("ReduceMean", {x}, {{"keepdims", int64_t(0)}}));
    if (argc > 3 && !isNone(arg(n, 3))) fail("a dtype argument is not supported");
    Shape dims = intsArg(arg(n, 1), "dim");
    result(node("ReduceMean", {x, ints(outName() + "/axes", dims)},
                {{"keepdims", int64_t(boolArg(arg(n, 2), "keepdim"))}}));
  }
  void reshape(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    result(node("Reshape", {x, ints(outName() + "/shape", intsArg(arg(n, 1), "shape"))}));
  }
  void permute(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    Shape perm = intsArg(arg(n, 1), "dims");
    for (int64_t& p : perm)
      p = axis(p, rankOf(x));
    result(node("Transpose", {x}, {{"perm", perm}}));
  }
  // transpose(dim0, dim1) swaps two axes; t and numpy_T reverse them all.
  void transpose(torch::jit::Node* n, bool swapTwo) {
    const std::string x = tensor(arg(n, 0));
    const int64_t rank = rankOf(x);
    Shape perm(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d)
      perm[size_t(d)] = d;
    if (swapTwo)
      std::swap(perm[size_t(axis(intArg(arg(n, 1), "dim0"), rank))],
                perm[size_t(axis(intArg(arg(n, 2), "dim1"), rank))]);
    else
      std::reverse(perm.begin(), perm.end());
    result(node("Transpose", {x}, {{"perm", perm}}));
  }
  // cat along an axis; stack along a new one.
  void concat(torch::jit::Node* n, bool stack) {
    const Slot& list = slot(arg(n, 0));
    if (list.kind != Slot::Kind::List) fail("the tensors must be a list");
    std::vector<std::string> parts;
    for (const Slot& s : list.items)
      parts.push_back(tensorName(s, outName() + "/part"));
    if (parts.empty()) fail("the list is empty");
    const int64_t dim = n->inputs().size() > 1 ? intArg(arg(n, 1), "dim") : 0;
    if (!stack) return result(node("Concat", parts, {{"axis", axis(dim, rankOf(parts[0]))}}));
    const int64_t at = axis(dim, rankOf(parts[0]) + 1);
    for (std::string& p : parts)
      p = node("Unsqueeze", {p, ints(outName() + "/axes", {at})}, {}, "unsqueeze");
    result(node("Concat", parts, {{"axis", at}}));
  }
  void slice(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x));
    const int64_t start = isNone(arg(n, 2)) ? 0 : intArg(arg(n, 2), "start");
    const int64_t end = isNone(arg(n, 3)) ? std::numeric_limits<int64_t>::max() : intArg(arg(n, 3), "end");
    const int64_t step = intArg(arg(n, 4), "step");
    const std::string s = outName();
    result(node("Slice", {x, ints(s + "/starts", {start}), ints(s + "/ends", {end}), ints(s + "/axes", {dim}),
                          ints(s + "/steps", {step})}));
  }
  void select(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x));
    result(node("Gather", {x, ints(outName() + "/index", {}, {intArg(arg(n, 2), "index")})}, {{"axis", dim}}));
  }
  void unsqueeze(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x) + 1);
    result(node("Unsqueeze", {x, ints(outName() + "/axes", {dim})}));
  }
  void squeeze(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    if (n->inputs().size() == 1) return result(node("Squeeze", {x}));
    const int64_t dim = axis(intArg(arg(n, 1), "dim"), rankOf(x));
    if (shapeOf(x)[size_t(dim)] != 1) return result(node("Identity", {x}));  // torch: a no-op
    result(node("Squeeze", {x, ints(outName() + "/axes", {dim})}));
  }
  // ---- activations, padding, masks and attention of exported models ---------

  void silu(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    result(node("Mul", {x, node("Sigmoid", {x}, {}, "sigmoid")}));
  }
  // torch's hardsigmoid is relu6(x + 3) / 6: ONNX's with alpha 1/6.
  void hardsigmoid(torch::jit::Node* n) {
    result(node("HardSigmoid", {tensor(arg(n, 0))}, {{"alpha", 1.0 / 6.0}, {"beta", 0.5}}));
  }
  // F.pad: pairs from the last axis backwards; ONNX: all begins, then all ends.
  void pad(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    const Shape p = intsArg(arg(n, 1), "pad");
    const int64_t rank = rankOf(x);
    if (p.size() % 2 || int64_t(p.size()) > 2 * rank) fail("pad has an odd length or more pairs than axes");
    Shape pads(size_t(2 * rank), 0);
    for (size_t i = 0; i < p.size() / 2; ++i) {
      pads[size_t(rank) - 1 - i] = p[2 * i];
      pads[size_t(2 * rank) - 1 - i] = p[2 * i + 1];
    }
    const std::string mode = n->inputs().size() > 2 ? constant(arg(n, 2), "mode").toStringRef() : "constant";
    static const std::map<std::string, std::string> modes = {
        {"constant", "constant"}, {"reflect", "reflect"}, {"replicate", "edge"}};
    auto m = modes.find(mode);
    if (m == modes.end()) fail("mode '" + mode + "' is not supported");
    const double value = n->inputs().size() > 3 && !isNone(arg(n, 3)) ? floatArg(arg(n, 3), "value") : 0.0;
    result(node("Pad", {x, ints(outName() + "/pads", pads), floats(outName() + "/value", {}, {float(value)})},
                {{"mode", m->second}}));
  }
  // roll: per axis, the last `shift` elements first (a Slice pair and a Concat).
  void roll(torch::jit::Node* n) {
    std::string x = tensor(arg(n, 0));
    const Shape shifts = intsArg(arg(n, 1), "shifts");
    Shape dims = n->inputs().size() > 2 ? intsArg(arg(n, 2), "dims") : Shape{};
    const Shape original = shapeOf(x);
    if (dims.empty()) {  // the flattened tensor rolls
      if (shifts.size() != 1) fail("several shifts need as many dims");
      x = node("Reshape", {x, ints(outName() + "/flat", {-1})}, {}, "flat");
      dims = {0};
    }
    if (shifts.size() != dims.size()) fail("shifts and dims differ in length");
    for (size_t i = 0; i < dims.size(); ++i) {
      const int64_t d = axis(dims[i], rankOf(x)), len = shapeOf(x)[size_t(d)];
      const int64_t s = ((shifts[i] % len) + len) % len;
      if (s == 0) continue;
      auto part = [&](int64_t from, int64_t to, const char* what) {
        const std::string w = outName() + "/" + what;
        return node("Slice", {x, ints(w + "_starts", {from}), ints(w + "_ends", {to}), ints(w + "_axes", {d})}, {},
                    what);
      };
      x = node("Concat", {part(len - s, len, "tail"), part(0, len - s, "head")}, {{"axis", d}}, "rolled");
    }
    if (original != shapeOf(x)) x = node("Reshape", {x, ints(outName() + "/shape", original)}, {}, "unflat");
    result(node("Identity", {x}));
  }
  // new_zeros of a constant size is a constant: the in-place fills and
  // slices that build Swin's masks on it are then evaluated by the JIT.
  void newZeros(torch::jit::Node* n) {
    const Shape size = intsArg(arg(n, 1), "size");
    at::ScalarType type = at::kFloat;
    if (n->inputs().size() > 2 && !isNone(arg(n, 2))) type = static_cast<at::ScalarType>(intArg(arg(n, 2), "dtype"));
    slots_[n->output()] = constSlot(at::zeros(size, at::TensorOptions().dtype(type)));
  }
  void compare(torch::jit::Node* n, bool negate) {
    const std::string self = operand(arg(n, 0), firstTensor(n));
    const std::string eq = node("Equal", {self, operand(arg(n, 1), self)}, {}, negate ? "equal" : "");
    result(negate ? node("Not", {eq}) : eq);
  }
  void maskedFill(torch::jit::Node* n) {
    const std::string self = tensor(arg(n, 0));
    result(node("Where", {tensor(arg(n, 1)), operand(arg(n, 2), self), self}));
  }
  // expand: -1 keeps the axis; new leading axes broadcast.
  void expand(torch::jit::Node* n) {
    const std::string x = tensor(arg(n, 0));
    Shape target = intsArg(arg(n, 1), "size");
    const Shape& s = shapeOf(x);
    if (target.size() < s.size()) fail("expands to fewer axes than the tensor has");
    for (size_t i = 0; i < target.size(); ++i) {
      const size_t lead = target.size() - s.size();
      if (target[i] == -1) {
        if (i < lead) fail("-1 for a new axis");
        target[i] = s[i - lead];
      }
    }
    result(node("Expand", {x, ints(outName() + "/shape", target)}));
  }

  // PyTorch's fused attention (nn.MultiheadAttention's and
  // nn.TransformerEncoderLayer's fast paths), spelled out (attention_nodes.h).
  NodeEmitter emitter() {
    NodeEmitter e;
    e.node = [this](const std::string& op, std::vector<std::string> inputs, std::map<std::string, AttrValue> attrs,
                    const std::string& suffix) { return node(op, std::move(inputs), std::move(attrs), suffix); };
    e.ints = [this](const std::string& suffix, Shape values) { return ints(outName() + "/" + suffix, values); };
    e.scalar = [this](const std::string& suffix, float v) { return floats(outName() + "/" + suffix, {}, {v}); };
    e.shapeOf = [this](const std::string& v) { return shapeOf(v); };
    return e;
  }
  AttentionWeights attentionWeights(torch::jit::Node* n, size_t embed) {
    AttentionWeights w;
    w.embedDim = intArg(arg(n, embed), "embed_dim");
    w.heads = intArg(arg(n, embed + 1), "num_heads");
    w.qkvWeight = tensor(arg(n, embed + 2));
    w.qkvBias = tensor(arg(n, embed + 3));
    w.projWeight = tensor(arg(n, embed + 4));
    w.projBias = tensor(arg(n, embed + 5));
    return w;
  }
  void nativeMultiHeadAttention(torch::jit::Node* n) {
    if (!isNone(arg(n, 9))) fail("attention masks are not supported");
    if (n->outputs().size() > 1 && n->output(1)->hasUses()) fail("the attention weights output is not supported");
    result(
        multiHeadAttention(emitter(), tensor(arg(n, 0)), tensor(arg(n, 1)), tensor(arg(n, 2)), attentionWeights(n, 3)));
  }
  void transformerEncoderLayer(torch::jit::Node* n) {
    if (n->inputs().size() > 18 && !isNone(arg(n, 18))) fail("attention masks are not supported");
    EncoderLayerWeights w;
    w.attention = attentionWeights(n, 1);
    w.gelu = boolArg(arg(n, 7), "use_gelu");
    w.normFirst = boolArg(arg(n, 8), "norm_first");
    w.eps = floatArg(arg(n, 9), "eps");
    w.norm1Weight = tensor(arg(n, 10));
    w.norm1Bias = tensor(arg(n, 11));
    w.norm2Weight = tensor(arg(n, 12));
    w.norm2Bias = tensor(arg(n, 13));
    w.ffn1Weight = tensor(arg(n, 14));
    w.ffn1Bias = tensor(arg(n, 15));
    w.ffn2Weight = tensor(arg(n, 16));
    w.ffn2Bias = tensor(arg(n, 17));
    result(frontend::transformerEncoderLayer(emitter(), tensor(arg(n, 0)), w));
  }

  void embedding(torch::jit::Node* n) {
    result(node("Gather", {tensor(arg(n, 0)), tensor(arg(n, 1))}, {{"axis", int64_t(0)}}));
  }

  // The first tensor operand's graph name (for the type of scalar operands).
  std::string firstTensor(torch::jit::Node* n) {
    for (const Value* v : n->inputs()) {
      const Slot& s = slot(v);
      if (s.kind == Slot::Kind::Tensor) return s.name;
      if (s.kind == Slot::Kind::Const && s.value.isTensor()) return tensor(v);
    }
    fail("has no tensor operand");
  }

  // conv1d/2d/3d, or (full) _convolution/convolution with its transposed flag.
  void conv(torch::jit::Node* n, bool full) {
    const std::string x = tensor(n->input(0)), w = tensor(n->input(1));
    const size_t sp = shapeOf(w).size() - 2;
    if (full && boolArg(n->input(6), "transposed")) fail("transposed convolution is not supported");
    const Value* groupsArg = n->input(full ? 8 : 6);
    std::map<std::string, AttrValue> attrs = {{"strides", intsArg(n->input(3), "stride", sp)},
                                              {"dilations", intsArg(n->input(5), "dilation", sp)},
                                              {"group", intArg(groupsArg, "groups")}};
    const c10::IValue& padding = constant(n->input(4), "padding");
    if (padding.isString()) {
      const std::string& mode = padding.toStringRef();
      if (mode == "same")
        attrs["auto_pad"] = std::string("SAME_UPPER");  // PyTorch pads the end more
      else if (mode == "valid")
        attrs["auto_pad"] = std::string("VALID");
      else
        fail("padding '" + mode + "' is not supported");
    } else {
      Shape p = intsArg(n->input(4), "padding", sp);
      p.insert(p.end(), p.begin(), p.end());
      attrs["pads"] = p;
    }
    std::vector<std::string> inputs = {x, w};
    if (!isNone(n->input(2))) inputs.push_back(tensor(n->input(2)));
    result(node("Conv", inputs, attrs));
  }

  void linear(torch::jit::Node* n) {
    const std::string x = tensor(n->input(0));
    const bool bias = n->inputs().size() > 2 && !isNone(n->input(2));
    const Slot& ws = slot(n->input(1));
    if (rankOf(x) == 2) {
      std::vector<std::string> inputs = {x, tensor(n->input(1))};
      if (bias) inputs.push_back(tensor(n->input(2)));
      return result(node("Gemm", inputs, {{"transB", int64_t(1)}}));
    }
    // Batched: x @ W^T (+ b); a constant W is transposed here.
    std::string wt;
    if (ws.kind == Slot::Kind::Const && ws.value.isTensor() && ws.value.toTensor().dim() == 2) {
      const at::Tensor t = ws.value.toTensor().t().contiguous();
      wt = initializer(t, n->input(1)->debugName() + "_t");
      keepAlive_.push_back(t);  // its address keys the initializer cache
    } else {
      wt = node("Transpose", {tensor(n->input(1))}, {{"perm", Shape{1, 0}}}, "weight_t");
    }
    if (!bias) return result(node("MatMul", {x, wt}));
    result(node("Add", {node("MatMul", {x, wt}, {}, "matmul"), tensor(n->input(2))}));
  }
  std::vector<at::Tensor> keepAlive_;

  void layerNorm(torch::jit::Node* n) {
    const std::string x = tensor(n->input(0));
    const Shape normalized = intsArg(n->input(1), "normalized_shape");
    const double eps = floatArg(n->input(4), "eps");
    int64_t count = 1;
    for (int64_t d : normalized)
      count *= d;
    const std::string scale = isNone(n->input(2))
                                  ? floats(outName() + "/scale", normalized, std::vector<float>(size_t(count), 1.0f))
                                  : tensor(n->input(2));
    std::vector<std::string> inputs = {x, scale};
    if (!isNone(n->input(3))) inputs.push_back(tensor(n->input(3)));
    result(node("LayerNormalization", inputs, {{"axis", -int64_t(normalized.size())}, {"epsilon", eps}}));
  }

  void batchNorm(torch::jit::Node* n) {
    const std::string x = tensor(n->input(0));
    if (boolArg(n->input(5), "training")) fail("training mode is not supported");
    const double eps = floatArg(n->input(7), "eps");
    const int64_t channels = shapeOf(x).size() > 1 ? shapeOf(x)[1] : 1;
    auto param = [&](size_t i, const char* suffix, float fill) {
      if (!isNone(n->input(i))) return tensor(n->input(i));
      return floats(outName() + "/" + suffix, {channels}, std::vector<float>(size_t(channels), fill));
    };
    const std::string scale = param(1, "scale", 1.0f), bias = param(2, "bias", 0.0f);
    const std::string mean = param(3, "mean", 0.0f), var = param(4, "var", 1.0f);
    result(node("BatchNormalization", {x, scale, bias, mean, var}, {{"epsilon", eps}}));
  }

  void pool(torch::jit::Node* n, bool max, size_t sp) {
    const std::string x = tensor(n->input(0));
    const Shape kernel = intsArg(n->input(1), "kernel_size", sp);
    Shape stride = intsArg(n->input(2), "stride", sp);
    if (stride.empty()) stride = kernel;
    Shape pads = intsArg(n->input(3), "padding", sp);
    pads.insert(pads.end(), pads.begin(), pads.end());
    std::map<std::string, AttrValue> attrs = {{"kernel_shape", kernel}, {"strides", stride}, {"pads", pads}};
    if (max) {
      attrs["dilations"] = intsArg(n->input(4), "dilation", sp);
      attrs["ceil_mode"] = int64_t(boolArg(n->input(5), "ceil_mode"));
      return result(node("MaxPool", {x}, attrs));
    }
    attrs["ceil_mode"] = int64_t(boolArg(n->input(4), "ceil_mode"));
    attrs["count_include_pad"] = int64_t(boolArg(n->input(5), "count_include_pad"));
    if (n->inputs().size() > 6 && !isNone(n->input(6))) fail("divisor_override is not supported");
    result(node("AveragePool", {x}, attrs));
  }

  void adaptivePool(torch::jit::Node* n) {
    const std::string x = tensor(n->input(0));
    const Shape& s = shapeOf(x);
    if (s.size() < 3) fail("the input must have spatial axes");
    const size_t sp = s.size() - 2;
    const Shape out = intsArg(n->input(1), "output_size", sp);
    if (out.size() != sp) fail("output_size does not match the input");
    if (std::all_of(out.begin(), out.end(), [](int64_t o) { return o == 1; }))
      return result(node("GlobalAveragePool", {x}));
    Shape kernel;
    for (size_t d = 0; d < sp; ++d) {
      if (out[d] <= 0 || s[2 + d] % out[d]) fail("adaptive pooling to sizes that do not divide the input");
      kernel.push_back(s[2 + d] / out[d]);
    }
    result(node("AveragePool", {x}, {{"kernel_shape", kernel}, {"strides", kernel}}));
  }

  void flatten(torch::jit::Node* n) {
    const std::string x = tensor(n->input(0));
    const Shape& s = shapeOf(x);
    const int64_t rank = std::max<int64_t>(int64_t(s.size()), 1);
    const int64_t start = axis(n->inputs().size() > 1 ? intArg(n->input(1), "start_dim") : 0, rank);
    const int64_t end = axis(n->inputs().size() > 2 ? intArg(n->input(2), "end_dim") : -1, rank);
    if (start == 1 && end == rank - 1) return result(node("Flatten", {x}, {{"axis", int64_t(1)}}));
    Shape target(s.begin(), s.begin() + start);
    int64_t merged = 1;
    for (int64_t d = start; d <= end && d < int64_t(s.size()); ++d)
      merged *= s[size_t(d)];
    target.push_back(merged);
    if (end + 1 < int64_t(s.size())) target.insert(target.end(), s.begin() + end + 1, s.end());
    result(node("Reshape", {x, ints(outName() + "/shape", target)}));
  }

  // How a split's second argument is read.
  enum class SplitBy { SizeOrSizes, Chunks, TensorSplitChunks };

  void split(torch::jit::Node* n, SplitBy by) {
    const std::string x = tensor(n->input(0));
    const Shape& s = shapeOf(x);
    const int64_t dim = axis(n->inputs().size() > 2 ? intArg(n->input(2), "dim") : 0, int64_t(s.size()));
    const int64_t extent = s[size_t(dim)];
    Shape sizes;
    const c10::IValue& arg = constant(n->input(1), "split");
    if (by != SplitBy::SizeOrSizes) {
      if (!arg.isInt()) fail("only a number of chunks is supported");
      const int64_t chunks = arg.toInt();
      if (chunks <= 0) fail("the number of chunks must be positive");
      if (by == SplitBy::Chunks) {
        const int64_t size = (extent + chunks - 1) / chunks;
        for (int64_t at = 0; at < extent; at += size)
          sizes.push_back(std::min(size, extent - at));
      } else {
        for (int64_t i = 0; i < chunks; ++i)
          sizes.push_back(extent / chunks + (i < extent % chunks ? 1 : 0));
      }
    } else if (arg.isInt()) {
      const int64_t size = arg.toInt();
      if (size <= 0) fail("the split size must be positive");
      for (int64_t at = 0; at < extent; at += size)
        sizes.push_back(std::min(size, extent - at));
    } else {
      sizes = intsArg(n->input(1), "split_sizes");
    }
    const std::vector<std::string> outs =
        nodeN("Split", {x, ints(outName() + "/split", sizes)}, sizes.size(), {{"axis", dim}});
    Slot list;
    list.kind = Slot::Kind::List;
    for (const std::string& o : outs)
      list.items.push_back(tensorSlot(o));
    slots_[n->output()] = list;
  }
};

const std::map<std::string, Importer::AtenConverter>& Importer::atenConverters() {
  using I = Importer;
  using N = torch::jit::Node*;
  auto method = [](void (I::*m)(N)) -> AtenConverter { return [m](I& i, N n) { (i.*m)(n); }; };
  auto unaryOp = [](std::string onnx) -> AtenConverter { return [onnx](I& i, N n) { i.unary(n, onnx); }; };
  auto binaryOp = [](std::string onnx, bool division, bool orReduction) -> AtenConverter {
    return [=](I& i, N n) { i.binary(n, onnx, division, orReduction); };
  };
  auto poolOp = [](bool max, size_t spatial) -> AtenConverter { return [=](I& i, N n) { i.pool(n, max, spatial); }; };
  auto splitOp = [](SplitBy by) -> AtenConverter { return [by](I& i, N n) { i.split(n, by); }; };
  static const std::map<std::string, AtenConverter> table = {
      {"size", method(&I::sizeOf)},
      {"dim", method(&I::dimOf)},
      {"numel", method(&I::numelOf)},
      {"contiguous", method(&I::identity)},
      {"dropout", method(&I::identity)},
      {"feature_dropout", method(&I::identity)},
      {"alpha_dropout", method(&I::identity)},
      {"detach", method(&I::identity)},
      {"clone", method(&I::identity)},
      {"conv1d", [](I& i, N n) { i.conv(n, false); }},
      {"conv2d", [](I& i, N n) { i.conv(n, false); }},
      {"conv3d", [](I& i, N n) { i.conv(n, false); }},
      {"_convolution", [](I& i, N n) { i.conv(n, true); }},
      {"convolution", [](I& i, N n) { i.conv(n, true); }},
      {"linear", method(&I::linear)},
      {"matmul", method(&I::matmul)},
      {"mm", method(&I::matmul)},
      {"bmm", method(&I::matmul)},
      {"addmm", method(&I::addmm)},
      {"add", [](I& i, N n) { i.addSub(n, false, false); }},
      {"sub", [](I& i, N n) { i.addSub(n, true, false); }},
      {"rsub", [](I& i, N n) { i.addSub(n, true, true); }},
      {"mul", binaryOp("Mul", false, false)},
      {"div", binaryOp("Div", true, false)},
      {"pow", binaryOp("Pow", false, false)},
      {"maximum", binaryOp("Max", false, false)},
      {"minimum", binaryOp("Min", false, false)},
      {"max", binaryOp("Max", false, true)},
      {"min", binaryOp("Min", false, true)},
      {"relu", unaryOp("Relu")},
      {"sigmoid", unaryOp("Sigmoid")},
      {"tanh", unaryOp("Tanh")},
      {"erf", unaryOp("Erf")},
      {"sqrt", unaryOp("Sqrt")},
      {"exp", unaryOp("Exp")},
      {"neg", unaryOp("Neg")},
      {"abs", unaryOp("Abs")},
      {"reciprocal", unaryOp("Reciprocal")},
      {"rsqrt", method(&I::rsqrt)},
      {"gelu", method(&I::gelu)},
      {"softmax", method(&I::softmax)},
      {"hardtanh", [](I& i, N n) { i.clamp(n, 1, 2, false); }},
      {"clamp", [](I& i, N n) { i.clamp(n, 1, 2, false); }},
      {"clamp_min", [](I& i, N n) { i.clamp(n, 1, 0, false); }},
      {"clamp_max", [](I& i, N n) { i.clamp(n, 0, 1, false); }},
      {"relu6", [](I& i, N n) { i.clamp(n, 0, 0, true); }},
      {"layer_norm", method(&I::layerNorm)},
      {"batch_norm", method(&I::batchNorm)},
      {"max_pool1d", poolOp(true, 1)},
      {"max_pool2d", poolOp(true, 2)},
      {"max_pool3d", poolOp(true, 3)},
      {"avg_pool1d", poolOp(false, 1)},
      {"avg_pool2d", poolOp(false, 2)},
      {"avg_pool3d", poolOp(false, 3)},
      {"adaptive_avg_pool1d", method(&I::adaptivePool)},
      {"adaptive_avg_pool2d", method(&I::adaptivePool)},
      {"adaptive_avg_pool3d", method(&I::adaptivePool)},
      {"mean", method(&I::mean)},
      {"flatten", method(&I::flatten)},
      {"reshape", method(&I::reshape)},
      {"view", method(&I::reshape)},
      {"permute", method(&I::permute)},
      {"transpose", [](I& i, N n) { i.transpose(n, true); }},
      {"t", [](I& i, N n) { i.transpose(n, false); }},
      {"numpy_T", [](I& i, N n) { i.transpose(n, false); }},
      {"cat", [](I& i, N n) { i.concat(n, false); }},
      {"concat", [](I& i, N n) { i.concat(n, false); }},
      {"stack", [](I& i, N n) { i.concat(n, true); }},
      {"slice", method(&I::slice)},
      {"select", method(&I::select)},
      {"unsqueeze", method(&I::unsqueeze)},
      {"squeeze", method(&I::squeeze)},
      {"split", splitOp(SplitBy::SizeOrSizes)},
      {"split_with_sizes", splitOp(SplitBy::SizeOrSizes)},
      {"unsafe_split", splitOp(SplitBy::SizeOrSizes)},
      {"chunk", splitOp(SplitBy::Chunks)},
      {"tensor_split", splitOp(SplitBy::TensorSplitChunks)},
      {"embedding", method(&I::embedding)},
      {"silu", method(&I::silu)},
      {"hardswish", unaryOp("HardSwish")},
      {"hardsigmoid", method(&I::hardsigmoid)},
      {"pad", method(&I::pad)},
      {"roll", method(&I::roll)},
      {"new_zeros", method(&I::newZeros)},
      {"eq", [](I& i, N n) { i.compare(n, false); }},
      {"ne", [](I& i, N n) { i.compare(n, true); }},
      {"masked_fill", method(&I::maskedFill)},
      {"expand", method(&I::expand)},
      {"_native_multi_head_attention", method(&I::nativeMultiHeadAttention)},
      {"_transformer_encoder_layer_fwd", method(&I::transformerEncoderLayer)},
  };
  return table;
}

}  // namespace

bool torchscriptAvailable() {
  return true;
}

std::vector<std::string> torchscriptAtenOps() {
  std::vector<std::string> ops;
  for (const auto& [name, converter] : Importer::atenOps())
    ops.push_back(name);
  return ops;
}

graph::Graph importTorchScript(const std::string& path, const std::vector<std::vector<int64_t>>& inputShapes) {
  return Importer(path, inputShapes).run();
}

}  // namespace tessel::frontend
