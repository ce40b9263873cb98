#include "graph/const_eval.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "graph/op_registry.h"
#include "graph/shape_utils.h"

namespace tessel::graph {

ConstTensor constFromInitializer(const Initializer& init) {
  ConstTensor t;
  t.info = init.info;
  t.ints = init.ints;
  t.floats = init.data;
  return t;
}

Initializer initializerFromConst(const ConstTensor& t) {
  Initializer init;
  init.info = t.info;
  init.ints = t.ints;
  init.data = t.floats;
  return init;
}

ConstTensor constantNodeValue(const Node& n) {
  ConstTensor t;
  t.info.name = n.outputs.empty() ? n.name : n.outputs[0];
  auto floats = [&](std::vector<double> v, bool scalar) {
    t.info.dtype = DType::Float32;
    t.info.shape = scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())};
    for (double x : v)
      t.floats.push_back(float(x));
  };
  auto ints = [&](std::vector<int64_t> v, bool scalar) {
    t.info.dtype = DType::Int64;
    t.info.shape = scalar ? std::vector<int64_t>{} : std::vector<int64_t>{int64_t(v.size())};
    t.ints = std::move(v);
  };
  for (const char* key : {"value", "value_floats", "value_ints", "value_float", "value_int"}) {
    auto it = n.attrs.find(key);
    if (it == n.attrs.end()) continue;
    const AttrValue& a = it->second;
    if (const auto* v = std::get_if<std::vector<double>>(&a))
      floats(*v, false);
    else if (const auto* v = std::get_if<std::vector<int64_t>>(&a))
      ints(*v, false);
    else if (const auto* v = std::get_if<double>(&a))
      floats({*v}, true);
    else if (const auto* v = std::get_if<int64_t>(&a))
      // value_float given as an integer literal stays a float
      std::string(key) == "value_float" ? floats({double(*v)}, true) : ints({*v}, true);
    else
      throw GraphError(n.describe() + ": attribute '" + key + "' is not a number or list of numbers");
    if (n.has("shape") && std::get_if<std::vector<int64_t>>(&a)) t.info.shape = n.attrInts("shape");
    if (n.has("shape") && std::get_if<std::vector<double>>(&a)) t.info.shape = n.attrInts("shape");
    int64_t count = t.isInt() ? int64_t(t.ints.size()) : int64_t(t.floats.size());
    if (t.info.numElements() != count)
      throw GraphError(n.describe() + ": shape " + shapeString(t.info.shape) + " does not hold " +
                       std::to_string(count) + " values");
    return t;
  }
  throw GraphError(n.describe() + ": no value attribute (value, value_float(s), value_int(s))");
}

namespace {

// out[i] = src[offsets[i]], converting to `out.info.dtype`.
void gatherValues(const ConstTensor& src, const std::vector<int64_t>& offsets, ConstTensor& out) {
  bool toInt = out.isInt();
  if (toInt)
    out.ints.resize(offsets.size());
  else
    out.floats.resize(offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    size_t o = size_t(offsets[i]);
    if (toInt) {
      int64_t v = src.isInt() ? src.ints[o] : int64_t(src.floats[o]);
      out.ints[i] = out.info.dtype == DType::Bool ? (v != 0) : v;
    } else {
      out.floats[i] = src.isInt() ? float(src.ints[o]) : src.floats[o];
    }
  }
}

std::vector<int64_t> identityOffsets(int64_t n) {
  std::vector<int64_t> o(size_t(std::max<int64_t>(n, 0)));
  for (size_t i = 0; i < o.size(); ++i)
    o[i] = int64_t(i);
  return o;
}

// Visits every multi-index of `shape` in row-major order.
void forEachIndex(const std::vector<int64_t>& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;)
      if (++idx[d] < shape[d])
        break;
      else
        idx[d] = 0;
  }
}

std::vector<int64_t> intsOf(const ConstTensor* t) {
  return t ? t->ints : std::vector<int64_t>{};
}

bool allConstant(const Node& n, const std::vector<const ConstTensor*>& in) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (!n.inputs[i].empty() && (i >= in.size() || !in[i])) return false;
  return true;
}

