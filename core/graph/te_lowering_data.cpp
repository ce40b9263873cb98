// Element-wise ops (arithmetic, activations, comparisons) and data movement (reshapes,
// transposes, slices, gathers, padding, broadcasting)
// as tensor expressions: rules of TeLowerer (te_lowerer.h).
#include <algorithm>
#include <cmath>

#include "graph/shape_utils.h"
#include "graph/te_lowerer.h"

namespace tessel::graph {

using namespace lowering;

void TeLowerer::dropout(const Node& n) {
  const Val x = in(n, 0);
  set(n, 0, x);
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) out(n, 1, x.shape, [](const Indices&) { return floatImm(1.0); });
}

void TeLowerer::cast(const Node& n) {
  if (dtypeFromOnnx(n.attrInt("to", 1)) != DType::Float32)
    throw GraphError(n.describe() + ": only casts to float32 are supported");
  set(n, 0, in(n, 0));
}

void TeLowerer::binary(const Node& n, const std::function<Expr(const Expr&, const Expr&)>& combine, bool variadic) {
  std::vector<Val> ins;
  std::vector<int64_t> shape;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i].empty()) continue;
    ins.push_back(in(n, i));
    shape = ins.size() == 1 ? ins.back().shape : broadcastShapes(n, shape, ins.back().shape);
  }
  if (ins.empty()) throw GraphError(n.describe() + ": has no inputs");
  if (!variadic && ins.size() != 2) throw GraphError(n.describe() + ": needs two inputs");
  out(n, 0, shape, [&](const Indices& i) {
    Expr acc = ins[0].at(bcast(ins[0], i));
    for (size_t k = 1; k < ins.size(); ++k)
      acc = combine(acc, ins[k].at(bcast(ins[k], i)));
    return acc;
  });
}

void TeLowerer::power(const Node& n) {
  if (!hasInput(n, 0) || !hasInput(n, 1)) throw GraphError(n.describe() + ": needs two inputs");
  Val x = in(n, 0);
  auto c = constFloats(n.inputs[1]);
  if (c && c->size() == 1 && info(n.inputs[1])->shape.size() <= x.shape.size()) {
    const float e = (*c)[0];
    out(n, 0, broadcastShapes(n, x.shape, info(n.inputs[1])->shape), [&](const Indices& i) {
      Expr v = x.at(bcast(x, i));
      if (e == 2.0f) return v * v;
      if (e == 1.0f) return v;
      if (e == 0.5f) return te::call(te::CallFn::Sqrt, {v});
      if (e == 3.0f) return v * v * v;
      return te::call(te::CallFn::Pow, {v, floatImm(e)});
    });
    return;
  }
  binary(
      n,
      [](const Expr& a, const Expr& b) {
        return te::call(te::CallFn::Pow, {a, b});
      },
      false);
}

void TeLowerer::map(const Node& n, const std::function<Expr(const Expr&)>& f) {
  Val x = in(n, 0);
  out(n, 0, x.shape, [&](const Indices& i) { return f(x.at(i)); });
}

void TeLowerer::clip(const Node& n) {
  std::optional<Expr> lo = scalarOperand(n, 1), hi = scalarOperand(n, 2);
  if (!lo && n.has("min")) lo = floatImm(n.attrFloat("min", 0));
  if (!hi && n.has("max")) hi = floatImm(n.attrFloat("max", 0));
  map(n, [&](const Expr& v) {
    Expr r = v;
    if (lo) r = te::maxExpr(r, *lo);
    if (hi) r = te::minExpr(r, *hi);
    return r;
  });
}

void TeLowerer::gelu(const Node& n) {
  using te::call;
  using te::CallFn;
  const std::string approx = n.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh") throw GraphError(n.describe() + ": unknown approximate '" + approx + "'");
  map(n, [&](const Expr& v) -> Expr {
    if (approx == "tanh") {
      Expr inner = floatImm(std::sqrt(2.0 / M_PI)) * (v + floatImm(0.044715) * v * v * v);
      return floatImm(0.5) * v * (floatImm(1.0) + call(CallFn::Tanh, {inner}));
    }
    return floatImm(0.5) * v * (floatImm(1.0) + call(CallFn::Erf, {v * floatImm(M_SQRT1_2)}));
  });
}

