// The ONNX importer's knobs, for the conformance runner and tests (users call
// importOnnx / importOnnxBytes of onnx_import.h, which use the defaults).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::frontend {

// Something the model asks for that Tessel does not implement (an op, a
// domain, an opset, a dtype, an attribute value, a non-tensor value).
using graph::UnsupportedError;

struct ImportOptions {
  // The accepted default-domain opsets. Users: 11..17 (the spec's range).
  // Conformance: 1..17, because the ONNX test suite keeps some cases at the
  // opset that introduced their op; there every node must also be at or
  // above the first opset whose semantics are Tessel's (opset 17's), after
  // the importer's upgrades of older forms (attributes that became inputs,
  // Softmax's 2-D coercion). Anything else is an UnsupportedError naming the
  // op and opset.
  int minOpset = 11;
  int maxOpset = 17;
  // The shapes of the graph's inputs, in order (see importOnnx).
  std::vector<std::vector<int64_t>> inputShapes;
  // Called on the converted graph before shape inference (the conformance
  // runner turns integer inputs into initializers there).
  std::function<void(graph::Graph&)> beforeShapes;
  // Run graph::inferShapes and Graph::validate at the end (Softmax of
  // opsets < 13 is only made explicit then: leave it on for such models).
  bool inferShapes = true;
};

graph::Graph importOnnxBytes(const std::string& bytes, const std::string& what, const ImportOptions& options);

}  // namespace tessel::frontend
