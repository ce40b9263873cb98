#include "graph/graph.h"

#include <algorithm>
#include <random>
#include <set>

#include "graph/op_registry.h"

namespace tessel::graph {

const char* dtypeName(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::Int64:
      return "int64";
    case DType::Int32:
      return "int32";
    case DType::Bool:
      return "bool";
    case DType::Float64:
      return "float64";
    case DType::Other:
      break;
  }
  return "other";
}

int64_t dtypeBytes(DType t) {
  switch (t) {
    case DType::Int64:
    case DType::Float64:
      return 8;
    case DType::Bool:
      return 1;
    default:
      return 4;
  }
}

int64_t ValueInfo::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void Initializer::materialise() {
  if (info.dtype != DType::Float32 || !data.empty()) return;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  data.resize(size_t(info.numElements()));
  for (float& x : data)
    x = u(rng);
}

std::string uniqueInitializerName(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int i = 1; g.initializers.count(name) || g.values.count(name); ++i)
    name = base + "_" + std::to_string(i);
  return name;
}

namespace {

template <typename T>
const T* attrAs(const Node& n, const std::string& attr, const char* want) {
  auto it = n.attrs.find(attr);
  if (it == n.attrs.end()) return nullptr;
  const T* v = std::get_if<T>(&it->second);
  if (!v) throw GraphError(n.describe() + ": attribute '" + attr + "' is not " + want);
  return v;
}

}  // namespace

int64_t Node::attrInt(const std::string& attr, int64_t fallback) const {
  const int64_t* v = attrAs<int64_t>(*this, attr, "an integer");
  return v ? *v : fallback;
}

double Node::attrFloat(const std::string& attr, double fallback) const {
  auto it = attrs.find(attr);
  if (it != attrs.end())
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return double(*i);
  const double* v = attrAs<double>(*this, attr, "a float");
  return v ? *v : fallback;
}

std::string Node::attrString(const std::string& attr, const std::string& fallback) const {
  const std::string* v = attrAs<std::string>(*this, attr, "a string");
  return v ? *v : fallback;
}

std::vector<int64_t> Node::attrInts(const std::string& attr, const std::vector<int64_t>& fallback) const {
  const std::vector<int64_t>* v = attrAs<std::vector<int64_t>>(*this, attr, "a list of integers");
  return v ? *v : fallback;
}

std::vector<double> Node::attrFloats(const std::string& attr, const std::vector<double>& fallback) const {
  const std::vector<double>* v = attrAs<std::vector<double>>(*this, attr, "a list of floats");
  return v ? *v : fallback;
}

std::string Node::describe() const {
  return "node '" + name + "' (" + op + ")";
}

const ValueInfo& Graph::value(const std::string& n) const {
  auto it = values.find(n);
  if (it == values.end()) throw GraphError("unknown value '" + n + "' in graph " + name);
  return it->second;
}

int Graph::producer(const std::string& v) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& o : nodes[i].outputs)
      if (o == v) return int(i);
  return -1;
}

std::vector<size_t> Graph::consumers(const std::string& v) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (std::find(nodes[i].inputs.begin(), nodes[i].inputs.end(), v) != nodes[i].inputs.end()) out.push_back(i);
  return out;
}

bool Graph::usedElsewhere(const std::string& v, size_t exceptNode) const {
  for (size_t i : consumers(v))
    if (i != exceptNode) return true;
  return std::find(outputs.begin(), outputs.end(), v) != outputs.end();
}

// Counts as the frameworks do (torchvision, Hugging Face): learned weights
// only. Two kinds of Float32 initializer are not parameters:
//  - BatchNormalization's running mean and variance (inputs 3 and 4) are
//    buffers, not parameters (ResNet-18's 11,689,512 counts BN scale and bias
//    but not the running statistics), so an initializer read only there is
//    skipped;
//  - single-element constants (the 1/sqrt(d) of attention, Clip's bounds,
//    Pow's exponent in exported graphs) are constants, not weights.
int64_t Graph::parameterCount() const {
  if (fileParameters >= 0) return fileParameters;
  std::set<std::string> usedAsWeight;
  for (const Node& n : nodes) {
    const OpDef* d = findOp(n.op);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const bool buffer = d && std::count(d->bufferInputs.begin(), d->bufferInputs.end(), i);
      if (!buffer) usedAsWeight.insert(n.inputs[i]);
    }
  }
  int64_t total = 0;
  for (const auto& [k, init] : initializers)
    if (init.info.dtype == DType::Float32 && usedAsWeight.count(k) && init.info.numElements() > 1)
      total += init.info.numElements();
  return total;
}

double Graph::flops() const {
  double total = 0;
  for (const Node& n : nodes) {
    if (n.outputs.empty() || !values.count(n.outputs[0])) continue;
    if (const OpDef* d = findOp(n.op); d && d->macFlops) total += d->macFlops(*this, n);
  }
  return total;
}

void Graph::validate() const {
  std::set<std::string> defined, nodeNames;
  for (const ValueInfo& v : inputs)
    defined.insert(v.name);
  for (const auto& [k, init] : initializers)
    defined.insert(k);
  for (const Node& n : nodes) {
    if (!nodeNames.insert(n.name).second) throw GraphError("two nodes are named '" + n.name + "'");
    for (const std::string& in : n.inputs)
      if (!in.empty() && !defined.count(in))
        throw GraphError(n.describe() + ": input '" + in + "' is not defined before it");
    for (const std::string& o : n.outputs)
      if (!defined.insert(o).second) throw GraphError(n.describe() + ": value '" + o + "' is defined twice");
  }
  for (const std::string& o : outputs)
    if (!defined.count(o)) throw GraphError("graph output '" + o + "' is not produced by any node");
}

const std::vector<std::string>& supportedOps() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const OpDef& d : ops())
      v.push_back(d.name);
    return v;
  }();
  return names;
}

bool isSupportedOp(const std::string& op) {
  return findOp(op) != nullptr;
}

}  // namespace tessel::graph
