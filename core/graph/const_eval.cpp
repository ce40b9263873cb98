#include "graph/const_eval.h"

#include <algorithm>
#include <cmath>
#include <functional>

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

template <typename T>
T applyBinary(const std::string& op, T a, T b) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Div") {
    if constexpr (std::is_integral_v<T>)
      return b == 0 ? 0 : a / b;
    else
      return a / b;
  }
  if (op == "Max") return std::max(a, b);
  if (op == "Min") return std::min(a, b);
  return T(std::pow(double(a), double(b)));  // Pow
}

ConstTensor binary(const std::string& op, const ConstTensor& a, const ConstTensor& b, const ValueInfo& out) {
  ConstTensor r;
  r.info = out;
  std::vector<int64_t> oa = broadcastOffsets(out.shape, a.info.shape);
  std::vector<int64_t> ob = broadcastOffsets(out.shape, b.info.shape);
  if (r.isInt()) {
    r.ints.resize(oa.size());
    for (size_t i = 0; i < oa.size(); ++i) {
      int64_t x = a.isInt() ? a.ints[size_t(oa[i])] : int64_t(a.floats[size_t(oa[i])]);
      int64_t y = b.isInt() ? b.ints[size_t(ob[i])] : int64_t(b.floats[size_t(ob[i])]);
      r.ints[i] = applyBinary<int64_t>(op, x, y);
    }
  } else {
    r.floats.resize(oa.size());
    for (size_t i = 0; i < oa.size(); ++i) {
      float x = a.isInt() ? float(a.ints[size_t(oa[i])]) : a.floats[size_t(oa[i])];
      float y = b.isInt() ? float(b.ints[size_t(ob[i])]) : b.floats[size_t(ob[i])];
      r.floats[i] = applyBinary<float>(op, x, y);
    }
  }
  return r;
}

std::optional<float> unaryFloat(const std::string& op, float x) {
  if (op == "Neg") return -x;
  if (op == "Abs") return std::fabs(x);
  if (op == "Sqrt") return std::sqrt(x);
  if (op == "Exp") return std::exp(x);
  if (op == "Reciprocal") return 1.0f / x;
  if (op == "Relu") return std::max(x, 0.0f);
  if (op == "Sigmoid") return 1.0f / (1.0f + std::exp(-x));
  if (op == "Tanh") return std::tanh(x);
  if (op == "Erf") return std::erf(x);
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<ConstTensor>> evaluateNode(const Node& n, const std::vector<const ConstTensor*>& in,
                                                     const std::vector<const ValueInfo*>& inInfo,
                                                     const std::vector<ValueInfo>& outInfo) {
  const std::string& op = n.op;
  if (outInfo.empty()) return std::nullopt;
  std::vector<ConstTensor> result(1);
  ConstTensor& out = result[0];
  out.info = outInfo[0];

  if (op == "Constant") {
    out = constantNodeValue(n);
    out.info.name = outInfo[0].name;
    return result;
  }
  if (op == "Shape") {
    if (inInfo.empty() || !inInfo[0]) return std::nullopt;
    out.ints.clear();
    int64_t rank = int64_t(inInfo[0]->shape.size());
    int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    for (int64_t d = start; d < end; ++d)
      out.ints.push_back(inInfo[0]->shape[size_t(d)]);
    return result;
  }
  if (!allConstant(n, in) || n.inputs.empty()) return std::nullopt;
  const ConstTensor& x = *in[0];

  if (op == "Identity" || op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Cast" ||
      (op == "Dropout" && (n.outputs.size() < 2 || n.outputs[1].empty()))) {
    gatherValues(x, identityOffsets(x.info.numElements()), out);
    return result;
  }
  if (op == "Transpose") {
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
    return result;
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (n.inputs.size() >= 3) {
      starts = intsOf(in[1]);
      ends = intsOf(in[2]);
      if (n.inputs.size() > 3 && in[3]) axes = intsOf(in[3]);
      if (n.inputs.size() > 4 && in[4]) steps = intsOf(in[4]);
    } else {
      starts = n.attrInts("starts");
      ends = n.attrInts("ends");
      axes = n.attrInts("axes");
    }
    std::vector<SliceRange> r = sliceRanges(n, x.info.shape, starts, ends, axes, steps);
    std::vector<int64_t> inStrides = rowMajorStrides(x.info.shape);
    std::vector<int64_t> offsets;
    forEachIndex(out.info.shape, [&](const std::vector<int64_t>& idx) {
      int64_t off = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        off += (r[d].start + idx[d] * r[d].step) * inStrides[d];
      offsets.push_back(off);
    });
    gatherValues(x, offsets, out);
    return result;
  }
  if (op == "Gather") {
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
    return result;
  }
  if (op == "Concat") {
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
    return result;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Max" || op == "Min") {
    if (n.inputs.size() == 1) {
      gatherValues(x, identityOffsets(x.info.numElements()), out);
      return result;
    }
    if (n.inputs.size() != 2) return std::nullopt;
    out = binary(op, x, *in[1], out.info);
    return result;
  }
  if (n.inputs.size() == 1 && !x.isInt() && !out.isInt() && unaryFloat(op, 0.0f)) {
    out.floats.resize(x.floats.size());
    for (size_t i = 0; i < x.floats.size(); ++i)
      out.floats[i] = *unaryFloat(op, x.floats[i]);
    return result;
  }
  if (n.inputs.size() == 1 && x.isInt() && out.isInt() && (op == "Neg" || op == "Abs")) {
    out.ints.resize(x.ints.size());
    for (size_t i = 0; i < x.ints.size(); ++i)
      out.ints[i] = op == "Neg" ? -x.ints[i] : std::abs(x.ints[i]);
    return result;
  }
  return std::nullopt;
}

}  // namespace tessel::graph
