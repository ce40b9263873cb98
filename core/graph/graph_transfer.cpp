#include "graph/graph_transfer.h"

#include <cstring>
#include <nlohmann/json.hpp>

namespace tessel::graph {

namespace {

using json = nlohmann::json;

template <typename T>
json binaryOf(const std::vector<T>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return json::binary(std::move(bytes));
}

template <typename T>
std::vector<T> vectorOf(const json& j) {
  const auto& bytes = j.get_binary();
  if (bytes.size() % sizeof(T) != 0) throw GraphError("encoded graph: a tensor's bytes are not whole elements");
  std::vector<T> v(bytes.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

json valueOf(const ValueInfo& v) {
  return json{{"name", v.name}, {"shape", v.shape}, {"dtype", int(v.dtype)}};
}

ValueInfo valueInfo(const json& j) {
  ValueInfo v;
  v.name = j.at("name").get<std::string>();
  v.shape = j.at("shape").get<std::vector<int64_t>>();
  const int dtype = j.at("dtype").get<int>();
  if (dtype < 0 || dtype > int(DType::Other)) throw GraphError("encoded graph: unknown dtype");
  v.dtype = DType(dtype);
  return v;
}

// Attribute values keep their alternative: [index, value].
json attrOf(const AttrValue& a) {
  return std::visit([&](const auto& v) { return json::array({int(a.index()), v}); }, a);
}

AttrValue attrValue(const json& j) {
  switch (j.at(0).get<int>()) {
    case 0:
      return j.at(1).get<int64_t>();
    case 1:
      return j.at(1).get<double>();
    case 2:
      return j.at(1).get<std::string>();
    case 3:
      return j.at(1).get<std::vector<int64_t>>();
    case 4:
      return j.at(1).get<std::vector<double>>();
  }
  throw GraphError("encoded graph: unknown attribute type");
}

}  // namespace

std::string encodeGraph(const Graph& g) {
  json nodes = json::array();
  for (const Node& n : g.nodes) {
    json attrs = json::object();
    for (const auto& [name, value] : n.attrs)
      attrs[name] = attrOf(value);
    nodes.push_back({{"name", n.name}, {"op", n.op}, {"inputs", n.inputs}, {"outputs", n.outputs}, {"attrs", attrs}});
  }
  json inputs = json::array();
  for (const ValueInfo& v : g.inputs)
    inputs.push_back(valueOf(v));
  json initializers = json::array();
  for (const auto& [name, t] : g.initializers)
    initializers.push_back({{"info", valueOf(t.info)},
                            {"data", binaryOf(t.data)},
                            {"ints", binaryOf(t.ints)},
                            {"seed", t.seed},
                            {"scale", t.scale}});
  json values = json::array();
  for (const auto& [name, v] : g.values)
    values.push_back(valueOf(v));
  const json j = {{"name", g.name},
                  {"nodes", nodes},
                  {"inputs", inputs},
                  {"outputs", g.outputs},
                  {"initializers", initializers},
                  {"values", values},
                  {"assumptions", g.assumptions},
                  {"fileParameters", g.fileParameters}};
  const std::vector<uint8_t> bytes = json::to_cbor(j);
  return std::string(bytes.begin(), bytes.end());
}

Graph decodeGraph(const std::string& bytes) {
  try {
    const json j = json::from_cbor(bytes);
    Graph g;
    g.name = j.at("name").get<std::string>();
    for (const json& n : j.at("nodes")) {
      Node node;
      node.name = n.at("name").get<std::string>();
      node.op = n.at("op").get<std::string>();
      node.inputs = n.at("inputs").get<std::vector<std::string>>();
      node.outputs = n.at("outputs").get<std::vector<std::string>>();
      for (const auto& [name, value] : n.at("attrs").items())
        node.attrs[name] = attrValue(value);
      g.nodes.push_back(std::move(node));
    }
    for (const json& v : j.at("inputs"))
      g.inputs.push_back(valueInfo(v));
    g.outputs = j.at("outputs").get<std::vector<std::string>>();
    for (const json& t : j.at("initializers")) {
      Initializer init;
      init.info = valueInfo(t.at("info"));
      init.data = vectorOf<float>(t.at("data"));
      init.ints = vectorOf<int64_t>(t.at("ints"));
      init.seed = t.at("seed").get<uint64_t>();
      init.scale = t.at("scale").get<float>();
      g.initializers[init.info.name] = std::move(init);
    }
    for (const json& v : j.at("values")) {
      ValueInfo info = valueInfo(v);
      g.values[info.name] = std::move(info);
    }
    g.assumptions = j.at("assumptions").get<std::vector<std::string>>();
    g.fileParameters = j.at("fileParameters").get<int64_t>();
    return g;
  } catch (const json::exception& e) {
    throw GraphError(std::string("encoded graph: ") + e.what());
  }
}

}  // namespace tessel::graph
