// The model graph: ONNX-like nodes (op type, attributes, named input and
// output values), values with shape and dtype, and initializers (weights and
// constants). Frontends (ONNX, TorchScript, the zoo) produce it; fusion cuts
// it into tasks; the executor runs it. Op types and attribute names are
// ONNX's (opset 17 semantics), so one set of rules serves every frontend.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace tessel::graph {

// A problem in a graph: names the node and op where there is one.
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Something a model asks for that Tessel does not implement (an op, an
// attribute value, a form of an op): the conformance runner counts such
// cases as "unsupported", not "fail".
class UnsupportedError : public GraphError {
 public:
  using GraphError::GraphError;
};

enum class DType { Float32, Int64, Int32, Bool, Float64, Other };
const char* dtypeName(DType t);
// Bytes of one element (Other: 4, as Float32).
int64_t dtypeBytes(DType t);

struct ValueInfo {
  std::string name;
  std::vector<int64_t> shape;  // fully static after inferShapes()
  DType dtype = DType::Float32;
  int64_t numElements() const;
};

// A constant tensor. Zoo weights are not materialised until needed
// (bert_base has 110 M of them): `data` is empty and `seed` makes them.
struct Initializer {
  ValueInfo info;
  std::vector<float> data;    // Float32 values (row-major), when materialised
  std::vector<int64_t> ints;  // Int64 / Int32 / Bool values (shape inputs, indices)
  uint64_t seed = 0;          // for materialise(): deterministic random values
  float scale = 0.05f;        // materialise(): uniform in [-scale, scale]
  bool isInt() const { return info.dtype == DType::Int64 || info.dtype == DType::Int32 || info.dtype == DType::Bool; }
  bool hasData() const { return isInt() ? !ints.empty() || info.numElements() == 0 : !data.empty(); }
  void materialise();  // fills `data` from seed/scale if empty (Float32 only)
};

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

struct Node {
  std::string name;                  // unique in the graph
  std::string op;                    // ONNX op type: "Conv", "Gemm", "MatMul", "Relu", ...
  std::vector<std::string> inputs;   // value names; "" for an absent optional input
  std::vector<std::string> outputs;  // value names
  std::map<std::string, AttrValue> attrs;

  bool has(const std::string& attr) const { return attrs.count(attr) > 0; }
  // Typed attribute access with a default; a wrong type is a GraphError.
  int64_t attrInt(const std::string& attr, int64_t fallback) const;
  double attrFloat(const std::string& attr, double fallback) const;
  std::string attrString(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> attrInts(const std::string& attr, const std::vector<int64_t>& fallback = {}) const;
  std::vector<double> attrFloats(const std::string& attr, const std::vector<double>& fallback = {}) const;
  // "node 'conv1' (Conv)": for messages.
  std::string describe() const;
};

class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;           // topological order
  std::vector<ValueInfo> inputs;     // runtime inputs (not initializers)
  std::vector<std::string> outputs;  // value names
  std::map<std::string, Initializer> initializers;
  std::map<std::string, ValueInfo> values;  // every value's shape/dtype (inputs, initializers, node outputs)

  const ValueInfo& value(const std::string& name) const;  // GraphError if unknown
  bool isInitializer(const std::string& name) const { return initializers.count(name) > 0; }
  // Index of the node producing `value`, or -1 (graph input / initializer).
  int producer(const std::string& value) const;
  // Indices of the nodes reading `value`.
  std::vector<size_t> consumers(const std::string& value) const;
  // Whether a node other than `exceptNode`, or the graph's outputs, read
  // `value`: a pass that rewrites a value in place must leave it then.
  bool usedElsewhere(const std::string& value, size_t exceptNode) const;

  // What a frontend chose where the file was silent ("input 'x': symbolic
  // dimension 0 'batch' taken as 1"), for the user to see.
  std::vector<std::string> assumptions;
  // The parameters as the model file holds them, counted by the frontend
  // before load-time folding turned constant subgraphs into new constants;
  // -1: none recorded (parameterCount() counts the initializers).
  int64_t fileParameters = -1;
  // Elements of all Float32 initializers that nodes use (the model's
  // parameters), or fileParameters where the frontend recorded them.
  int64_t parameterCount() const;
  // 2 x multiply-adds of Conv, Gemm and MatMul: the convention of published
  // model FLOPs (ResNet-18: about 3.6 G). Needs inferShapes().
  double flops() const;
  // Checks names are unique, every input is defined before use, outputs exist.
  void validate() const;
};

// Shape and dtype of every node output, from the inputs and initializers.
// Throws GraphError naming the node for an unsupported op or bad shapes.
void inferShapes(Graph& g);
// Evaluates nodes whose inputs are all initializers (Shape, Constant,
// Reshape of constants, ...) into initializers; removes dead nodes.
void foldConstants(Graph& g);
// Merges BatchNormalization that follows a Conv into the conv's weights and
// bias (materialises the weights it touches).
void foldBatchNorm(Graph& g);
// LayerNorm written out as its formula (ReduceMean, Sub, Pow, ReduceMean,
// Add, Sqrt, Div, then Mul and Add by constants) over trailing axes, as
// exporters below opset 17 write it, becomes one LayerNormalization.
void fuseLayerNorm(Graph& g);
// Gemm(transB=1) with constant weights [N, K] becomes Gemm(transB=0) over the
// transposed constant [K, N] (a copy when other nodes read the original).
void pretransposeGemmWeights(Graph& g);

// `base`, or `base_N` when a value or initializer already has that name.
std::string uniqueInitializerName(const Graph& g, const std::string& base);

// The ONNX op types Tessel supports: those of the op registry (graph/op_registry.h).
const std::vector<std::string>& supportedOps();
bool isSupportedOp(const std::string& op);

}  // namespace tessel::graph
