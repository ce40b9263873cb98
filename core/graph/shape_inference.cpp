// inferShapes(): static shapes and dtypes of every value, ONNX opset-17 rules.
// Shape-valued inputs (Reshape's shape, Slice's starts, ...) may come from
// Int64 initializers or from chains computed from them and from Shape, which
// are evaluated on the way (const_eval).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>

#include "graph/const_eval.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
#include "graph/resize_plan.h"
#include "graph/shape_utils.h"
#include "support/size_limits.h"

namespace tessel::graph {

namespace {

using Shape = std::vector<int64_t>;

ValueInfo info(Shape shape, DType dtype) {
  ValueInfo v;
  v.shape = std::move(shape);
  v.dtype = dtype;
  return v;
}

[[noreturn]] void fail(const Node& n, const std::string& what) {
  throw GraphError(n.describe() + ": " + what);
}

std::string str(int64_t v) {
  return std::to_string(v);
}

}  // namespace

// Shape inference over a graph; the per-op rules are its public methods,
// attached to the ops in the registry (attachShapeRules below).
class ShapeInferer {
 public:
  explicit ShapeInferer(Graph& g) : g_(g) {}

  void run() {
    g_.values.clear();
    for (const ValueInfo& v : g_.inputs) {
      checkSize(v, "input '" + v.name + "'");
      g_.values[v.name] = v;
    }
    for (auto& [name, init] : g_.initializers) {
      init.info.name = name;
      checkSize(init.info, "initializer '" + name + "'");
      g_.values[name] = init.info;
      if (init.isInt() && init.hasData()) known_[name] = constFromInitializer(init);
    }
    for (const Node& n : g_.nodes) {
      inferNode(n);
      for (const std::string& o : n.outputs)
        if (auto it = g_.values.find(o); !o.empty() && it != g_.values.end())
          checkSize(it->second, n.describe() + ": output '" + o + "'");
    }
    for (const std::string& o : g_.outputs)
      if (!g_.values.count(o)) throw GraphError("graph output '" + o + "' is not produced by any node");
  }

 private:
  Graph& g_;
  std::map<std::string, ConstTensor> known_;

  // Every value within the kernels' index range and the machine's memory,
  // checked as it is made, so no later count overflows.
  static void checkSize(const ValueInfo& v, const std::string& what) {
    try {
      support::checkTensorSize(what, v.shape, dtypeBytes(v.dtype));
    } catch (const support::LimitError& e) {
      throw GraphError(e.what());
    }
  }

  bool present(const Node& n, size_t i) const { return i < n.inputs.size() && !n.inputs[i].empty(); }

  const ValueInfo& in(const Node& n, size_t i) const {
    if (!present(n, i)) fail(n, "input " + str(int64_t(i)) + " is missing");
    auto it = g_.values.find(n.inputs[i]);
    if (it == g_.values.end()) fail(n, "input '" + n.inputs[i] + "' is not defined before the node");
    return it->second;
  }
  const Shape& shape(const Node& n, size_t i) const { return in(n, i).shape; }

  // Values of a constant integer input, nullopt when absent or not constant.
  std::optional<std::vector<int64_t>> constInts(const Node& n, size_t i) const {
    if (!present(n, i)) return std::nullopt;
    auto it = known_.find(n.inputs[i]);
    if (it == known_.end() || !it->second.isInt()) return std::nullopt;
    return it->second.ints;
  }
  std::vector<int64_t> requireInts(const Node& n, size_t i, const char* what) const {
    in(n, i);
    auto v = constInts(n, i);
    if (!v) fail(n, std::string(what) + " (input '" + n.inputs[i] + "') must be a constant integer tensor");
    return *v;
  }
  // A constant scalar input (integer, or a float initializer / Constant).
  std::optional<double> constScalar(const Node& n, size_t i) const {
    if (auto v = constInts(n, i)) return v->size() == 1 ? std::optional<double>(double((*v)[0])) : std::nullopt;
    if (!present(n, i)) return std::nullopt;
    auto it = g_.initializers.find(n.inputs[i]);
    if (it == g_.initializers.end() || it->second.isInt() || it->second.data.size() != 1) return std::nullopt;
    return double(it->second.data[0]);
  }
  // Attribute (older opsets) or constant input (newer) holding a list.
  std::optional<std::vector<int64_t>> attrOrInput(const Node& n, const char* attr, size_t i, const char* what) const {
    if (n.has(attr)) return n.attrInts(attr);
    if (present(n, i)) return requireInts(n, i, what);
    return std::nullopt;
  }