// An element-wise binary op on integers and on floats.
struct BinaryFn {
  std::function<int64_t(int64_t, int64_t)> ints;
  std::function<float(float, float)> floats;
};

ConstTensor binary(const BinaryFn& op, const ConstTensor& a, const ConstTensor& b, const ValueInfo& out) {
  ConstTensor r;
  r.info = out;
  std::vector<int64_t> oa = broadcastOffsets(out.shape, a.info.shape);
  std::vector<int64_t> ob = broadcastOffsets(out.shape, b.info.shape);
  if (r.isInt()) {
    r.ints.resize(oa.size());
    for (size_t i = 0; i < oa.size(); ++i) {
      int64_t x = a.isInt() ? a.ints[size_t(oa[i])] : int64_t(a.floats[size_t(oa[i])]);
      int64_t y = b.isInt() ? b.ints[size_t(ob[i])] : int64_t(b.floats[size_t(ob[i])]);
      r.ints[i] = op.ints(x, y);
    }
  } else {
    r.floats.resize(oa.size());
    for (size_t i = 0; i < oa.size(); ++i) {
      float x = a.isInt() ? float(a.ints[size_t(oa[i])]) : a.floats[size_t(oa[i])];
      float y = b.isInt() ? float(b.ints[size_t(ob[i])]) : b.floats[size_t(ob[i])];
      r.floats[i] = op.floats(x, y);
    }
  }
  return r;
}

}  // namespace

std::optional<std::vector<ConstTensor>> evaluateNode(const Node& n, const std::vector<const ConstTensor*>& in,
                                                     const std::vector<const ValueInfo*>& inInfo,
                                                     const std::vector<ValueInfo>& outInfo) {
  if (outInfo.empty()) return std::nullopt;
  const OpDef* def = findOp(n.op);
  if (!def || !def->eval) return std::nullopt;
  // Shape reads only its input's shape; Constant has no inputs; the others
  // need every present input's values.
  if (!def->evalFromShapes && !def->constant && (!allConstant(n, in) || n.inputs.empty())) return std::nullopt;
  ConstTensor out;
  out.info = outInfo[0];
  if (!def->eval(n, in, inInfo, out)) return std::nullopt;
  return std::vector<ConstTensor>{std::move(out)};
}

namespace {

using In = std::vector<const ConstTensor*>;
using Infos = std::vector<const ValueInfo*>;

bool constantValue(const Node& n, const In&, const Infos&, ConstTensor& out) {
  const std::string name = out.info.name;
  out = constantNodeValue(n);
  out.info.name = name;
  return true;
}

bool shapeValue(const Node& n, const In&, const Infos& inInfo, ConstTensor& out) {
  if (inInfo.empty() || !inInfo[0]) return false;
  out.ints.clear();
  int64_t rank = int64_t(inInfo[0]->shape.size());
  int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  for (int64_t d = start; d < end; ++d)
    out.ints.push_back(inInfo[0]->shape[size_t(d)]);
  return true;
}

// Views and casts: the same values in the output's shape and type.
bool sameValues(const Node&, const In& in, const Infos&, ConstTensor& out) {
  gatherValues(*in[0], identityOffsets(in[0]->info.numElements()), out);
  return true;
}

bool dropoutValue(const Node& n, const In& in, const Infos& infos, ConstTensor& out) {
  if (n.outputs.size() >= 2 && !n.outputs[1].empty()) return false;  // its mask is not evaluated
  return sameValues(n, in, infos, out);
}

bool transposeValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  const ConstTensor& x = *in[0];
  size_t rank = x.info.shape.size();
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i)
      perm.push_back(int64_t(rank - 1 - i));
  std::vector<int64_t> inStrides = rowMajorStrides(x.info.shape);
  std::vector<int64_t> offsets;
  forEachIndex(out.info.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d)
      off += idx[d] * inStrides[size_t(perm[d])];
    offsets.push_back(off);
  });
  gatherValues(x, offsets, out);
  return true;
}

bool sliceValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  const ConstTensor& x = *in[0];
  const std::vector<SliceRange> r =
      sliceOf(n, x.info.shape, [&](size_t i, const char*) { return intsOf(i < in.size() ? in[i] : nullptr); });
  std::vector<int64_t> inStrides = rowMajorStrides(x.info.shape);
  std::vector<int64_t> offsets;
  forEachIndex(out.info.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += (r[d].start + idx[d] * r[d].step) * inStrides[d];
    offsets.push_back(off);
  });
  gatherValues(x, offsets, out);
  return true;
}

