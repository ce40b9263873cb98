// TorchScript models (.pt saved by torch.jit.save) to Tessel graphs through
// LibTorch: torch::jit::load, inline, freeze, then each aten op of the
// forward graph becomes the equivalent ONNX-style node.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::frontend {

bool torchscriptAvailable();
// `inputShapes`: the shapes of forward()'s tensor arguments (TorchScript has
// no static shapes); GraphError naming the file, or the aten op and its
// source position when it cannot be converted.
// The aten ops the importer converts (without the "aten::"), sorted.
std::vector<std::string> torchscriptAtenOps();

graph::Graph importTorchScript(const std::string& path, const std::vector<std::vector<int64_t>>& inputShapes);

}  // namespace tessel::frontend