  void inferNode(const Node& n) {
    const OpDef& def = opOf(n);
    if (!def.infer) fail(n, "op '" + n.op + "' has no shape rule");
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (present(n, i)) in(n, i);
    std::vector<ValueInfo> outs = def.infer(*this, n);
    if (outs.size() < n.outputs.size()) {
      // Optional outputs the op does not define: not allowed.
      for (size_t i = outs.size(); i < n.outputs.size(); ++i)
        if (!n.outputs[i].empty()) fail(n, "has more outputs than the op defines");
    }
    outs.resize(std::min(outs.size(), n.outputs.size()));
    for (size_t i = 0; i < outs.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      for (int64_t d : outs[i].shape)
        if (d < 0) fail(n, "output " + str(int64_t(i)) + " would have shape " + shapeString(outs[i].shape));
      outs[i].name = n.outputs[i];
      g_.values[n.outputs[i]] = outs[i];
    }
    tryEvaluate(n, outs);
  }

  // Records the values of small integer outputs computable at compile time.
  void tryEvaluate(const Node& n, const std::vector<ValueInfo>& outs) {
    if (outs.empty()) return;
    for (const ValueInfo& o : outs)
      if ((o.dtype != DType::Int64 && o.dtype != DType::Int32 && o.dtype != DType::Bool) || o.numElements() > 65536)
        return;
    std::vector<const ConstTensor*> inVals;
    std::vector<const ValueInfo*> inInfo;
    for (const std::string& name : n.inputs) {
      auto k = known_.find(name);
      inVals.push_back(k == known_.end() ? nullptr : &k->second);
      auto v = g_.values.find(name);
      inInfo.push_back(name.empty() || v == g_.values.end() ? nullptr : &v->second);
    }
    std::optional<std::vector<ConstTensor>> r = evaluateNode(n, inVals, inInfo, outs);
    if (!r) return;
    for (size_t i = 0; i < r->size() && i < n.outputs.size(); ++i)
      if (!n.outputs[i].empty()) known_[n.outputs[i]] = (*r)[i];
  }

 public:
  // The rules, one per kind of op.
  std::vector<ValueInfo> same(const Node& n) { return {in(n, 0)}; }
  std::vector<ValueInfo> softmax(const Node& n) {
    normaliseAxis(n, n.attrInt("axis", -1), int64_t(shape(n, 0).size()));
    return {in(n, 0)};
  }
  std::vector<ValueInfo> globalPool(const Node& n) {
    Shape s = shape(n, 0);
    if (s.size() < 3) fail(n, "input must have rank 3 or more, has shape " + shapeString(s));
    std::fill(s.begin() + 2, s.end(), 1);
    return {info(s, in(n, 0).dtype)};
  }
  std::vector<ValueInfo> flatten(const Node& n) {
    const Shape& s = shape(n, 0);
    int64_t rank = int64_t(s.size());
    int64_t axis = n.attrInt("axis", 1);
    if (axis < -rank || axis > rank) fail(n, "axis " + str(axis) + " is out of range for rank " + str(rank));
    if (axis < 0) axis += rank;
    int64_t a = 1, b = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? a : b) *= s[size_t(d)];
    return {info({a, b}, in(n, 0).dtype)};
  }
  std::vector<ValueInfo> constant(const Node& n) {
    ConstTensor c = constantNodeValue(n);
    return {info(c.info.shape, c.info.dtype)};
  }
  std::vector<ValueInfo> shapeOf(const Node& n) {
    int64_t rank = int64_t(shape(n, 0).size());
    int64_t start = n.attrInt("start", 0), end = n.attrInt("end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    return {info({std::max<int64_t>(end - start, 0)}, DType::Int64)};
  }
  std::vector<ValueInfo> cast(const Node& n) {
    if (!n.has("to")) fail(n, "attribute 'to' is missing");
    DType t = dtypeFromOnnx(n.attrInt("to", 1));
    if (t == DType::Other) fail(n, "cast to ONNX data type " + str(n.attrInt("to", 1)) + " is not supported");
    return {info(shape(n, 0), t)};
  }
  std::vector<ValueInfo> dropout(const Node& n) { return {in(n, 0), info(shape(n, 0), DType::Bool)}; }

  // Two inputs broadcast together (Max and Min take any number; Pow's
  // exponent may have another type than its base).
  std::vector<ValueInfo> broadcast(const Node& n) { return elementwise(n, false, false); }
  std::vector<ValueInfo> broadcastVariadic(const Node& n) { return elementwise(n, true, false); }
  std::vector<ValueInfo> power(const Node& n) { return elementwise(n, false, true); }

 private:
  std::vector<ValueInfo> elementwise(const Node& n, bool variadic, bool mixedTypes) {
    if (n.inputs.empty()) fail(n, "needs at least one input");
    if (!variadic && n.inputs.size() != 2) fail(n, "needs two inputs");
    Shape s = shape(n, 0);
    DType t = in(n, 0).dtype;
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      const ValueInfo& v = in(n, i);
      if (!mixedTypes && v.dtype != t)
        fail(n, std::string("inputs have different types (") + dtypeName(t) + ", " + dtypeName(v.dtype) + ")");
      s = broadcastShapes(n, s, v.shape);
    }
    return {info(s, t)};
  }