bool gatherValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  const ConstTensor& x = *in[0];
  const ConstTensor& indices = *in[1];
  int64_t rank = int64_t(x.info.shape.size());
  int64_t axis = normaliseAxis(n, n.attrInt("axis", 0), rank);
  int64_t dim = x.info.shape[size_t(axis)];
  std::vector<int64_t> inStrides = rowMajorStrides(x.info.shape);
  size_t q = indices.info.shape.size();
  std::vector<int64_t> offsets;
  forEachIndex(out.info.shape, [&](const std::vector<int64_t>& idx) {
    // idx = pre (axis dims) + indices dims (q) + post
    int64_t flatIndex = 0;
    for (size_t k = 0; k < q; ++k)
      flatIndex = flatIndex * indices.info.shape[k] + idx[size_t(axis) + k];
    int64_t i = indices.ints[size_t(flatIndex)];
    if (i < -dim || i >= dim)
      throw GraphError(n.describe() + ": index " + std::to_string(i) + " is out of range for a dimension of " +
                       std::to_string(dim));
    if (i < 0) i += dim;
    int64_t off = i * inStrides[size_t(axis)];
    for (int64_t d = 0; d < axis; ++d)
      off += idx[size_t(d)] * inStrides[size_t(d)];
    for (int64_t d = axis + 1; d < rank; ++d)
      off += idx[size_t(d) - 1 + q] * inStrides[size_t(d)];
    offsets.push_back(off);
  });
  gatherValues(x, offsets, out);
  return true;
}

bool concatValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  int64_t rank = int64_t(out.info.shape.size());
  int64_t axis = normaliseAxis(n, n.attrInt("axis", 0), rank);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= out.info.shape[size_t(d)];
  for (int64_t d = axis + 1; d < rank; ++d)
    inner *= out.info.shape[size_t(d)];
  out.ints.clear();
  out.floats.clear();
  for (int64_t o = 0; o < outer; ++o)
    for (const ConstTensor* part : in) {
      if (!part) continue;
      int64_t block = part->info.shape[size_t(axis)] * inner;
      ConstTensor piece;
      piece.info = out.info;
      std::vector<int64_t> offsets;
      for (int64_t e = 0; e < block; ++e)
        offsets.push_back(o * block + e);
      gatherValues(*part, offsets, piece);
      out.ints.insert(out.ints.end(), piece.ints.begin(), piece.ints.end());
      out.floats.insert(out.floats.end(), piece.floats.begin(), piece.floats.end());
    }
  return true;
}

// Element-wise on two inputs (one input: itself, as Max and Min allow).
std::function<bool(const Node&, const In&, const Infos&, ConstTensor&)> binaryValue(BinaryFn f) {
  return [f](const Node& n, const In& in, const Infos& infos, ConstTensor& out) {
    if (n.inputs.size() == 1) return sameValues(n, in, infos, out);
    if (n.inputs.size() != 2) return false;
    out = binary(f, *in[0], *in[1], out.info);
    return true;
  };
}

// Element-wise on one input: floats by `f`; integers by `i` where the op has one.
std::function<bool(const Node&, const In&, const Infos&, ConstTensor&)> unaryValue(
    std::function<float(float)> f, std::function<int64_t(int64_t)> i = nullptr) {
  return [f, i](const Node& n, const In& in, const Infos&, ConstTensor& out) {
    const ConstTensor& x = *in[0];
    if (n.inputs.size() != 1) return false;
    if (!x.isInt() && !out.isInt()) {
      out.floats.resize(x.floats.size());
      for (size_t k = 0; k < x.floats.size(); ++k)
        out.floats[k] = f(x.floats[k]);
      return true;
    }
    if (i && x.isInt() && out.isInt()) {
      out.ints.resize(x.ints.size());
      for (size_t k = 0; k < x.ints.size(); ++k)
        out.ints[k] = i(x.ints[k]);
      return true;
    }
    return false;
  };
}

