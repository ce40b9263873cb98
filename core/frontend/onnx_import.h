// ONNX models to Tessel graphs through the ONNX library's protobuf classes
// (Debian libonnx-dev), opsets 11-17.
#pragma once

#include <string>

#include "graph/graph.h"
#include "runtime/graph_executor.h"

namespace tessel::frontend {

// Reads a .onnx file, checks every op is supported (GraphError naming the op
// and node otherwise), converts initializers and attributes, infers shapes.
// A missing, unreadable or malformed file is a GraphError naming the file.
// `inputShapes`: the shapes of the graph's inputs, in order (none: as the
// file gives them). They size symbolic dimensions (a dynamic batch); a given
// dimension must equal the file's static one. Symbolic dimensions without a
// given shape are taken as 1, noted in Graph::assumptions.
graph::Graph importOnnx(const std::string& path, const std::vector<std::vector<int64_t>>& inputShapes = {});
// The same from bytes in memory (`what` names them in messages).
graph::Graph importOnnxBytes(const std::string& bytes, const std::string& what);

// The first default-domain opset whose form of `op` Tessel reads (up to 17).
int onnxMinOpset(const std::string& op);

// A serialised onnx.TensorProto (the test_data_set_*/input_*.pb files).
struct LoadedTensor {
  std::string name;
  graph::DType dtype = graph::DType::Float32;
  std::vector<int64_t> shape;
  std::vector<float> floats;  // for Float32 (and Float64, converted)
  std::vector<int64_t> ints;  // for integer and bool types
};
LoadedTensor loadTensorProto(const std::string& path);

}  // namespace tessel::frontend