void TeLowerer::reshapeTo(const Node& n, const Val& x, const std::vector<int64_t>& shape) {
  if (product(shape) != product(x.shape))
    throw GraphError(n.describe() + ": cannot reshape " + shapeString(x.shape) + " to " + shapeString(shape));
  std::vector<int64_t> a, b;
  for (int64_t d : x.shape)
    if (d != 1) a.push_back(d);
  for (int64_t d : shape)
    if (d != 1) b.push_back(d);
  if (a == b) {  // only unit dimensions change: map indices directly
    out(n, 0, shape, [&](const Indices& i) {
      Indices nonUnit;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] != 1) nonUnit.push_back(i[d]);
      Indices j;
      size_t k = 0;
      for (int64_t d : x.shape)
        j.push_back(d == 1 ? intImm(0) : nonUnit[k++]);
      return x.at(j);
    });
    return;
  }
  std::vector<int64_t> os = rowMajorStrides(shape), is = rowMajorStrides(x.shape);
  out(n, 0, shape, [&](const Indices& i) {
    Expr lin = intImm(0);
    for (size_t d = 0; d < shape.size(); ++d)
      lin = lin + i[d] * os[d];
    Indices j;
    for (size_t d = 0; d < x.shape.size(); ++d) {
      Expr v = lin;
      if (is[d] != 1) v = v / is[d];
      if (d > 0) v = v % x.shape[d];
      j.push_back(v);
    }
    return x.at(j);
  });
}

void TeLowerer::reshapeLike(const Node& n) {
  const ValueInfo* o = info(n.outputs[0]);
  if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
  reshapeTo(n, in(n, 0), o->shape);
}

void TeLowerer::transpose(const Node& n) {
  Val x = in(n, 0);
  size_t rank = x.shape.size();
  std::vector<int64_t> perm = n.attrInts("perm");
  if (perm.empty())
    for (size_t d = rank; d-- > 0;)
      perm.push_back(int64_t(d));
  if (perm.size() != rank) throw GraphError(n.describe() + ": perm does not match the rank");
  std::vector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(x.shape.at(size_t(normaliseAxis(n, p, int64_t(rank)))));
  out(n, 0, shape, [&](const Indices& i) {
    Indices j(rank);
    for (size_t d = 0; d < rank; ++d)
      j[size_t(normaliseAxis(n, perm[d], int64_t(rank)))] = i[d];
    return x.at(j);
  });
}

void TeLowerer::concat(const Node& n) {
  std::vector<Val> ins;
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (hasInput(n, i)) ins.push_back(in(n, i));
  if (ins.empty()) throw GraphError(n.describe() + ": has no inputs");
  size_t rank = ins[0].shape.size();
  size_t axis = size_t(axisAttr(n, "axis", 0, rank));
  std::vector<int64_t> shape = ins[0].shape;
  shape[axis] = 0;
  for (const Val& v : ins) {
    if (v.shape.size() != rank) throw GraphError(n.describe() + ": inputs have different ranks");
    for (size_t d = 0; d < rank; ++d)
      if (d != axis && v.shape[d] != shape[d]) throw GraphError(n.describe() + ": input shapes differ off the axis");
    shape[axis] += v.shape[axis];
  }
  out(n, 0, shape, [&](const Indices& i) {
    // Last input first, then wrap the earlier ones in selects.
    int64_t offset = shape[axis] - ins.back().shape[axis];
    Indices j = i;
    j[axis] = i[axis] - offset;
    Expr e = ins.back().at(j);
    for (size_t k = ins.size() - 1; k-- > 0;) {
      offset -= ins[k].shape[axis];
      Indices jk = i;
      jk[axis] = i[axis] - offset;
      e = te::select(i[axis] < intImm(offset + ins[k].shape[axis]), ins[k].at(jk), e);
    }
    return e;
  });
}

void TeLowerer::slice(const Node& n) {
  Val x = in(n, 0);
  const std::vector<SliceRange> r =
      sliceOf(n, x.shape, [&](size_t i, const char* what) { return needInts(n, i, what); });
  std::vector<int64_t> shape;
  for (const SliceRange& s : r)
    shape.push_back(s.count);
  out(n, 0, shape, [&](const Indices& i) {
    Indices j;
    for (size_t d = 0; d < r.size(); ++d)
      j.push_back(i[d] * r[d].step + r[d].start);
    return x.at(j);
  });
}