// Comparisons on the values as doubles (exact for the integers shapes hold).
std::function<bool(const Node&, const In&, const Infos&, ConstTensor&)> compareValue(
    std::function<bool(double, double)> f) {
  return [f](const Node& n, const In& in, const Infos&, ConstTensor& out) {
    if (n.inputs.size() != 2) return false;
    const ConstTensor &a = *in[0], &b = *in[1];
    std::vector<int64_t> oa = broadcastOffsets(out.info.shape, a.info.shape);
    std::vector<int64_t> ob = broadcastOffsets(out.info.shape, b.info.shape);
    auto at = [](const ConstTensor& t, int64_t i) {
      return t.isInt() ? double(t.ints[size_t(i)]) : double(t.floats[size_t(i)]);
    };
    out.ints.resize(oa.size());
    for (size_t i = 0; i < oa.size(); ++i)
      out.ints[i] = f(at(a, oa[i]), at(b, ob[i])) ? 1 : 0;
    return true;
  };
}

bool whereValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  if (n.inputs.size() != 3) return false;
  const ConstTensor &c = *in[0], &x = *in[1], &y = *in[2];
  std::vector<int64_t> oc = broadcastOffsets(out.info.shape, c.info.shape);
  std::vector<int64_t> ox = broadcastOffsets(out.info.shape, x.info.shape);
  std::vector<int64_t> oy = broadcastOffsets(out.info.shape, y.info.shape);
  ConstTensor fromX, fromY;
  fromX.info = fromY.info = out.info;
  gatherValues(x, ox, fromX);
  gatherValues(y, oy, fromY);
  auto cond = [&](size_t i) { return c.isInt() ? c.ints[size_t(oc[i])] != 0 : c.floats[size_t(oc[i])] != 0.0f; };
  out.ints.clear();
  out.floats.clear();
  for (size_t i = 0; i < oc.size(); ++i) {
    if (out.isInt())
      out.ints.push_back(cond(i) ? fromX.ints[i] : fromY.ints[i]);
    else
      out.floats.push_back(cond(i) ? fromX.floats[i] : fromY.floats[i]);
  }
  return true;
}

// Expand: every output element from the input element that broadcasts to it.
bool expandValue(const Node&, const In& in, const Infos&, ConstTensor& out) {
  gatherValues(*in[0], broadcastOffsets(out.info.shape, in[0]->info.shape), out);
  return true;
}

bool tileValue(const Node&, const In& in, const Infos&, ConstTensor& out) {
  const ConstTensor& x = *in[0];
  std::vector<int64_t> strides = rowMajorStrides(x.info.shape), offsets;
  forEachIndex(out.info.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      off += (idx[d] % x.info.shape[d]) * strides[d];
    offsets.push_back(off);
  });
  gatherValues(x, offsets, out);
  return true;
}

bool constantOfShapeValue(const Node& n, const In&, const Infos&, ConstTensor& out) {
  const size_t count = size_t(out.info.numElements());
  if (out.isInt())
    out.ints.assign(count, n.has("value") ? n.attrInt("value", 0) : 0);
  else
    out.floats.assign(count, float(n.has("value") ? n.attrFloat("value", 0) : 0));
  return true;
}

bool rangeValue(const Node&, const In& in, const Infos&, ConstTensor& out) {
  auto scalar = [](const ConstTensor* t) { return t->isInt() ? double(t->ints.at(0)) : double(t->floats.at(0)); };
  const double start = scalar(in[0]), delta = scalar(in[2]);
  const size_t count = size_t(out.info.numElements());
  for (size_t i = 0; i < count; ++i) {
    // Integer ranges step in integers; float ones as ONNX defines them (start + i * delta).
    if (out.isInt())
      out.ints.push_back(in[0]->ints.at(0) + int64_t(i) * in[2]->ints.at(0));
    else
      out.floats.push_back(float(start + double(i) * delta));
  }
  return true;
}

