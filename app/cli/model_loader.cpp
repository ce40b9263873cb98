#include "model_loader.h"

#include <filesystem>

#include "args.h"
#include "frontend/torchscript_import.h"
#include "graph/zoo.h"
#include "search/search_task.h"
#ifdef TESSEL_HAVE_ONNX
#include "frontend/onnx_import.h"
#endif

namespace tessel::cli {

void bindIntegerInputs(graph::Graph& g) {
  for (auto it = g.inputs.begin(); it != g.inputs.end();) {
    if (it->dtype == graph::DType::Float32) {
      ++it;
      continue;
    }
    graph::Initializer init;
    init.info = *it;
    init.ints.resize(size_t(it->numElements()));
    for (size_t i = 0; i < init.ints.size(); ++i)
      init.ints[i] = int64_t((i * 7919) % 1000);
    g.initializers[it->name] = init;
    it = g.inputs.erase(it);
  }
}

graph::Graph loadModel(const std::string& model, const std::string& inputShapes) {
  if (graph::isZooModel(model)) return graph::makeZooModel(model);
  const std::string ext = std::filesystem::path(model).extension().string();
  if (ext == ".onnx") {
#ifdef TESSEL_HAVE_ONNX
    return frontend::importOnnx(model);
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
    std::vector<std::vector<int64_t>> shapes;
    size_t start = 0;
    while (start <= inputShapes.size()) {
      size_t end = inputShapes.find(';', start);
      if (end == std::string::npos) end = inputShapes.size();
      shapes.push_back(parseShape(inputShapes.substr(start, end - start)));
      start = end + 1;
    }
    return frontend::importTorchScript(model, shapes);
  }
  std::string known;
  for (const graph::ZooEntry& m : graph::zooModels())
    known += (known.empty() ? "" : ", ") + m.name;
  throw graph::GraphError("unknown model '" + model + "': give a zoo name (" + known + "), a .onnx or a .pt file");
}

PreparedModel prepareModel(const Args& args, const std::string& target) {
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "missing MODEL (try --help)"
                                               : "expected one MODEL, got '" + args.positional()[1] + "' too");
  const std::string fusion = args.get("fusion", "dp");
  if (fusion != "rule" && fusion != "dp" && fusion != "none")
    throw UsageError("unknown --fusion " + fusion + " (available: rule, dp, none)");
  return prepareModel(args.positional()[0], args.get("input-shapes"), fusion, target);
}

PreparedModel prepareModel(const std::string& model, const std::string& inputShapes, const std::string& fusion,
                           const std::string& target) {
  PreparedModel m;
  m.name = model;
  m.fusion = fusion;
  m.graph = loadModel(m.name, inputShapes);
  m.params = m.graph.parameterCount();
  m.flops = m.graph.flops();
  m.nodes = m.graph.nodes.size();
  bindIntegerInputs(m.graph);
  graph::foldConstants(m.graph);
  graph::foldBatchNorm(m.graph);
  m.plan = fusion::makeFusionPlan(m.graph, m.fusion);
  m.lowering.imageLayout = te::parseLayout(search::defaultLayout(target));
  m.tasks = fusion::extractTasks(m.graph, m.plan, m.lowering);
  return m;
}

}  // namespace tessel::cli
