#include "frontend/model_loader.h"

#include <filesystem>

#include "frontend/torchscript_import.h"
#include "graph/shape_utils.h"
#include "graph/zoo.h"
#include "support/input_file.h"
#include "support/size_limits.h"
#include "task/search_task.h"
#ifdef TESSEL_HAVE_ONNX
#include "frontend/onnx_import.h"
#endif

namespace tessel::frontend {

namespace {

// "1,3,224,224" -> {1, 3, 224, 224}; GraphError naming a bad part.
std::vector<int64_t> parseShapeList(const std::string& text) {
  std::vector<int64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string part = text.substr(start, end - start);
    try {
      size_t used = 0;
      long long v = std::stoll(part, &used);
      if (used != part.size() || v <= 0) throw std::invalid_argument(part);
      out.push_back(v);
    } catch (const std::exception&) {
      throw graph::GraphError("bad input shape '" + text + "': '" + part + "' is not a positive integer");
    }
    if (out.back() > support::kMaxTensorElements)
      throw graph::GraphError("bad input shape '" + text + "': " + part + " is " + support::tooLongText());
    start = end + 1;
  }
  return out;
}

}  // namespace

void bindIntegerInputs(graph::Graph& g, const IntegerInputs& values) {
  for (auto it = g.inputs.begin(); it != g.inputs.end();) {
    if (it->dtype == graph::DType::Float32) {
      ++it;
      continue;
    }
    graph::Initializer init;
    init.info = *it;
    if (auto v = values.find(it->name); v != values.end()) {
      if (int64_t(v->second.size()) != it->numElements())
        throw graph::GraphError("input '" + it->name + "' takes " + std::to_string(it->numElements()) +
                                " values (shape " + graph::shapeString(it->shape) + "), " +
                                std::to_string(v->second.size()) + " were given");
      init.ints = v->second;
    } else {
      init.ints.resize(size_t(it->numElements()));
      for (size_t i = 0; i < init.ints.size(); ++i)
        init.ints[i] = int64_t((i * 7919) % 1000);
    }
    g.initializers[it->name] = init;
    it = g.inputs.erase(it);
  }
}

graph::Graph loadModel(const std::string& model, const std::string& inputShapes) {
  if (graph::isZooModel(model)) {
    if (!inputShapes.empty())
      throw graph::GraphError("the zoo model " + model +
                              " has fixed input shapes; --input-shapes is for .onnx and .pt files");
    return graph::makeZooModel(model);
  }
  const std::string ext = std::filesystem::path(model).extension().string();
  // Whatever its name: a folder, a FIFO or a device is refused before it is read.
  if (const std::string kind = support::notARegularFile(model); !kind.empty() && kind != "does not exist")
    throw graph::GraphError("model '" + model + "' " + kind);
  std::vector<std::vector<int64_t>> shapes;
  size_t start = 0;
  while (!inputShapes.empty() && start <= inputShapes.size()) {
    size_t end = inputShapes.find(';', start);
    if (end == std::string::npos) end = inputShapes.size();
    shapes.push_back(parseShapeList(inputShapes.substr(start, end - start)));
    start = end + 1;
  }
  if (ext == ".onnx") {
#ifdef TESSEL_HAVE_ONNX
    return frontend::importOnnx(model, shapes);
#else
    throw graph::GraphError("this build has no ONNX support (libonnx-dev was missing): cannot read " + model);
#endif
  }
  if (ext == ".pt" || ext == ".pth") {
    if (!frontend::torchscriptAvailable())
      throw graph::GraphError("this build has no LibTorch: cannot read the TorchScript model " + model);
    if (inputShapes.empty())
      throw graph::GraphError("a TorchScript model needs --input-shapes (e.g. 1,3,224,224): " + model +
                              " does not record the shapes of its inputs");
    return frontend::importTorchScript(model, shapes);
  }
  std::string known;
  for (const graph::ZooEntry& m : graph::zooModels())
    known += (known.empty() ? "" : ", ") + m.name;
  throw graph::GraphError("unknown model '" + model + "': give a zoo name (" + known + "), a .onnx or a .pt file");
}

bool takesInputShapes(const std::string& model) {
  if (graph::isZooModel(model)) return false;
  const std::string ext = std::filesystem::path(model).extension().string();
  return ext == ".onnx" || needsInputShapes(model);
}

bool needsInputShapes(const std::string& model) {
  if (graph::isZooModel(model)) return false;
  const std::string ext = std::filesystem::path(model).extension().string();
  return ext == ".pt" || ext == ".pth";
}

std::string inputShapesText(const graph::Graph& g) {
  std::string out;
  for (const graph::ValueInfo& in : g.inputs) {
    if (!out.empty()) out += ';';
    for (size_t i = 0; i < in.shape.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(in.shape[i]);
    }
  }
  return out;
}

PreparedModel prepareModel(const std::string& model, const std::string& inputShapes, const std::string& fusion,
                           const target::Target& target) {
  return prepareModel(loadModel(model, inputShapes), model, fusion, target);
}

PreparedModel prepareModel(graph::Graph loaded, const std::string& name, const std::string& fusion,
                           const target::Target& target, const IntegerInputs& integerInputs) {
  PreparedModel m;
  m.name = name;
  m.fusion = fusion;
  m.graph = std::move(loaded);
  m.params = m.graph.parameterCount();
  m.inputShapes = inputShapesText(m.graph);
  m.flops = m.graph.flops();
  m.nodes = m.graph.nodes.size();
  bindIntegerInputs(m.graph, integerInputs);
  graph::foldConstants(m.graph);
  graph::foldBatchNorm(m.graph);
  graph::pretransposeGemmWeights(m.graph);
  m.plan = fusion::makeFusionPlan(m.graph, m.fusion);
  m.lowering.imageLayout = te::parseLayout(task::defaultLayout(target));
  m.tasks = fusion::extractTasks(m.graph, m.plan, m.lowering);
  return m;
}

}  // namespace tessel::frontend