// ScatterND without reduction: a copy of the data with the indexed slices replaced.
bool scatterNDValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  const ConstTensor &data = *in[0], &indices = *in[1], &updates = *in[2];
  gatherValues(data, identityOffsets(data.info.numElements()), out);
  const std::vector<int64_t>& shape = data.info.shape;
  const size_t k = size_t(indices.info.shape.back());
  const std::vector<int64_t> strides = rowMajorStrides(shape);
  int64_t slice = 1;
  for (size_t d = k; d < shape.size(); ++d)
    slice *= shape[d];
  const size_t tuples = k == 0 ? 0 : indices.ints.size() / k;
  if (int64_t(updates.isInt() ? updates.ints.size() : updates.floats.size()) != int64_t(tuples) * slice)
    throw GraphError(n.describe() + ": updates do not match the indices and the data's shape");
  for (size_t t = 0; t < tuples; ++t) {
    int64_t base = 0;
    for (size_t d = 0; d < k; ++d) {
      int64_t i = indices.ints[t * k + d];
      if (i < -shape[d] || i >= shape[d])
        throw GraphError(n.describe() + ": index " + std::to_string(i) + " is out of range for a dimension of " +
                         std::to_string(shape[d]));
      base += (i < 0 ? i + shape[d] : i) * strides[d];
    }
    for (int64_t e = 0; e < slice; ++e) {
      const size_t from = size_t(int64_t(t) * slice + e), to = size_t(base + e);
      if (out.isInt())
        out.ints[to] = updates.isInt() ? updates.ints[from] : int64_t(updates.floats[from]);
      else
        out.floats[to] = updates.isInt() ? float(updates.ints[from]) : updates.floats[from];
    }
  }
  return true;
}

// Trilu: elements outside the upper (j - i >= k) or lower (j - i <= k) triangle are zero.
bool triluValue(const Node& n, const In& in, const Infos&, ConstTensor& out) {
  const ConstTensor& x = *in[0];
  const int64_t k = n.inputs.size() > 1 && in[1] ? in[1]->ints.at(0) : 0;
  const bool upper = n.attrInt("upper", 1) != 0;
  gatherValues(x, identityOffsets(x.info.numElements()), out);
  const int64_t cols = x.info.shape.back(), rows = x.info.shape[x.info.shape.size() - 2];
  for (int64_t e = 0; e < x.info.numElements(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    if (upper ? j - i >= k : j - i <= k) continue;
    if (out.isInt())
      out.ints[size_t(e)] = 0;
    else
      out.floats[size_t(e)] = 0;
  }
  return true;
}

bool sizeValue(const Node&, const In&, const Infos& inInfo, ConstTensor& out) {
  if (inInfo.empty() || !inInfo[0]) return false;
  out.ints = {inInfo[0]->numElements()};
  return true;
}

// ONNX Mod: fmod=1 is C's fmod (the dividend's sign), fmod=0 Python's (the
// divisor's sign; integers only).
bool modValue(const Node& n, const In& in, const Infos& infos, ConstTensor& out) {
  const bool cStyle = n.attrInt("fmod", 0) != 0;
  BinaryFn f{[cStyle](int64_t a, int64_t b) {
               if (b == 0) return int64_t(0);
               int64_t r = a % b;
               return !cStyle && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
             },
             [](float a, float b) { return std::fmod(a, b); }};
  return binaryValue(f)(n, in, infos, out);
}

// f(attributes, x) of each element: the activations with parameters.
std::function<bool(const Node&, const In&, const Infos&, ConstTensor&)> activationValue(
    std::function<float(const Node&, float)> f) {
  return [f](const Node& n, const In& in, const Infos& infos, ConstTensor& out) {
    return unaryValue([&](float x) { return f(n, x); })(n, in, infos, out);
  };
}

}  // namespace

