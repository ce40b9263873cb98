#include "graph/graph_builder.h"

#include <algorithm>
#include <cmath>

#include "support/hash.h"

namespace tessel::graph {

GraphBuilder::GraphBuilder(std::string graphName) {
  g_.name = std::move(graphName);
}

std::string GraphBuilder::input(const std::string& name, std::vector<int64_t> shape, DType dtype) {
  g_.inputs.push_back(ValueInfo{name, std::move(shape), dtype});
  return name;
}

std::string GraphBuilder::weight(const std::string& name, std::vector<int64_t> shape, float scale) {
  Initializer& init = g_.initializers[name];
  init.info = ValueInfo{name, std::move(shape), DType::Float32};
  init.seed = support::fnv1a(g_.name + "/" + name, support::kStableKeyBasis);
  init.scale = scale;
  return name;
}

float GraphBuilder::heScale(int64_t fanIn) {
  return float(std::sqrt(6.0 / double(std::max<int64_t>(fanIn, 1))));
}

std::string GraphBuilder::floats(const std::string& name, std::vector<int64_t> shape, std::vector<float> values) {
  Initializer& init = g_.initializers[name];
  init.info = ValueInfo{name, std::move(shape), DType::Float32};
  init.data = std::move(values);
  if (int64_t(init.data.size()) != init.info.numElements())
    throw GraphError("initializer '" + name + "': " + std::to_string(init.data.size()) + " values for " +
                     std::to_string(init.info.numElements()) + " elements");
  return name;
}

std::string GraphBuilder::scalar(const std::string& name, float value) {
  return floats(name, {}, {value});
}

std::string GraphBuilder::ints(const std::string& name, std::vector<int64_t> values) {
  int64_t n = int64_t(values.size());
  return ints(name, {n}, std::move(values));
}

std::string GraphBuilder::ints(const std::string& name, std::vector<int64_t> shape, std::vector<int64_t> values) {
  Initializer& init = g_.initializers[name];
  init.info = ValueInfo{name, std::move(shape), DType::Int64};
  init.ints = std::move(values);
  if (int64_t(init.ints.size()) != init.info.numElements())
    throw GraphError("initializer '" + name + "': " + std::to_string(init.ints.size()) + " values for " +
                     std::to_string(init.info.numElements()) + " elements");
  return name;
}

std::string GraphBuilder::node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                               std::map<std::string, AttrValue> attrs) {
  g_.nodes.push_back(Node{name, op, std::move(inputs), {name}, std::move(attrs)});
  return name;
}

std::vector<std::string> GraphBuilder::nodeN(const std::string& name, const std::string& op,
                                             std::vector<std::string> inputs, size_t outputs,
                                             std::map<std::string, AttrValue> attrs) {
  std::vector<std::string> outs;
  for (size_t i = 0; i < outputs; ++i)
    outs.push_back(name + ":" + std::to_string(i));
  g_.nodes.push_back(Node{name, op, std::move(inputs), outs, std::move(attrs)});
  return outs;
}

Graph GraphBuilder::finish() {
  g_.validate();
  inferShapes(g_);
  return std::move(g_);
}

}  // namespace tessel::graph
