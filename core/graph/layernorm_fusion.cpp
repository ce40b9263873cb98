// fuseLayerNorm(): exporters below opset 17 write LayerNorm as its formula
//   mean = ReduceMean(x); d = x - mean; var = ReduceMean(d ^ 2);
//   y = d / Sqrt(var + eps) [* gamma] [+ beta]
// over the trailing axes. That is one LayerNormalization: one reduction
// task instead of a chain the fusion has to cut, and the same task as the
// model's opset-17 export.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "graph/graph.h"
#include "graph/shape_utils.h"

namespace tessel::graph {

namespace {

// A pattern rewrite matches op names, as TVM's dataflow patterns do.
bool is(const Node& n, const std::string& op) {
  return n.op.compare(op) == 0;
}

class LayerNormMatcher {
 public:
  explicit LayerNormMatcher(Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (const std::string& o : g.nodes[i].outputs)
        producer_[o] = i;
      for (const std::string& in : g.nodes[i].inputs)
        ++uses_[in];
    }
    for (const std::string& o : g.outputs)
      ++uses_[o];
  }

  // Rewrites every match; true if any.
  bool run() {
    bool changed = false;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (is(g_.nodes[i], "ReduceMean")) changed |= tryAt(i);
    if (!changed) return false;
    std::vector<Node> kept;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_.count(i)) kept.push_back(std::move(g_.nodes[i]));
    g_.nodes = std::move(kept);
    return true;
  }

 private:
  Graph& g_;
  std::map<std::string, size_t> producer_, uses_;
  std::set<size_t> dead_;

  // The only node reading `v` with op `op`, and `v` read by nothing else.
  const Node* soleUser(const std::string& v, const std::string& op, size_t* index = nullptr) const {
    if (uses_.count(v) == 0 || uses_.at(v) != 1) return nullptr;
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!dead_.count(i) && std::count(g_.nodes[i].inputs.begin(), g_.nodes[i].inputs.end(), v)) {
        if (!is(g_.nodes[i], op)) return nullptr;
        if (index) *index = i;
        return &g_.nodes[i];
      }
    return nullptr;
  }

  // The value of a one-element float constant, if `v` is one.
  std::optional<float> scalar(const std::string& v) const {
    auto it = g_.initializers.find(v);
    if (it == g_.initializers.end() || it->second.isInt() || it->second.info.numElements() != 1 ||
        it->second.data.size() != 1)
      return std::nullopt;
    return it->second.data[0];
  }

  // The reduced axes of a ReduceMean, normalised; empty if not constant.
  std::vector<int64_t> axes(const Node& n, int64_t rank) const {
    std::vector<int64_t> a;
    if (n.has("axes"))
      a = n.attrInts("axes");
    else if (n.inputs.size() > 1 && g_.initializers.count(n.inputs[1]))
      a = g_.initializers.at(n.inputs[1]).ints;
    for (int64_t& x : a)
      x = x < 0 ? x + rank : x;
    std::sort(a.begin(), a.end());
    return a;
  }

  // The other operand of a binary node whose one operand is `v`.
  static std::string other(const Node& n, const std::string& v) {
    if (n.inputs.size() != 2) return "";
    return n.inputs[0] == v ? n.inputs[1] : n.inputs[1] == v ? n.inputs[0] : "";
  }

  bool tryAt(size_t meanIndex) {
    const Node& mean = g_.nodes[meanIndex];
    if (dead_.count(meanIndex) || mean.inputs.empty() || mean.attrInt("keepdims", 1) == 0) return false;
    const std::string x = mean.inputs[0];
    if (!g_.values.count(x) || g_.value(x).dtype != DType::Float32) return false;
    const int64_t rank = int64_t(g_.value(x).shape.size());
    const std::vector<int64_t> reduced = axes(mean, rank);
    if (reduced.empty()) return false;
    for (size_t k = 0; k < reduced.size(); ++k)  // the trailing axes
      if (reduced[k] != rank - int64_t(reduced.size()) + int64_t(k)) return false;
    // d = x - mean, read by the square and the division only.
    size_t subIndex = 0;
    const Node* sub = soleUser(mean.outputs[0], "Sub", &subIndex);
    if (!sub || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) return false;
    const std::string d = sub->outputs[0];
    if (uses_[d] != 2) return false;
    size_t powIndex = 0, divIndex = 0;
    const Node *pow = nullptr, *div = nullptr;
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (is(n, "Pow") && n.inputs.size() == 2 && n.inputs[0] == d) pow = &n, powIndex = i;
      if (is(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d) div = &n, divIndex = i;
    }
    if (!pow || !div || scalar(pow->inputs[1]) != 2.0f) return false;
    size_t varIndex = 0, addIndex = 0, sqrtIndex = 0;
    const Node* var = soleUser(pow->outputs[0], "ReduceMean", &varIndex);
    if (!var || axes(*var, rank) != reduced || var->attrInt("keepdims", 1) == 0) return false;
    const Node* addEps = soleUser(var->outputs[0], "Add", &addIndex);
    if (!addEps) return false;
    const std::optional<float> eps = scalar(other(*addEps, var->outputs[0]));
    if (!eps) return false;
    const Node* root = soleUser(addEps->outputs[0], "Sqrt", &sqrtIndex);
    if (!root || div->inputs[1] != root->outputs[0]) return false;
    // Optional scale and bias: constants of the normalised shape.
    const std::vector<int64_t> normalized(g_.value(x).shape.end() - long(reduced.size()), g_.value(x).shape.end());
    auto affine = [&](const std::string& v) {
      auto it = g_.initializers.find(v);
      return it != g_.initializers.end() && !it->second.isInt() &&
             broadcastShapes(g_.nodes[meanIndex], normalized, it->second.info.shape) == normalized;
    };
    std::vector<size_t> pattern = {meanIndex, subIndex, powIndex, varIndex, addIndex, sqrtIndex, divIndex};
    std::string y = div->outputs[0], gamma, beta;
    size_t mulIndex = 0, biasIndex = 0;
    if (const Node* mul = soleUser(y, "Mul", &mulIndex); mul && affine(other(*mul, y))) {
      gamma = other(*mul, y);
      pattern.push_back(mulIndex);
      y = mul->outputs[0];
      if (const Node* add = soleUser(y, "Add", &biasIndex); add && affine(other(*add, y))) {
        beta = other(*add, y);
        pattern.push_back(biasIndex);
        y = add->outputs[0];
      }
    }
    if (gamma.empty()) {
      gamma = uniqueInitializerName(g_, mean.name + "_scale");
      Initializer ones;
      ones.info = ValueInfo{gamma, normalized, DType::Float32};
      ones.data.assign(size_t(ones.info.numElements()), 1.0f);
      g_.initializers[gamma] = ones;
    }
    // The last node of the pattern becomes the LayerNormalization.
    const size_t last = *std::max_element(pattern.begin(), pattern.end());
    Node ln;
    ln.name = g_.nodes[last].name + "_layernorm";
    ln.op = "LayerNormalization";
    ln.inputs = {x, gamma};
    if (!beta.empty()) ln.inputs.push_back(beta);
    ln.outputs = {y};
    ln.attrs = {{"axis", -int64_t(reduced.size())}, {"epsilon", double(*eps)}};
    g_.nodes[last] = ln;
    for (size_t i : pattern)
      if (i != last) dead_.insert(i);
    return true;
  }
};

}  // namespace

void fuseLayerNorm(Graph& g) {
  if (LayerNormMatcher(g).run()) inferShapes(g);
}

}  // namespace tessel::graph
