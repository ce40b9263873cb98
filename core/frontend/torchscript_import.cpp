// TorchScript import: torch::jit::load, eval, freeze (parameters become
// constants, methods are inlined, dropout goes), then each node of forward's
// graph becomes ONNX-style nodes. Non-tensor values (ints, lists, sizes: the
// input shapes are static, so aten::size is a constant) are evaluated here
// with the JIT's own operators; constant tensors become initializers.
//
// Compiled into tessel_reference (core/reference/CMakeLists.txt), not into
// tessel_frontend: it is one of the few sources that include LibTorch.
#include "frontend/torchscript_import.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/csrc/jit/api/module.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/passes/remove_mutation.h>
#include <torch/script.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <thread>

#include "frontend/attention_nodes.h"
#include "frontend/torchscript_importer.h"
#include "graph/graph_transfer.h"
#include "graph/shape_utils.h"
#include "support/input_file.h"

namespace tessel::frontend::torchscript {

graph::Graph Importer::run() {
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

torch::jit::Module Importer::load() {
  try {
    support::checkRegularFile(path_, "TorchScript file", support::defaultMaxInputBytes());
  } catch (const support::InputFileError& e) {
    throw GraphError(e.what());
  }
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

void Importer::addInputs(const torch::jit::Graph& jit) {
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
    throw GraphError(path_ + ": forward takes " + std::to_string(next) + " tensors, " + std::to_string(shapes_.size()) +
                     " input shapes are given");
}

void Importer::addOutput(const Slot& s) {
  if (s.kind == Slot::Kind::List || s.kind == Slot::Kind::Tuple) {
    for (const Slot& item : s.items)
      addOutput(item);
    return;
  }
  if (s.kind == Slot::Kind::Const && !s.value.isTensor())
    throw GraphError(path_ + ": forward returns a " + s.value.tagKind() + ", not a tensor");
  g_.outputs.push_back(tensorName(s));
}

// A list or tuple of constants as one constant.
c10::IValue Importer::constantList(const torch::jit::Node* n, const std::vector<Slot>& items) {
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
bool Importer::fold(torch::jit::Node* n) {
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

void Importer::convert(torch::jit::Node* n) {
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
void Importer::convertAten(torch::jit::Node* n, const std::string& op) {
  const auto& table = atenConverters();
  auto it = table.find(op);
  if (it == table.end()) unsupported();
  it->second(*this, n);
}

}  // namespace tessel::frontend::torchscript

namespace tessel::frontend {

using torchscript::Importer;

bool torchscriptAvailable() {
  return true;
}

std::vector<std::string> torchscriptAtenOps() {
  std::vector<std::string> ops;
  for (const auto& [name, converter] : Importer::atenOps())
    ops.push_back(name);
  return ops;
}

namespace {

// How long an import may take in its child (a large model: seconds).
constexpr auto kImportDeadline = std::chrono::minutes(10);

bool writeAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t w = ::write(fd, data, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    size -= size_t(w);
  }
  return true;
}

// The child: imports, then sends one kind byte and the graph or the message.
[[noreturn]] void importAndSend(int fd, const std::string& path, const std::vector<std::vector<int64_t>>& shapes) {
  const rlimit noCore{0, 0};
  ::setrlimit(RLIMIT_CORE, &noCore);
  char kind = 'G';
  std::string payload;
  try {
    payload = graph::encodeGraph(Importer(path, shapes).run());
  } catch (const graph::UnsupportedError& e) {
    kind = 'U', payload = e.what();
  } catch (const graph::GraphError& e) {
    kind = 'E', payload = e.what();
  } catch (const std::exception& e) {
    kind = 'X', payload = e.what();
  }
  _exit(writeAll(fd, &kind, 1) && writeAll(fd, payload.data(), payload.size()) ? 0 : 1);
}

std::string describeWaitStatus(int status) {
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status)) + ", " + strsignal(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

// LibTorch 1.13's loader trusts an archive's pickles: a damaged one can read
// uninitialised memory and corrupt its heap (tests/fuzz/fuzz_torchscript found
// one; whether it aborts depends on the address layout). So the whole import
// runs in a forked child, which sends the graph back (graph_transfer.h): a
// crash ends the child and is a clear error here, and this process never runs
// the loader.
graph::Graph importInAChild(const std::string& path, const std::vector<std::vector<int64_t>>& shapes) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw graph::GraphError(std::string("cannot import in a child: ") + strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw graph::GraphError(std::string("cannot import in a child: ") + strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    importAndSend(fds[1], path, shapes);
  }
  ::close(fds[1]);
  std::string message;
  const auto deadline = std::chrono::steady_clock::now() + kImportDeadline;
  bool timedOut = false;
  char buffer[1 << 16];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      if (std::chrono::steady_clock::now() < deadline) continue;
      timedOut = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    message.append(buffer, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timedOut) throw graph::GraphError("TorchScript file '" + path + "' did not import within 10 minutes");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || message.empty()) {
    throw graph::GraphError("TorchScript file '" + path + "' is damaged: LibTorch's loader crashed on it (" +
                            describeWaitStatus(status) + "), so Tessel did not import it");
  }
  const std::string payload = message.substr(1);
  switch (message[0]) {
    case 'G':
      return graph::decodeGraph(payload);
    case 'U':
      throw graph::UnsupportedError(payload);
    case 'E':
      throw graph::GraphError(payload);
    default:
      throw std::runtime_error(payload);
  }
}

}  // namespace

graph::Graph importTorchScript(const std::string& path, const std::vector<std::vector<int64_t>>& inputShapes) {
  return importInAChild(path, inputShapes);
}

}  // namespace tessel::frontend