  // Output extent of one spatial axis of a convolution or pooling window.
  int64_t windowOutput(const Node& n, int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t& padBegin, int64_t& padEnd, const std::string& autoPad, bool ceilMode) {
    if (stride <= 0 || dilation <= 0 || kernel <= 0) fail(n, "kernel, strides and dilations must be positive");
    int64_t effective = (kernel - 1) * dilation + 1;
    int64_t out;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      out = (input + stride - 1) / stride;
      int64_t total = std::max<int64_t>((out - 1) * stride + effective - input, 0);
      padBegin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      padEnd = total - padBegin;
    } else if (autoPad == "VALID") {
      padBegin = padEnd = 0;
      out = input >= effective ? (input - effective) / stride + 1 : 0;
    } else if (autoPad == "NOTSET" || autoPad.empty()) {
      int64_t span = input + padBegin + padEnd - effective;
      if (span < 0)
        out = 0;
      else if (ceilMode) {
        out = (span + stride - 1) / stride + 1;
        // The last window must start inside the input or the left padding.
        if ((out - 1) * stride >= input + padBegin) --out;
      } else
        out = span / stride + 1;
    } else
      fail(n, "auto_pad '" + autoPad + "' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    if (out <= 0)
      fail(n, "window of " + str(effective) + " does not fit an input of " + str(input) + " with padding " +
                  str(padBegin) + "+" + str(padEnd));
    return out;
  }

  // Spatial output shape for Conv / pooling; `kernel` has one entry per spatial axis.
  Shape spatialOutput(const Node& n, const Shape& x, const Shape& kernel, bool ceilMode) {
    size_t sp = x.size() - 2;
    std::vector<int64_t> strides = n.attrInts("strides", std::vector<int64_t>(sp, 1));
    std::vector<int64_t> dilations = n.attrInts("dilations", std::vector<int64_t>(sp, 1));
    std::vector<int64_t> pads = n.attrInts("pads", std::vector<int64_t>(2 * sp, 0));
    if (strides.size() != sp || dilations.size() != sp || pads.size() != 2 * sp || kernel.size() != sp)
      fail(n, "strides, dilations, pads or kernel_shape do not match " + str(int64_t(sp)) + " spatial axes");
    std::string autoPad = n.attrString("auto_pad", "NOTSET");
    Shape out;
    for (size_t d = 0; d < sp; ++d)
      out.push_back(
          windowOutput(n, x[2 + d], kernel[d], strides[d], dilations[d], pads[d], pads[sp + d], autoPad, ceilMode));
    return out;
  }

