// The lowering of graph nodes to tensor expressions, shared by the files that
// implement it: te_lowering.cpp (values, placeholders, outputs and the rule
// table), te_lowering_nn.cpp (convolution, matmul, pooling, normalisation and
// reductions) and te_lowering_data.cpp (element-wise ops and data movement).
// Internal to core/graph/; the interface is te_lowering.h.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "graph/shape_utils.h"
#include "graph/te_lowering.h"

namespace tessel::graph {

namespace lowering {

using te::Expr;
using te::floatImm;
using te::Indices;
using te::intImm;
using te::ReduceKind;
using te::Tensor;

using Perm = std::vector<size_t>;  // storage dim d holds logical dim perm[d]; empty: identity
inline const Perm kNHWC = {0, 2, 3, 1};
inline const Perm kRSCK = {2, 3, 1, 0};

// A graph value inside the DAG: the tensor storing it and how its logical
// (graph) index maps to the storage index. Scalars are stored as [1].
struct Val {
  Tensor t;
  std::vector<int64_t> shape;  // logical
  Perm perm;
  Expr at(const Indices& logical) const {
    if (shape.empty()) return t({intImm(0)});
    if (perm.empty()) return t(logical);
    Indices s;
    for (size_t p : perm)
      s.push_back(logical[p]);
    return t(s);
  }
};

inline std::vector<int64_t> storageShape(const std::vector<int64_t>& shape, const Perm& perm) {
  if (shape.empty()) return {1};
  if (perm.empty()) return shape;
  std::vector<int64_t> s;
  for (size_t p : perm)
    s.push_back(shape[p]);
  return s;
}

inline Indices toLogical(const Indices& storage, const Perm& perm, size_t rank) {
  if (rank == 0) return {};
  if (perm.empty()) return storage;
  Indices l(rank);
  for (size_t d = 0; d < perm.size(); ++d)
    l[perm[d]] = storage[d];
  return l;
}

inline int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

inline Expr minI(const Expr& a, const Expr& b) {
  return te::select(a < b, a, b);
}
inline Expr maxI(const Expr& a, const Expr& b) {
  return te::select(a > b, a, b);
}

}  // namespace lowering

// Lowers a group of nodes; the per-op rules are its public methods, attached
// to the ops in the registry (attachLoweringRules below).
class TeLowerer {
  using Expr = te::Expr;
  using Indices = te::Indices;
  using ReduceKind = te::ReduceKind;
  using Tensor = te::Tensor;
  using Perm = lowering::Perm;
  using Val = lowering::Val;

  friend void attachLoweringRules(std::vector<OpDef>& table);

 public:
  TeLowerer(const Graph& g, const std::vector<size_t>& nodes, const LoweringOptions& o, const LoweringContext& c);

  LoweredSubgraph run();

 private:
  // ---- names, values, constants --------------------------------------------

  std::string uniq(const std::string& raw);

  const ValueInfo* info(const std::string& v) const;

  const Node* constantNode(const std::string& v) const;

  // Values of an Int64/Int32 constant (initializer or Constant node).
  std::optional<std::vector<int64_t>> constInts(const std::string& v) const;

  // Values of a small Float32 constant (for scalars read at lowering time).
  std::optional<std::vector<float>> constFloats(const std::string& v) const;

  std::vector<int64_t> needInts(const Node& n, size_t input, const char* what) const;

  bool hasInput(const Node& n, size_t i) const { return n.inputs.size() > i && !n.inputs[i].empty(); }

  // The float tensor of a value: computed in the set, or a placeholder.
  Val in(const Node& n, size_t i);

  Val value(const Node& n, const std::string& v);

  Perm outPerm(const std::string& v, const std::vector<int64_t>& shape) const {
    return nhwc_ && shape.size() == 4 && context_.nhwcValues.count(v) ? lowering::kNHWC : Perm{};
  }

  Val compute(const std::string& name, const std::vector<int64_t>& shape, const Perm& perm,
              const std::function<Expr(const Indices&)>& f);

  Val reduce(const std::string& name, const std::vector<int64_t>& shape, const Perm& perm, ReduceKind kind,
             const std::vector<int64_t>& extents, const std::function<Expr(const Indices&, const Indices&)>& f);

  void checkShape(const std::string& name, const std::vector<int64_t>& shape) const;

  // The final stage of a node output, named after the value.
  Val out(const Node& n, size_t i, const std::vector<int64_t>& shape, const std::function<Expr(const Indices&)>& f);

  void set(const Node& n, size_t i, const Val& v) { vals_[n.outputs.at(i)] = v; }

  // Indices of a broadcast operand from the output's indices (right-aligned).
  static Indices bcast(const Val& v, const Indices& o) {
    Indices idx;
    size_t lead = o.size() - v.shape.size();
    for (size_t d = 0; d < v.shape.size(); ++d)
      idx.push_back(v.shape[d] == 1 ? te::intImm(0) : o[lead + d]);
    return idx;
  }

