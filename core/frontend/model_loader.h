// MODEL arguments as the CLI and the studio take them: a zoo name, a .onnx
// file or a TorchScript .pt; and the road from a model to its tasks (integer
// inputs bound, constants and batch norms folded, fused, cut into tasks).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fusion/fusion_plan.h"
#include "fusion/task_extraction.h"
#include "graph/graph.h"

namespace tessel::frontend {

// The graph with shapes inferred; throws graph::GraphError naming the problem.
// `inputShapes` ("1,3,224,224;1,16") gives the shapes of a TorchScript
// model's forward() arguments, which TorchScript does not record.
graph::Graph loadModel(const std::string& model, const std::string& inputShapes = "");

// Whether MODEL is a file whose input shapes --input-shapes may give (a .onnx
// sizing its symbolic dimensions, a .pt), and whether it must (a .pt: its
// forward() arguments carry no shapes).
bool takesInputShapes(const std::string& model);
bool needsInputShapes(const std::string& model);
// "1,3,224,224;1,16": a graph's input shapes as --input-shapes takes them.
std::string inputShapesText(const graph::Graph& g);

// Integer graph inputs (BERT's token ids) become constants: kernels index
// tables with them, and a tuned task is specialised to its shapes, not to its
// token values. `values` gives an input's values (a user's, by input name);
// the others get ids 0..999 in a fixed pattern. GraphError for values that do
// not fit the input's shape.
using IntegerInputs = std::map<std::string, std::vector<int64_t>>;
void bindIntegerInputs(graph::Graph& g, const IntegerInputs& values = {});

struct PreparedModel {
  std::string name;
  graph::Graph graph;       // integer inputs bound, constants and batch norms folded
  int64_t params = 0;       // of the model as loaded
  std::string inputShapes;  // of the model as loaded, integer inputs too ("1,3,224,224;1,16")
  double flops = 0;
  size_t nodes = 0;
  std::string fusion;
  fusion::FusionPlan plan;
  graph::LoweringOptions lowering;
  std::vector<fusion::GraphTask> tasks;
};
// fusion: rule | dp | none; target decides the layout of image tasks.
PreparedModel prepareModel(const std::string& model, const std::string& inputShapes, const std::string& fusion,
                           const target::Target& target);
// The same for a graph loaded already (loadModel), named `name`.
PreparedModel prepareModel(graph::Graph loaded, const std::string& name, const std::string& fusion,
                           const target::Target& target, const IntegerInputs& integerInputs = {});

}  // namespace tessel::frontend
