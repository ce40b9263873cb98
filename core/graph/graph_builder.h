// A small helper to write graphs in code (the zoo, tests): named nodes with
// one output value named after the node, lazily seeded Float32 weights and
// Int64 constants.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace tessel::graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string graphName);

  std::string input(const std::string& name, std::vector<int64_t> shape, DType dtype = DType::Float32);
  // A Float32 weight with no data: materialise() draws uniform [-scale, scale]
  // from a seed derived from the graph and weight names.
  std::string weight(const std::string& name, std::vector<int64_t> shape, float scale);
  // He-uniform scale for a weight feeding `fanIn` inputs per output: keeps
  // activations of ReLU networks at a steady magnitude.
  static float heScale(int64_t fanIn);
  // A Float32 constant with data (e.g. BN running variance, which must be positive).
  std::string floats(const std::string& name, std::vector<int64_t> shape, std::vector<float> values);
  std::string scalar(const std::string& name, float value);
  std::string ints(const std::string& name, std::vector<int64_t> values);  // 1-D Int64
  std::string ints(const std::string& name, std::vector<int64_t> shape, std::vector<int64_t> values);

  // Adds node `name` of type `op`; its single output value is named `name`.
  std::string node(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                   std::map<std::string, AttrValue> attrs = {});
  // A node with several outputs, named "<name>:0", "<name>:1", ...
  std::vector<std::string> nodeN(const std::string& name, const std::string& op, std::vector<std::string> inputs,
                                 size_t outputs, std::map<std::string, AttrValue> attrs = {});

  void output(const std::string& value) { g_.outputs.push_back(value); }
  Graph& graph() { return g_; }
  // Validates, infers shapes and hands the graph over.
  Graph finish();

 private:
  Graph g_;
};

}  // namespace tessel::graph