  int64_t axisAttr(const Node& n, const char* name, int64_t fallback, size_t rank) const {
    return normaliseAxis(n, n.attrInt(name, fallback), int64_t(rank));
  }

  void unusedExtraOutputs(const Node& n, size_t from) const;

  // ---- ops -------------------------------------------------------------------

  void lowerNode(const Node& n);

 public:
  // The rules, one per kind of op.
  void none(const Node&) {}  // a Constant: its value is a placeholder (or a constant read here)
  void foldedFirst(const Node& n);
  void passThrough(const Node& n) { set(n, 0, in(n, 0)); }
  // Inference: the identity, and a mask of ones (true) where it is read.
  void dropout(const Node& n);
  void cast(const Node& n);

  // Inputs broadcast together and combined left to right (Max and Min take
  // any number of inputs, the others two).
  void binary(const Node& n, const std::function<Expr(const Expr&, const Expr&)>& combine, bool variadic);

  // A constant scalar exponent becomes multiplications (or a square root).
  void power(const Node& n);

  // f of each element of the one input.
  void map(const Node& n, const std::function<Expr(const Expr&)>& f);

  void clip(const Node& n);

  void gelu(const Node& n);

 private:
  // A scalar operand: a constant read now, or a loaded placeholder.
  std::optional<Expr> scalarOperand(const Node& n, size_t i);

  // x padded with `value` so that every window of `w` lies inside (logical
  // NC + spatial); x itself when nothing is needed.
  Val padded(const Node& n, const Val& x, const Window& w, double value, const Perm& perm);

  void conv(const Node& n);

  void gemm(const Node& n);

  void matmul(const Node& n);

  // Shape without `axis` (reductions over one axis).
  static Indices withAxis(const Indices& outer, size_t axis, const Expr& v) {
    Indices j = outer;
    j.insert(j.begin() + long(axis), v);
    return j;
  }
  static Indices withoutAxis(const Indices& i, size_t axis) {
    Indices j = i;
    j.erase(j.begin() + long(axis));
    return j;
  }

  void softmax(const Node& n) { softmaxOf(n, false); }
  void logSoftmax(const Node& n) { softmaxOf(n, true); }

  // ReduceLogSumExp with the maximum taken out first, as log-softmax does.
  void reduceLogSumExp(const Node& n);

  // Each (n, c) normalised over the spatial axes, then scaled and shifted per channel.
  void instanceNorm(const Node& n);

 private:
  void softmaxOf(const Node& n, bool log);

 public:
  void layerNorm(const Node& n);

  void batchNorm(const Node& n);

  void pool(const Node& n, bool isMax);

  void globalPool(const Node& n);

  // A new view of the same row-major elements.
  void reshapeTo(const Node& n, const Val& x, const std::vector<int64_t>& shape);

  std::vector<int64_t> axesOf(const Node& n, size_t input) const;

  // Flatten, Reshape, Squeeze, Unsqueeze: the same elements in the shape
  // shape inference gave the output.
  void reshapeLike(const Node& n);

  void transpose(const Node& n);

  void concat(const Node& n);

  void slice(const Node& n);

  void gather(const Node& n);

  void split(const Node& n);

  void pad(const Node& n);

  // ReduceMean / Sum / Max / Min over the given axes (all when none); the
  // others reduce f(x) and take g of the result (L2: x * x, then the root).
  using ExprFn = std::function<Expr(const Expr&)>;
  void reduceAxes(const Node& n, ReduceKind kind, bool mean, const ExprFn& pre = nullptr, const ExprFn& post = nullptr);

  // Where(condition, X, Y): the condition is 0 / 1 (a comparison computed
  // here, or a constant the importer made float).
  void where(const Node& n);

  // Expand and Tile: each output element reads one input element.
  void expand(const Node& n);
  void tile(const Node& n);

  // Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the last two axes.
  void trilu(const Node& n);
  // Resize, nearest or n-linear (te_lowering_resize.cpp): per axis, the
  // periodic pattern of source indices and weights as index expressions.
  void resize(const Node& n);

  // Outputs defined by attributes and constant scalars alone.
  void constantOfShape(const Node& n);
  void range(const Node& n);

  // C's fmod on floats (fmod=1; fmod=0 is for integers, which are folded).
  void mod(const Node& n);

  void unsupportedComputed(const Node& n);

  const Graph& g_;
  std::vector<size_t> nodes_;
  bool nhwc_;
  const LoweringContext& context_;
  std::set<std::string> convWeights_, producedInSet_, used_, placeholderNames_;
  std::map<std::string, Val> vals_;
  std::map<std::string, std::string> placeholderOf_;
  std::vector<std::string> inputValues_;
  std::vector<te::Layout> inputLayouts_;
  te::DagBuilder b_;
  const Node* cur_ = nullptr;
};

}  // namespace tessel::graph