void attachConstEvalRules(std::vector<OpDef>& table) {
  using Rule = std::function<bool(const Node&, const In&, const Infos&, ConstTensor&)>;
  const BinaryFn add{[](int64_t a, int64_t b) { return a + b; }, [](float a, float b) { return a + b; }};
  const BinaryFn sub{[](int64_t a, int64_t b) { return a - b; }, [](float a, float b) { return a - b; }};
  const BinaryFn mul{[](int64_t a, int64_t b) { return a * b; }, [](float a, float b) { return a * b; }};
  const BinaryFn div{[](int64_t a, int64_t b) { return b == 0 ? int64_t(0) : a / b; },
                     [](float a, float b) { return a / b; }};
  const BinaryFn max{[](int64_t a, int64_t b) { return std::max(a, b); },
                     [](float a, float b) { return std::max(a, b); }};
  const BinaryFn min{[](int64_t a, int64_t b) { return std::min(a, b); },
                     [](float a, float b) { return std::min(a, b); }};
  const BinaryFn pow{[](int64_t a, int64_t b) { return int64_t(std::pow(double(a), double(b))); },
                     [](float a, float b) { return float(std::pow(double(a), double(b))); }};
  const std::map<std::string, Rule> rules = {
      {"Constant", constantValue},
      {"Shape", shapeValue},
      {"Identity", sameValues},
      {"Reshape", sameValues},
      {"Squeeze", sameValues},
      {"Unsqueeze", sameValues},
      {"Flatten", sameValues},
      {"Cast", sameValues},
      {"Dropout", dropoutValue},
      {"Transpose", transposeValue},
      {"Slice", sliceValue},
      {"Gather", gatherValue},
      {"Concat", concatValue},
      {"Add", binaryValue(add)},
      {"Sub", binaryValue(sub)},
      {"Mul", binaryValue(mul)},
      {"Div", binaryValue(div)},
      {"Max", binaryValue(max)},
      {"Min", binaryValue(min)},
      {"Pow", binaryValue(pow)},
      {"Neg", unaryValue([](float x) { return -x; }, [](int64_t x) { return -x; })},
      {"Abs", unaryValue([](float x) { return std::fabs(x); }, [](int64_t x) { return std::abs(x); })},
      {"Sqrt", unaryValue([](float x) { return std::sqrt(x); })},
      {"Exp", unaryValue([](float x) { return std::exp(x); })},
      {"Reciprocal", unaryValue([](float x) { return 1.0f / x; })},
      {"Relu", unaryValue([](float x) { return std::max(x, 0.0f); })},
      {"Sigmoid", unaryValue([](float x) { return 1.0f / (1.0f + std::exp(-x)); })},
      {"Tanh", unaryValue([](float x) { return std::tanh(x); })},
      {"Erf", unaryValue([](float x) { return std::erf(x); })},
      {"Log", unaryValue([](float x) { return std::log(x); })},
      {"Softplus", unaryValue([](float x) { return std::log1p(std::exp(x)); })},
      {"Not", unaryValue(nullptr, [](int64_t x) { return int64_t(x == 0); })},
      {"HardSigmoid", activationValue([](const Node& n, float x) {
         return std::clamp(float(n.attrFloat("alpha", 0.2)) * x + float(n.attrFloat("beta", 0.5)), 0.0f, 1.0f);
       })},
      {"HardSwish", activationValue([](const Node&, float x) { return x * std::clamp(x / 6 + 0.5f, 0.0f, 1.0f); })},
      {"LeakyRelu",
       activationValue([](const Node& n, float x) { return x < 0 ? float(n.attrFloat("alpha", 0.01)) * x : x; })},
      {"Elu", activationValue(
                  [](const Node& n, float x) { return x < 0 ? float(n.attrFloat("alpha", 1.0)) * std::expm1(x) : x; })},
      {"Equal", compareValue([](double a, double b) { return a == b; })},
      {"Less", compareValue([](double a, double b) { return a < b; })},
      {"Greater", compareValue([](double a, double b) { return a > b; })},
      {"LessOrEqual", compareValue([](double a, double b) { return a <= b; })},
      {"GreaterOrEqual", compareValue([](double a, double b) { return a >= b; })},
      {"And", compareValue([](double a, double b) { return a != 0 && b != 0; })},
      {"Or", compareValue([](double a, double b) { return a != 0 || b != 0; })},
      {"Xor", compareValue([](double a, double b) { return (a != 0) != (b != 0); })},
      {"Mod", modValue},
      {"Where", whereValue},
      {"Expand", expandValue},
      {"Tile", tileValue},
      {"ConstantOfShape", constantOfShapeValue},
      {"Range", rangeValue},
      {"ScatterND", scatterNDValue},
      {"Size", sizeValue},
      {"Trilu", triluValue},
  };
  for (OpDef& d : table)
    if (auto r = rules.find(d.name); r != rules.end()) d.eval = r->second;
}

}  // namespace tessel::graph