 public:
  std::vector<ValueInfo> conv(const Node& n) {
    const Shape& x = shape(n, 0);
    const Shape& w = shape(n, 1);
    if (x.size() < 3) fail(n, "input must have rank 3 or more, has shape " + shapeString(x));
    if (w.size() != x.size())
      fail(n, "weight shape " + shapeString(w) + " does not match input shape " + shapeString(x));
    int64_t group = n.attrInt("group", 1);
    if (group <= 0) fail(n, "group must be positive");
    if (x[1] != w[1] * group)
      fail(n, "input has " + str(x[1]) + " channels, weight expects " + str(w[1] * group) +
                  (group > 1 ? " (" + str(w[1]) + " per group x " + str(group) + " groups)" : ""));
    if (w[0] % group) fail(n, str(w[0]) + " output channels are not divisible by group " + str(group));
    Shape kernel(w.begin() + 2, w.end());
    if (n.has("kernel_shape") && n.attrInts("kernel_shape") != kernel)
      fail(n,
           "kernel_shape " + shapeString(n.attrInts("kernel_shape")) + " does not match the weight " + shapeString(w));
    if (present(n, 2) && shape(n, 2) != Shape{w[0]})
      fail(n, "bias shape " + shapeString(shape(n, 2)) + " does not match " + str(w[0]) + " output channels");
    Shape out = {x[0], w[0]};
    Shape sp = spatialOutput(n, x, kernel, false);
    out.insert(out.end(), sp.begin(), sp.end());
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> pool(const Node& n) {
    const Shape& x = shape(n, 0);
    if (x.size() < 3) fail(n, "input must have rank 3 or more, has shape " + shapeString(x));
    if (!n.has("kernel_shape")) fail(n, "attribute 'kernel_shape' is missing");
    Shape out = {x[0], x[1]};
    Shape sp = spatialOutput(n, x, n.attrInts("kernel_shape"), n.attrInt("ceil_mode", 0) != 0);
    out.insert(out.end(), sp.begin(), sp.end());
    return {info(out, in(n, 0).dtype), info(out, DType::Int64)};
  }

  std::vector<ValueInfo> gemm(const Node& n) {
    Shape a = shape(n, 0), b = shape(n, 1);
    if (a.size() != 2 || b.size() != 2)
      fail(n, "inputs must be matrices, have shapes " + shapeString(a) + " and " + shapeString(b));
    if (n.attrInt("transA", 0)) std::swap(a[0], a[1]);
    if (n.attrInt("transB", 0)) std::swap(b[0], b[1]);
    if (a[1] != b[0])
      fail(n,
           "inner dimensions differ: A is " + shapeString(a) + ", B is " + shapeString(b) + " (after transA/transB)");
    Shape out = {a[0], b[1]};
    if (present(n, 2) && broadcastShapes(n, out, shape(n, 2)) != out)
      fail(n, "C of shape " + shapeString(shape(n, 2)) + " does not broadcast to " + shapeString(out));
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> matmul(const Node& n) {
    Shape a = shape(n, 0), b = shape(n, 1);
    if (a.empty() || b.empty()) fail(n, "inputs must have rank 1 or more");
    bool aVec = a.size() == 1, bVec = b.size() == 1;
    if (aVec) a.insert(a.begin(), 1);
    if (bVec) b.push_back(1);
    if (a.back() != b[b.size() - 2])
      fail(n, "inner dimensions differ: " + shapeString(shape(n, 0)) + " x " + shapeString(shape(n, 1)));
    Shape batchA(a.begin(), a.end() - 2), batchB(b.begin(), b.end() - 2);
    Shape out = broadcastShapes(n, batchA, batchB);
    if (!aVec) out.push_back(a[a.size() - 2]);
    if (!bVec) out.push_back(b.back());
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> layerNorm(const Node& n) {
    const Shape& x = shape(n, 0);
    int64_t rank = int64_t(x.size());
    int64_t axis = normaliseAxis(n, n.attrInt("axis", -1), rank);
    Shape normalized(x.begin() + axis, x.end());
    for (size_t i = 1; i <= 2; ++i)
      if (present(n, i) && broadcastShapes(n, normalized, shape(n, i)) != normalized)
        fail(n, std::string(i == 1 ? "scale" : "bias") + " of shape " + shapeString(shape(n, i)) +
                    " does not broadcast to the normalized shape " + shapeString(normalized));
    Shape stat(x.begin(), x.begin() + axis);
    stat.resize(x.size(), 1);
    return {in(n, 0), info(stat, DType::Float32), info(stat, DType::Float32)};
  }

  std::vector<ValueInfo> batchNorm(const Node& n) {
    const Shape& x = shape(n, 0);
    if (x.size() < 2) fail(n, "input must have rank 2 or more, has shape " + shapeString(x));
    static const char* names[] = {"", "scale", "B", "mean", "var"};
    for (size_t i = 1; i <= 4; ++i)
      if (shape(n, i) != Shape{x[1]})
        fail(n, std::string(names[i]) + " has shape " + shapeString(shape(n, i)) + ", the input has " + str(x[1]) +
                    " channels");
    return {in(n, 0), info({x[1]}, DType::Float32), info({x[1]}, DType::Float32)};
  }

  std::vector<ValueInfo> reshape(const Node& n) {
    const Shape& x = shape(n, 0);
    std::vector<int64_t> target = present(n, 1) ? requireInts(n, 1, "shape") : n.attrInts("shape");
    bool allowZero = n.attrInt("allowzero", 0) != 0;
    Shape out;
    int64_t inferred = -1, product = 1;
    for (size_t i = 0; i < target.size(); ++i) {
      int64_t d = target[i];
      if (d == 0 && !allowZero) {
        if (i >= x.size())
          fail(n, "shape " + shapeString(target) + " copies dimension " + str(int64_t(i)) + " the input " +
                      shapeString(x) + " does not have");
        d = x[i];
      } else if (d == -1) {
        if (inferred >= 0) fail(n, "shape " + shapeString(target) + " has more than one -1");
        inferred = int64_t(i);
        out.push_back(1);
        continue;
      } else if (d < -1)
        fail(n, "shape " + shapeString(target) + " has a negative dimension");
      out.push_back(d);
      product *= d;
    }
    int64_t total = ValueInfo{"", x, DType::Float32}.numElements();
    if (inferred >= 0) {
      if (product == 0 || total % product) fail(n, "cannot reshape " + shapeString(x) + " to " + shapeString(target));
      out[size_t(inferred)] = total / product;
    } else if (product != total)
      fail(n, "cannot reshape " + shapeString(x) + " (" + str(total) + " elements) to " + shapeString(target));
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> transpose(const Node& n) {
    const Shape& x = shape(n, 0);
    std::vector<int64_t> perm = n.attrInts("perm");
    if (perm.empty())
      for (size_t i = 0; i < x.size(); ++i)
        perm.push_back(int64_t(x.size() - 1 - i));
    if (perm.size() != x.size())
      fail(n, "perm " + shapeString(perm) + " does not match rank " + str(int64_t(x.size())));
    std::vector<bool> seen(x.size(), false);
    Shape out;
    for (int64_t p : perm) {
      if (p < 0 || p >= int64_t(x.size()) || seen[size_t(p)])
        fail(n, "perm " + shapeString(perm) + " is not a permutation");
      seen[size_t(p)] = true;
      out.push_back(x[size_t(p)]);
    }
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> concat(const Node& n) {
    if (n.inputs.empty()) fail(n, "needs at least one input");
    if (!n.has("axis")) fail(n, "attribute 'axis' is missing");
    Shape out = shape(n, 0);
    int64_t axis = normaliseAxis(n, n.attrInt("axis", 0), int64_t(out.size()));
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      const Shape& s = shape(n, i);
      bool ok = s.size() == out.size();
      for (size_t d = 0; ok && d < s.size(); ++d)
        ok = d == size_t(axis) || s[d] == out[d];
      if (!ok)
        fail(n, "input shapes " + shapeString(shape(n, 0)) + " and " + shapeString(s) + " differ outside axis " +
                    str(axis));
      out[size_t(axis)] += s[size_t(axis)];
    }
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> slice(const Node& n) {
    Shape out;
    for (const SliceRange& r :
         sliceOf(n, shape(n, 0), [&](size_t i, const char*what) { return requireInts(n, i, what); }))
      out.push_back(r.count);
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> gather(const Node& n) {
    const Shape& x = shape(n, 0);
    const ValueInfo& idx = in(n, 1);
    if (idx.dtype != DType::Int64 && idx.dtype != DType::Int32)
      fail(n, std::string("indices must be int64 or int32, are ") + dtypeName(idx.dtype));
    if (x.empty()) fail(n, "data must have rank 1 or more");
    int64_t axis = normaliseAxis(n, n.attrInt("axis", 0), int64_t(x.size()));
    if (auto vals = constInts(n, 1)) {
      int64_t dim = x[size_t(axis)];
      for (int64_t v : *vals)
        if (v < -dim || v >= dim)
          fail(n, "index " + str(v) + " is out of range for axis " + str(axis) + " of size " + str(dim));
    }
    Shape out(x.begin(), x.begin() + axis);
    out.insert(out.end(), idx.shape.begin(), idx.shape.end());
    out.insert(out.end(), x.begin() + axis + 1, x.end());
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> squeeze(const Node& n) {
    const Shape& x = shape(n, 0);
    std::optional<std::vector<int64_t>> axes = attrOrInput(n, "axes", 1, "axes");
    std::vector<bool> drop(x.size(), false);
    if (!axes || axes->empty()) {
      for (size_t d = 0; d < x.size(); ++d)
        drop[d] = x[d] == 1;
    } else {
      for (int64_t a : *axes) {
        int64_t d = normaliseAxis(n, a, int64_t(x.size()));
        if (x[size_t(d)] != 1)
          fail(n, "cannot squeeze axis " + str(a) + " of size " + str(x[size_t(d)]) + " in " + shapeString(x));
        drop[size_t(d)] = true;
      }
    }
    Shape out;
    for (size_t d = 0; d < x.size(); ++d)
      if (!drop[d]) out.push_back(x[d]);
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> unsqueeze(const Node& n) {
    const Shape& x = shape(n, 0);
    std::optional<std::vector<int64_t>> axes = attrOrInput(n, "axes", 1, "axes");
    if (!axes || axes->empty()) fail(n, "axes are missing");
    int64_t rank = int64_t(x.size() + axes->size());
    std::vector<bool> inserted(size_t(rank), false);
    for (int64_t a : *axes) {
      int64_t d = normaliseAxis(n, a, rank);
      if (inserted[size_t(d)]) fail(n, "axis " + str(a) + " is given twice");
      inserted[size_t(d)] = true;
    }
    Shape out;
    size_t next = 0;
    for (int64_t d = 0; d < rank; ++d)
      out.push_back(inserted[size_t(d)] ? 1 : x[next++]);
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> split(const Node& n) {
    const Shape& x = shape(n, 0);
    int64_t axis = normaliseAxis(n, n.attrInt("axis", 0), int64_t(x.size()));
    int64_t dim = x[size_t(axis)];
    size_t count = n.outputs.size();
    std::vector<int64_t> sizes;
    if (auto s = attrOrInput(n, "split", 1, "split"); s && !s->empty()) {
      sizes = *s;
    } else if (n.has("num_outputs")) {
      int64_t k = n.attrInt("num_outputs", 1);
      if (k <= 0 || size_t(k) != count) fail(n, "num_outputs " + str(k) + " does not match the node's outputs");
      int64_t chunk = (dim + k - 1) / k;
      for (int64_t i = 0; i < k; ++i)
        sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
    } else {
      if (count == 0 || dim % int64_t(count))
        fail(n, "axis of size " + str(dim) + " does not split evenly into " + str(int64_t(count)) + " outputs");
      sizes.assign(count, dim / int64_t(count));
    }
    if (sizes.size() != count)
      fail(n, "split has " + str(int64_t(sizes.size())) + " sizes for " + str(int64_t(count)) + " outputs");
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != dim)
      fail(n, "split sizes " + shapeString(sizes) + " do not add up to " + str(dim));
    std::vector<ValueInfo> outs;
    for (int64_t s : sizes) {
      Shape o = x;
      o[size_t(axis)] = s;
      outs.push_back(info(o, in(n, 0).dtype));
    }
    return outs;
  }

  std::vector<ValueInfo> pad(const Node& n) {
    const Shape& x = shape(n, 0);
    std::string mode = n.attrString("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge")
      fail(n, "mode '" + mode + "' is not constant, reflect or edge");
    std::vector<int64_t> pads = present(n, 1) ? requireInts(n, 1, "pads") : n.attrInts("pads");
    std::vector<int64_t> axes;
    if (present(n, 3)) axes = requireInts(n, 3, "axes");
    if (axes.empty())
      for (size_t d = 0; d < x.size(); ++d)
        axes.push_back(int64_t(d));
    if (pads.size() != 2 * axes.size())
      fail(n, "pads " + shapeString(pads) + " must have 2 x " + str(int64_t(axes.size())) + " entries");
    Shape out = x;
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t d = size_t(normaliseAxis(n, axes[i], int64_t(x.size())));
      out[d] += pads[i] + pads[i + axes.size()];
      if (out[d] < 0) fail(n, "pads " + shapeString(pads) + " remove more than axis " + str(int64_t(d)) + " holds");
    }
    return {info(out, in(n, 0).dtype)};
  }

  // Comparisons (Equal, Less, ...) and And / Or: booleans, broadcast.
  std::vector<ValueInfo> compare(const Node& n) {
    std::vector<ValueInfo> r = elementwise(n, false, false);
    r[0].dtype = DType::Bool;
    return r;
  }
  std::vector<ValueInfo> logicalNot(const Node& n) { return {info(shape(n, 0), DType::Bool)}; }

  std::vector<ValueInfo> where(const Node& n) {
    if (n.inputs.size() != 3) fail(n, "needs three inputs (condition, X, Y)");
    const ValueInfo &x = in(n, 1), &y = in(n, 2);
    if (x.dtype != y.dtype)
      fail(n, std::string("X and Y have different types (") + dtypeName(x.dtype) + ", " + dtypeName(y.dtype) + ")");
    return {info(broadcastShapes(n, broadcastShapes(n, shape(n, 0), x.shape), y.shape), x.dtype)};
  }

  // Expand broadcasts both ways: the target may have ones where X does not.
  std::vector<ValueInfo> expand(const Node& n) {
    std::vector<int64_t> target = requireInts(n, 1, "shape");
    for (int64_t d : target)
      if (d < 0) fail(n, "shape " + shapeString(target) + " has a negative dimension");
    return {info(broadcastShapes(n, shape(n, 0), target), in(n, 0).dtype)};
  }

  std::vector<ValueInfo> tile(const Node& n) {
    const Shape& x = shape(n, 0);
    std::vector<int64_t> repeats = requireInts(n, 1, "repeats");
    if (repeats.size() != x.size())
      fail(n, "repeats " + shapeString(repeats) + " do not match rank " + str(int64_t(x.size())));
    Shape out;
    for (size_t d = 0; d < x.size(); ++d) {
      if (repeats[d] < 0) fail(n, "repeats " + shapeString(repeats) + " has a negative count");
      out.push_back(x[d] * repeats[d]);
    }
    return {info(out, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> constantOfShape(const Node& n) {
    std::vector<int64_t> s = requireInts(n, 0, "shape");
    for (int64_t d : s)
      if (d < 0) fail(n, "shape " + shapeString(s) + " has a negative dimension");
    DType t = dtypeFromOnnx(n.attrInt("value_type", 1));
    if (t == DType::Other) fail(n, "value of ONNX data type " + str(n.attrInt("value_type", 1)) + " is not supported");
    return {info(s, t)};
  }

  // Range's output length needs its three scalars: integers or float constants.
  std::vector<ValueInfo> range(const Node& n) {
    double v[3];
    for (size_t i = 0; i < 3; ++i) {
      std::optional<double> x = constScalar(n, i);
      if (!x)
        throw UnsupportedError(n.describe() + ": " +
                               (i == 0   ? "start"
                                : i == 1 ? "limit"
                                         : "delta") +
                               " is not a constant scalar (a Range of computed values has no static shape)");
      v[i] = *x;
    }
    if (v[2] == 0) fail(n, "delta is 0");
    const double count = std::ceil((v[1] - v[0]) / v[2]);
    return {info({int64_t(std::max(count, 0.0))}, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> scatterND(const Node& n) {
    const ValueInfo& idx = in(n, 1);
    if (idx.dtype != DType::Int64) fail(n, "indices must be int64");
    if (idx.shape.empty() || idx.shape.back() > int64_t(shape(n, 0).size()))
      fail(n, "indices of shape " + shapeString(idx.shape) + " do not index data of shape " + shapeString(shape(n, 0)));
    return {in(n, 0)};
  }

  std::vector<ValueInfo> size(const Node&) { return {info({}, DType::Int64)}; }

  std::vector<ValueInfo> trilu(const Node& n) {
    if (shape(n, 0).size() < 2) fail(n, "input must have rank 2 or more");
    if (present(n, 1) && requireInts(n, 1, "k").size() != 1) fail(n, "k must be a scalar");
    return {in(n, 0)};
  }

  // Resize's output shape needs its scales (floats) or sizes as constants.
  std::vector<ValueInfo> resize(const Node& n) {
    std::optional<std::vector<float>> scales;
    if (present(n, 2)) {
      auto it = g_.initializers.find(n.inputs[2]);
      const bool empty = it != g_.initializers.end() && it->second.info.numElements() == 0;
      if (!empty && (it == g_.initializers.end() || it->second.isInt() || !it->second.hasData()))
        fail(n, "scales (input '" + n.inputs[2] + "') must be a constant float tensor");
      if (!empty) scales = it->second.data;
    }
    std::optional<std::vector<int64_t>> sizes;
    if (present(n, 3)) sizes = requireInts(n, 3, "sizes");
    return {info(planResize(n, shape(n, 0), scales, sizes).outShape, in(n, 0).dtype)};
  }

  std::vector<ValueInfo> instanceNorm(const Node& n) {
    const Shape& x = shape(n, 0);
    if (x.size() < 3) fail(n, "input must have rank 3 or more, has shape " + shapeString(x));
    for (size_t i = 1; i <= 2; ++i)
      if (shape(n, i) != Shape{x[1]})
        fail(n, std::string(i == 1 ? "scale" : "B") + " has shape " + shapeString(shape(n, i)) + ", the input has " +
                    str(x[1]) + " channels");
    return {in(n, 0)};
  }

  std::vector<ValueInfo> reduce(const Node& n) {
    const Shape& x = shape(n, 0);
    std::vector<int64_t> axes = attrOrInput(n, "axes", 1, "axes").value_or(std::vector<int64_t>{});
    bool keep = n.attrInt("keepdims", 1) != 0;
    if (axes.empty()) {
      if (n.attrInt("noop_with_empty_axes", 0)) return {in(n, 0)};
      for (size_t d = 0; d < x.size(); ++d)
        axes.push_back(int64_t(d));
    }
    std::vector<bool> reduced(x.size(), false);
    for (int64_t a : axes)
      reduced[size_t(normaliseAxis(n, a, int64_t(x.size())))] = true;
    Shape out;
    for (size_t d = 0; d < x.size(); ++d)
      if (!reduced[d])
        out.push_back(x[d]);
      else if (keep)
        out.push_back(1);
    return {info(out, in(n, 0).dtype)};
  }
};

void attachShapeRules(std::vector<OpDef>& table) {
  using Rule = std::vector<ValueInfo> (ShapeInferer::*)(const Node&);
  const std::map<std::string, Rule> rules = {
      {"Relu", &ShapeInferer::same},
      {"Clip", &ShapeInferer::same},
      {"Neg", &ShapeInferer::same},
      {"Abs", &ShapeInferer::same},
      {"Reciprocal", &ShapeInferer::same},
      {"Sigmoid", &ShapeInferer::same},
      {"Tanh", &ShapeInferer::same},
      {"Erf", &ShapeInferer::same},
      {"Exp", &ShapeInferer::same},
      {"Gelu", &ShapeInferer::same},
      {"Sqrt", &ShapeInferer::same},
      {"Identity", &ShapeInferer::same},
      {"Softmax", &ShapeInferer::softmax},
      {"Add", &ShapeInferer::broadcast},
      {"Sub", &ShapeInferer::broadcast},
      {"Mul", &ShapeInferer::broadcast},
      {"Div", &ShapeInferer::broadcast},
      {"Max", &ShapeInferer::broadcastVariadic},
      {"Min", &ShapeInferer::broadcastVariadic},
      {"Pow", &ShapeInferer::power},
      {"Conv", &ShapeInferer::conv},
      {"Gemm", &ShapeInferer::gemm},
      {"MatMul", &ShapeInferer::matmul},
      {"LayerNormalization", &ShapeInferer::layerNorm},
      {"BatchNormalization", &ShapeInferer::batchNorm},
      {"MaxPool", &ShapeInferer::pool},
      {"AveragePool", &ShapeInferer::pool},
      {"GlobalAveragePool", &ShapeInferer::globalPool},
      {"Flatten", &ShapeInferer::flatten},
      {"Reshape", &ShapeInferer::reshape},
      {"Transpose", &ShapeInferer::transpose},
      {"Concat", &ShapeInferer::concat},
      {"Slice", &ShapeInferer::slice},
      {"Gather", &ShapeInferer::gather},
      {"Squeeze", &ShapeInferer::squeeze},
      {"Unsqueeze", &ShapeInferer::unsqueeze},
      {"Split", &ShapeInferer::split},
      {"Pad", &ShapeInferer::pad},
      {"Constant", &ShapeInferer::constant},
      {"ReduceMean", &ShapeInferer::reduce},
      {"ReduceSum", &ShapeInferer::reduce},
      {"ReduceL1", &ShapeInferer::reduce},
      {"ReduceL2", &ShapeInferer::reduce},
      {"ReduceSumSquare", &ShapeInferer::reduce},
      {"ReduceLogSum", &ShapeInferer::reduce},
      {"ReduceLogSumExp", &ShapeInferer::reduce},
      {"LogSoftmax", &ShapeInferer::softmax},
      {"InstanceNormalization", &ShapeInferer::instanceNorm},
      {"Xor", &ShapeInferer::compare},
      {"Trilu", &ShapeInferer::trilu},
      {"Resize", &ShapeInferer::resize},
      {"ReduceMax", &ShapeInferer::reduce},
      {"ReduceMin", &ShapeInferer::reduce},
      {"Log", &ShapeInferer::same},
      {"Softplus", &ShapeInferer::same},
      {"Elu", &ShapeInferer::same},
      {"HardSigmoid", &ShapeInferer::same},
      {"HardSwish", &ShapeInferer::same},
      {"LeakyRelu", &ShapeInferer::same},
      {"Not", &ShapeInferer::logicalNot},
      {"Equal", &ShapeInferer::compare},
      {"Less", &ShapeInferer::compare},
      {"Greater", &ShapeInferer::compare},
      {"LessOrEqual", &ShapeInferer::compare},
      {"GreaterOrEqual", &ShapeInferer::compare},
      {"And", &ShapeInferer::compare},
      {"Or", &ShapeInferer::compare},
      {"Mod", &ShapeInferer::broadcast},
      {"Where", &ShapeInferer::where},
      {"Expand", &ShapeInferer::expand},
      {"Tile", &ShapeInferer::tile},
      {"ScatterND", &ShapeInferer::scatterND},
      {"Size", &ShapeInferer::size},
      {"ConstantOfShape", &ShapeInferer::constantOfShape},
      {"Range", &ShapeInferer::range},
      {"Shape", &ShapeInferer::shapeOf},
      {"Cast", &ShapeInferer::cast},
      {"Dropout", &ShapeInferer::dropout},
  };
  for (OpDef& d : table)
    if (auto r = rules.find(d.name); r != rules.end()) {
      Rule rule = r->second;
      d.infer = [rule](ShapeInferer& s, const Node& n) { return (s.*rule)(n); };
    }
}

void inferShapes(Graph& g) {
  ShapeInferer(g).run();
}

}  // namespace tessel::graph