void TeLowerer::gather(const Node& n) {
  Val x = in(n, 0);
  if (!hasInput(n, 1)) throw GraphError(n.describe() + ": needs indices");
  auto idx = constInts(n.inputs[1]);
  if (!idx)
    throw GraphError(n.describe() + ": indices '" + n.inputs[1] +
                     "' are not constant; only Gather with constant (initializer) indices can be lowered");
  const ValueInfo* ii = info(n.inputs[1]);
  std::vector<int64_t> ishape = ii ? ii->shape : std::vector<int64_t>{int64_t(idx->size())};
  if (product(ishape) != int64_t(idx->size())) throw GraphError(n.describe() + ": indices have the wrong size");
  size_t rank = x.shape.size();
  size_t axis = size_t(axisAttr(n, "axis", 0, rank));
  int64_t dim = x.shape[axis];
  std::vector<int64_t> table;
  for (int64_t v : *idx) {
    if (v < -dim || v >= dim) throw GraphError(n.describe() + ": index " + std::to_string(v) + " out of range");
    table.push_back(v < 0 ? v + dim : v);
  }
  bool affine = true;
  for (size_t p = 2; p < table.size() && affine; ++p)
    affine = table[p] - table[p - 1] == table[1] - table[0];
  std::vector<int64_t> shape(x.shape.begin(), x.shape.begin() + long(axis));
  shape.insert(shape.end(), ishape.begin(), ishape.end());
  shape.insert(shape.end(), x.shape.begin() + long(axis) + 1, x.shape.end());
  std::vector<int64_t> is = rowMajorStrides(ishape);
  out(n, 0, shape, [&](const Indices& i) {
    Expr pos = intImm(0);
    for (size_t d = 0; d < ishape.size(); ++d)
      pos = pos + i[axis + d] * is[d];
    Expr src;
    if (affine) {
      src = table.size() == 1 ? intImm(table[0]) : pos * (table[1] - table[0]) + table[0];
    } else {
      src = intImm(table.back());
      for (size_t p = table.size() - 1; p-- > 0;)
        src = te::select(te::binary(te::ExprKind::EQ, pos, intImm(int64_t(p))), intImm(table[p]), src);
    }
    Indices j(i.begin(), i.begin() + long(axis));
    j.push_back(src);
    j.insert(j.end(), i.begin() + long(axis + ishape.size()), i.end());
    return x.at(j);
  });
}

void TeLowerer::split(const Node& n) {
  Val x = in(n, 0);
  size_t rank = x.shape.size();
  size_t axis = size_t(axisAttr(n, "axis", 0, rank));
  int64_t dim = x.shape[axis];
  std::vector<int64_t> sizes = hasInput(n, 1) ? needInts(n, 1, "split") : n.attrInts("split");
  size_t parts = n.outputs.size();
  if (sizes.empty()) {
    int64_t num = n.attrInt("num_outputs", int64_t(parts));
    int64_t chunk = (dim + num - 1) / num;
    for (int64_t k = 0; k < num; ++k)
      sizes.push_back(std::min(chunk, dim - k * chunk));
  }
  if (sizes.size() != parts) throw GraphError(n.describe() + ": split sizes do not match the outputs");
  int64_t offset = 0;
  for (size_t k = 0; k < parts; ++k) {
    std::vector<int64_t> shape = x.shape;
    shape[axis] = sizes[k];
    if (!n.outputs[k].empty())
      out(n, k, shape, [&](const Indices& i) {
        Indices j = i;
        j[axis] = i[axis] + offset;
        return x.at(j);
      });
    offset += sizes[k];
  }
  if (offset != dim) throw GraphError(n.describe() + ": split sizes do not add up to " + std::to_string(dim));
}

void TeLowerer::pad(const Node& n) {
  Val x = in(n, 0);
  size_t rank = x.shape.size();
  std::string mode = n.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    throw GraphError(n.describe() + ": mode '" + mode + "' is not supported");
  std::vector<int64_t> pads = hasInput(n, 1) ? needInts(n, 1, "pads") : n.attrInts("pads");
  std::vector<int64_t> axes;
  if (hasInput(n, 3)) {
    axes = needInts(n, 3, "axes");
  } else {
    for (size_t d = 0; d < rank; ++d)
      axes.push_back(int64_t(d));
  }
  if (pads.size() != 2 * axes.size()) throw GraphError(n.describe() + ": pads has the wrong length");
  std::vector<int64_t> before(rank, 0), after(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    size_t a = size_t(normaliseAxis(n, axes[k], int64_t(rank)));
    before[a] = pads[k];
    after[a] = pads[axes.size() + k];
  }
  Expr value = floatImm(n.attrFloat("value", 0.0));
  if (mode == "constant")
    if (auto v = scalarOperand(n, 2)) value = *v;
  std::vector<int64_t> shape;
  for (size_t d = 0; d < rank; ++d) {
    shape.push_back(x.shape[d] + before[d] + after[d]);
    if (mode == "reflect" && (before[d] >= x.shape[d] || after[d] >= x.shape[d]))
      throw GraphError(n.describe() + ": reflect pads must be smaller than the dimension");
  }
  out(n, 0, shape, [&](const Indices& i) {
    Expr cond = intImm(1);
    Indices j;
    for (size_t d = 0; d < rank; ++d) {
      Expr y = i[d] - before[d];
      int64_t len = x.shape[d];
      if (mode == "constant") {
        if (before[d] > 0) cond = cond && (y >= intImm(0));
        if (after[d] > 0) cond = cond && (y < intImm(len));
      } else if (mode == "edge") {
        if (before[d] > 0) y = maxI(y, intImm(0));
        if (after[d] > 0) y = minI(y, intImm(len - 1));
      } else {
        if (before[d] > 0) y = te::select(y < intImm(0), intImm(0) - y, y);
        if (after[d] > 0) y = te::select(y >= intImm(len), intImm(2 * (len - 1)) - y, y);
      }
      j.push_back(y);
    }
    return mode == "constant" ? te::select(cond, x.at(j), value) : x.at(j);
  });
}

void TeLowerer::where(const Node& n) {
  Val c = in(n, 0), x = in(n, 1), y = in(n, 2);
  std::vector<int64_t> shape = broadcastShapes(n, broadcastShapes(n, c.shape, x.shape), y.shape);
  out(n, 0, shape, [&](const Indices& i) {
    return te::select(te::binary(te::ExprKind::NE, c.at(bcast(c, i)), floatImm(0.0)), x.at(bcast(x, i)),
                      y.at(bcast(y, i)));
  });
}

void TeLowerer::expand(const Node& n) {
  Val x = in(n, 0);
  const ValueInfo* o = info(n.outputs[0]);
  if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
  out(n, 0, o->shape, [&](const Indices& i) { return x.at(bcast(x, i)); });
}

void TeLowerer::tile(const Node& n) {
  Val x = in(n, 0);
  const ValueInfo* o = info(n.outputs[0]);
  if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
  out(n, 0, o->shape, [&](const Indices& i) {
    Indices j;
    for (size_t d = 0; d < i.size(); ++d)
      j.push_back(x.shape[d] == o->shape[d] ? i[d] : i[d] % x.shape[d]);
    return x.at(j);
  });
}

void TeLowerer::trilu(const Node& n) {
  Val x = in(n, 0);
  const int64_t k = hasInput(n, 1) ? needInts(n, 1, "k").at(0) : 0;
  const bool upper = n.attrInt("upper", 1) != 0;
  const size_t r = x.shape.size();
  out(n, 0, x.shape, [&](const Indices& i) {
    Expr diff = i[r - 1] - i[r - 2];
    Expr keep = upper ? diff >= intImm(k) : diff <= intImm(k);
    return te::select(keep, x.at(i), floatImm(0.0));
  });
}

void TeLowerer::constantOfShape(const Node& n) {
  const ValueInfo* o = info(n.outputs[0]);
  if (!o) throw GraphError(n.describe() + ": output shape unknown (run inferShapes first)");
  const double v = n.has("value") ? n.attrFloat("value", 0) : 0;
  out(n, 0, o->shape, [&](const Indices&) { return floatImm(v); });
}

void TeLowerer::range(const Node& n) {
  auto start = constFloats(n.inputs.at(0)), delta = constFloats(n.inputs.at(2));
  if (!start || !delta) throw GraphError(n.describe() + ": start and delta must be float constants");
  const ValueInfo* o = info(n.outputs[0]);
  out(n, 0, o->shape, [&](const Indices& i) {
    return floatImm((*start)[0]) + te::cast(te::DType::Float32, i[0]) * floatImm((*delta)[0]);
  });
}

void TeLowerer::mod(const Node& n) {
  if (n.attrInt("fmod", 0) == 0)
    throw UnsupportedError(n.describe() + ": integer Mod (fmod=0) of computed values is not supported");
  binary(
      n,
      [](const Expr& a, const Expr& b) {
        return a - te::cast(te::DType::Float32, te::cast(te::DType::Int32, a / b)) * b;
      },
      false);
}

void TeLowerer::unsupportedComputed(const Node& n) {
  throw UnsupportedError(n.describe() + ": " + n.op +
                         " of computed values is not supported (Tessel evaluates it when its inputs are constants)");
}

}  // namespace tessel::graph
