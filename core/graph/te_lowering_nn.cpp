// Convolution, matrix products, pooling, normalisation and reductions
// as tensor expressions: rules of TeLowerer (te_lowerer.h).
#include <algorithm>
#include <cmath>

#include "graph/shape_utils.h"
#include "graph/te_lowerer.h"

namespace tessel::graph {

using namespace lowering;

Val TeLowerer::padded(const Node& n, const Val& x, const Window& w, double value, const Perm& perm) {
  size_t sp = w.kernel.size();
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
  bool any = false;
  for (size_t d = 0; d < sp; ++d) {
    int64_t need = (w.outSize[d] - 1) * w.stride[d] + w.dilation[d] * (w.kernel[d] - 1) + 1;
    int64_t size = std::max(need, x.shape[2 + d] + w.padBegin[d]);
    shape.push_back(size);
    any |= w.padBegin[d] > 0 || size > x.shape[2 + d];
  }
  if (!any) return x;
  return compute(n.outputs[0] + "_pad", shape, perm, [&](const Indices& i) {
    Expr cond = intImm(1);
    Indices j = {i[0], i[1]};
    for (size_t d = 0; d < sp; ++d) {
      Expr y = i[2 + d] - w.padBegin[d];
      j.push_back(y);
      if (w.padBegin[d] > 0) cond = cond && (y >= intImm(0));
      if (shape[2 + d] > x.shape[2 + d] + w.padBegin[d]) cond = cond && (y < intImm(x.shape[2 + d]));
    }
    return te::select(cond, x.at(j), floatImm(value));
  });
}

void TeLowerer::conv(const Node& n) {
  Val x = in(n, 0), wt = in(n, 1);
  if (x.shape.size() < 3 || wt.shape.size() != x.shape.size())
    throw GraphError(n.describe() + ": input and weight must have the same rank (3 to 5)");
  size_t sp = x.shape.size() - 2;
  int64_t groups = n.attrInt("group", 1), c = x.shape[1], k = wt.shape[0], cg = wt.shape[1];
  if (groups <= 0 || c % groups || k % groups || cg * groups != c)
    throw GraphError(n.describe() + ": weight " + shapeString(wt.shape) + " does not match input " +
                     shapeString(x.shape) + " with group " + std::to_string(groups));
  std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  if (n.has("kernel_shape") && n.attrInts("kernel_shape") != kernel)
    throw GraphError(n.describe() + ": kernel_shape does not match the weight");
  Window w = windowOf(n, x.shape, kernel, false);
  const std::string& o = n.outputs[0];
  std::vector<int64_t> shape = {x.shape[0], k};
  shape.insert(shape.end(), w.outSize.begin(), w.outSize.end());
  Perm perm = outPerm(o, shape);
  Val p = padded(n, x, w, 0.0, perm);
  // Channels innermost in the reduction when they are innermost in storage.
  bool cLast = perm == kNHWC;
  std::vector<int64_t> extents;
  if (!cLast) extents.push_back(cg);
  extents.insert(extents.end(), kernel.begin(), kernel.end());
  if (cLast) extents.push_back(cg);
  int64_t kg = k / groups;
  bool bias = hasInput(n, 2);
  Val b = bias ? in(n, 2) : Val{};
  Val r =
      reduce(bias ? o + "_conv" : o, shape, perm, ReduceKind::Sum, extents, [&](const Indices& i, const Indices& rd) {
        Expr rc = cLast ? rd.back() : rd[0];
        Indices xi = {i[0], groups == 1 ? rc : (i[1] / kg) * cg + rc};
        Indices wi = {i[1], rc};
        for (size_t d = 0; d < sp; ++d) {
          Expr rr = rd[cLast ? d : d + 1];
          xi.push_back(i[2 + d] * w.stride[d] + rr * w.dilation[d]);
          wi.push_back(rr);
        }
        return p.at(xi) * wt.at(wi);
      });
  if (!bias) return set(n, 0, r);
  out(n, 0, shape, [&](const Indices& i) { return r.at(i) + b.at({i[1]}); });
}

void TeLowerer::gemm(const Node& n) {
  Val a = in(n, 0), bm = in(n, 1);
  if (a.shape.size() != 2 || bm.shape.size() != 2) throw GraphError(n.describe() + ": A and B must be 2-D");
  bool ta = n.attrInt("transA", 0), tb = n.attrInt("transB", 0);
  double alpha = n.attrFloat("alpha", 1.0), beta = n.attrFloat("beta", 1.0);
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t k2 = tb ? bm.shape[1] : bm.shape[0], nn = tb ? bm.shape[0] : bm.shape[1];
  if (k != k2)
    throw GraphError(n.describe() + ": inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(k2) +
                     ")");
  bool hasC = hasInput(n, 2) && beta != 0.0;
  bool epilogue = hasC || alpha != 1.0;
  const std::string& o = n.outputs[0];
  Val r = reduce(epilogue ? o + "_mm" : o, {m, nn}, {}, ReduceKind::Sum, {k}, [&](const Indices& i, const Indices& rd) {
    Expr av = ta ? a.at({rd[0], i[0]}) : a.at({i[0], rd[0]});
    Expr bv = tb ? bm.at({i[1], rd[0]}) : bm.at({rd[0], i[1]});
    return av * bv;
  });
  if (!epilogue) return set(n, 0, r);
  Val c = hasC ? in(n, 2) : Val{};
  if (hasC) broadcastShapes(n, {m, nn}, c.shape);
  out(n, 0, {m, nn}, [&](const Indices& i) {
    Expr v = alpha == 1.0 ? r.at(i) : r.at(i) * floatImm(alpha);
    if (hasC) v = v + (beta == 1.0 ? c.at(bcast(c, i)) : c.at(bcast(c, i)) * floatImm(beta));
    return v;
  });
}

void TeLowerer::matmul(const Node& n) {
  Val a = in(n, 0), b = in(n, 1);
  size_t ra = a.shape.size(), rb = b.shape.size();
  if (ra == 0 || rb == 0) throw GraphError(n.describe() + ": MatMul of a scalar");
  int64_t k = a.shape.back(), kb = rb == 1 ? b.shape[0] : b.shape[rb - 2];
  if (k != kb)
    throw GraphError(n.describe() + ": inner dimensions differ (" + shapeString(a.shape) + " x " +
                     shapeString(b.shape) + ")");
  std::vector<int64_t> ba = ra > 2 ? std::vector<int64_t>(a.shape.begin(), a.shape.end() - 2) : std::vector<int64_t>{};
  std::vector<int64_t> bb = rb > 2 ? std::vector<int64_t>(b.shape.begin(), b.shape.end() - 2) : std::vector<int64_t>{};
  std::vector<int64_t> batch = broadcastShapes(n, ba, bb), shape = batch;
  if (ra > 1) shape.push_back(a.shape[ra - 2]);
  if (rb > 1) shape.push_back(b.shape.back());
  size_t nb = batch.size();
  auto batchIdx = [&](const std::vector<int64_t>& own, const Indices& i) {
    Indices idx;
    size_t lead = nb - own.size();
    for (size_t d = 0; d < own.size(); ++d)
      idx.push_back(own[d] == 1 ? intImm(0) : i[lead + d]);
    return idx;
  };
  Val r = reduce(n.outputs[0], shape, outPerm(n.outputs[0], shape), ReduceKind::Sum, {k},
                 [&](const Indices& i, const Indices& rd) {
                   Expr av, bv;
                   if (ra == 1) {
                     av = a.at({rd[0]});
                   } else {
                     Indices ai = batchIdx(ba, i);
                     ai.push_back(i[nb]);
                     ai.push_back(rd[0]);
                     av = a.at(ai);
                   }
                   if (rb == 1) {
                     bv = b.at({rd[0]});
                   } else {
                     Indices bi = batchIdx(bb, i);
                     bi.push_back(rd[0]);
                     bi.push_back(i.back());
                     bv = b.at(bi);
                   }
                   return av * bv;
                 });
  set(n, 0, r);
}

void TeLowerer::reduceLogSumExp(const Node& n) {
  Val x = in(n, 0);
  const std::string& o = n.outputs[0];
  Node maxNode = n;
  maxNode.outputs = {o + "_max"};
  reduceAxes(maxNode, ReduceKind::Max, false);
  const Val mx = vals_.at(o + "_max");
  const size_t rank = x.shape.size();
  const bool keep = n.attrInt("keepdims", 1) != 0;
  std::vector<int64_t> axes = axesOf(n, 1);
  std::vector<bool> red(rank, axes.empty());
  for (int64_t a : axes)
    red[size_t(normaliseAxis(n, a, int64_t(rank)))] = true;
  auto outerOf = [&](const Indices& i) {
    Indices j;
    for (size_t d = 0; d < rank; ++d)
      if (!red[d])
        j.push_back(i[d]);
      else if (keep)
        j.push_back(intImm(0));
    return j;
  };
  Val shifted = compute(o + "_shifted", x.shape, {},
                        [&](const Indices& i) { return te::call(te::CallFn::Exp, {x.at(i) - mx.at(outerOf(i))}); });
  Node sumNode = n;
  sumNode.inputs[0] = o + "_shifted";
  sumNode.outputs = {o + "_sum"};
  vals_[o + "_shifted"] = shifted;
  reduceAxes(sumNode, ReduceKind::Sum, false);
  const Val sum = vals_.at(o + "_sum");
  out(n, 0, mx.shape, [&](const Indices& i) { return mx.at(i) + te::call(te::CallFn::Log, {sum.at(i)}); });
}

void TeLowerer::instanceNorm(const Node& n) {
  Val x = in(n, 0), scale = in(n, 1), bias = in(n, 2);
  const double eps = n.attrFloat("epsilon", 1e-5);
  std::vector<int64_t> outer = {x.shape[0], x.shape[1]};
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  const double invN = 1.0 / double(product(spatial));
  auto full = [](const Indices& nc, const Indices& r) {
    Indices j = nc;
    j.insert(j.end(), r.begin(), r.end());
    return j;
  };
  const std::string& o = n.outputs[0];
  Val sum = reduce(o + "_sum", outer, {}, ReduceKind::Sum, spatial,
                   [&](const Indices& i, const Indices& r) { return x.at(full(i, r)); });
  Val var = reduce(o + "_var", outer, {}, ReduceKind::Sum, spatial, [&](const Indices& i, const Indices& r) {
    Expr d = x.at(full(i, r)) - sum.at(i) * floatImm(invN);
    return d * d;
  });
  out(n, 0, x.shape, [&](const Indices& i) {
    const Indices nc = {i[0], i[1]};
    Expr rstd = floatImm(1.0) / te::call(te::CallFn::Sqrt, {var.at(nc) * floatImm(invN) + floatImm(eps)});
    return (x.at(i) - sum.at(nc) * floatImm(invN)) * rstd * scale.at({i[1]}) + bias.at({i[1]});
  });
}

void TeLowerer::softmaxOf(const Node& n, bool log) {
  Val x = in(n, 0);
  size_t rank = x.shape.size();
  if (rank == 0) throw GraphError(n.describe() + ": Softmax of a scalar");
  size_t axis = size_t(axisAttr(n, "axis", -1, rank));
  std::vector<int64_t> outer = x.shape;
  outer.erase(outer.begin() + long(axis));
  int64_t len = x.shape[axis];
  const std::string& o = n.outputs[0];
  Val mx = reduce(o + "_max", outer, {}, ReduceKind::Max, {len},
                  [&](const Indices& i, const Indices& r) { return x.at(withAxis(i, axis, r[0])); });
  Val ex = compute(o + "_exp", x.shape, {}, [&](const Indices& i) {
    return te::call(te::CallFn::Exp, {x.at(i) - mx.at(withoutAxis(i, axis))});
  });
  Val sum = reduce(o + "_sum", outer, {}, ReduceKind::Sum, {len},
                   [&](const Indices& i, const Indices& r) { return ex.at(withAxis(i, axis, r[0])); });
  if (log) {
    out(n, 0, x.shape, [&](const Indices& i) {
      const Indices j = withoutAxis(i, axis);
      return x.at(i) - mx.at(j) - te::call(te::CallFn::Log, {sum.at(j)});
    });
    return;
  }
  out(n, 0, x.shape, [&](const Indices& i) { return ex.at(i) / sum.at(withoutAxis(i, axis)); });
}

void TeLowerer::layerNorm(const Node& n) {
  Val x = in(n, 0), scale = in(n, 1);
  size_t rank = x.shape.size();
  size_t axis = size_t(axisAttr(n, "axis", -1, rank));
  double eps = n.attrFloat("epsilon", 1e-5);
  std::vector<int64_t> outer(x.shape.begin(), x.shape.begin() + long(axis));
  std::vector<int64_t> inner(x.shape.begin() + long(axis), x.shape.end());
  double invN = 1.0 / double(product(inner));
  bool hasB = hasInput(n, 2);
  Val bias = hasB ? in(n, 2) : Val{};
  broadcastShapes(n, x.shape, scale.shape);
  if (hasB) broadcastShapes(n, x.shape, bias.shape);
  const std::string& o = n.outputs[0];
  auto full = [&](const Indices& i, const Indices& r) {
    Indices j(i.begin(), i.begin() + long(axis));
    j.insert(j.end(), r.begin(), r.end());
    return j;
  };
  auto outerOf = [&](const Indices& i) { return Indices(i.begin(), i.begin() + long(axis)); };
  Val sum = reduce(o + "_sum", outer, {}, ReduceKind::Sum, inner,
                   [&](const Indices& i, const Indices& r) { return x.at(full(i, r)); });
  Val var = reduce(o + "_var", outer, {}, ReduceKind::Sum, inner, [&](const Indices& i, const Indices& r) {
    Expr d = x.at(full(i, r)) - sum.at(i) * floatImm(invN);
    return d * d;
  });
  auto rstd = [&](const Indices& oi) {
    return floatImm(1.0) / te::call(te::CallFn::Sqrt, {var.at(oi) * floatImm(invN) + floatImm(eps)});
  };
  out(n, 0, x.shape, [&](const Indices& i) {
    Expr v = (x.at(i) - sum.at(outerOf(i)) * floatImm(invN)) * rstd(outerOf(i)) * scale.at(bcast(scale, i));
    return hasB ? v + bias.at(bcast(bias, i)) : v;
  });
  // Optional Mean and InvStdDev: outer dims then ones.
  std::vector<int64_t> statShape = outer;
  statShape.resize(rank, 1);
  for (size_t k = 1; k < 3 && k < n.outputs.size(); ++k) {
    if (n.outputs[k].empty()) continue;
    out(n, k, statShape, [&](const Indices& i) {
      Indices oi(i.begin(), i.begin() + long(axis));
      return k == 1 ? sum.at(oi) * floatImm(invN) : rstd(oi);
    });
  }
}

void TeLowerer::batchNorm(const Node& n) {
  if (n.attrInt("training_mode", 0)) throw GraphError(n.describe() + ": training_mode is not supported");
  unusedExtraOutputs(n, 1);
  Val x = in(n, 0), scale = in(n, 1), b = in(n, 2), mean = in(n, 3), var = in(n, 4);
  if (x.shape.size() < 2) throw GraphError(n.describe() + ": input must have a channel axis");
  int64_t c = x.shape[1];
  for (const Val* v : {&scale, &b, &mean, &var})
    if (v->shape != std::vector<int64_t>{c})
      throw GraphError(n.describe() + ": parameters must have shape [" + std::to_string(c) + "]");
  double eps = n.attrFloat("epsilon", 1e-5);
  const std::string& o = n.outputs[0];
  Val s = compute(o + "_scale", {c}, {}, [&](const Indices& i) {
    return scale.at(i) / te::call(te::CallFn::Sqrt, {var.at(i) + floatImm(eps)});
  });
  Val sh = compute(o + "_shift", {c}, {}, [&](const Indices& i) { return b.at(i) - mean.at(i) * s.at(i); });
  out(n, 0, x.shape, [&](const Indices& i) { return x.at(i) * s.at({i[1]}) + sh.at({i[1]}); });
}

void TeLowerer::pool(const Node& n, bool isMax) {
  if (isMax) unusedExtraOutputs(n, 1);
  Val x = in(n, 0);
  if (x.shape.size() < 3) throw GraphError(n.describe() + ": input must be N x C x spatial");
  if (!n.has("kernel_shape")) throw GraphError(n.describe() + ": kernel_shape is required");
  if (!isMax && n.has("dilations"))
    for (int64_t d : n.attrInts("dilations"))
      if (d != 1) throw GraphError(n.describe() + ": AveragePool with dilations is not supported");
  Window w = windowOf(n, x.shape, n.attrInts("kernel_shape"), n.attrInt("ceil_mode", 0) != 0);
  size_t sp = w.kernel.size();
  const std::string& o = n.outputs[0];
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
  shape.insert(shape.end(), w.outSize.begin(), w.outSize.end());
  Perm perm = outPerm(o, shape);
  Val p = padded(n, x, w, isMax ? -std::numeric_limits<double>::infinity() : 0.0, perm);
  auto body = [&](const Indices& i, const Indices& r) {
    Indices j = {i[0], i[1]};
    for (size_t d = 0; d < sp; ++d)
      j.push_back(i[2 + d] * w.stride[d] + r[d] * w.dilation[d]);
    return p.at(j);
  };
  if (isMax) return set(n, 0, reduce(o, shape, perm, ReduceKind::Max, w.kernel, body));
  Val sum = reduce(o + "_sum", shape, perm, ReduceKind::Sum, w.kernel, body);
  bool includePad = n.attrInt("count_include_pad", 0) != 0;
  // The divisor is constant unless some window covers elements that do not count.
  bool constant = true;
  for (size_t d = 0; d < sp; ++d) {
    int64_t covered = (w.outSize[d] - 1) * w.stride[d] + w.kernel[d];  // padded extent the windows span
    int64_t lo = includePad ? 0 : w.padBegin[d];
    int64_t hi = includePad ? x.shape[2 + d] + w.padBegin[d] + w.padEnd[d] : x.shape[2 + d] + w.padBegin[d];
    if (lo > 0 || covered > hi) constant = false;
  }
  out(n, 0, shape, [&](const Indices& i) {
    if (constant) return sum.at(i) * floatImm(1.0 / double(product(w.kernel)));
    Expr count = intImm(1);
    for (size_t d = 0; d < sp; ++d) {
      int64_t lo = includePad ? -w.padBegin[d] : 0;
      int64_t hi = includePad ? x.shape[2 + d] + w.padEnd[d] : x.shape[2 + d];
      Expr start = i[2 + d] * w.stride[d] - w.padBegin[d];
      count = count * (minI(start + w.kernel[d], intImm(hi)) - maxI(start, intImm(lo)));
    }
    return sum.at(i) / te::cast(te::DType::Float32, count);
  });
}

void TeLowerer::globalPool(const Node& n) {
  Val x = in(n, 0);
  if (x.shape.size() < 3) throw GraphError(n.describe() + ": input must be N x C x spatial");
  std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  std::vector<int64_t> shape = {x.shape[0], x.shape[1]};
  shape.resize(x.shape.size(), 1);
  const std::string& o = n.outputs[0];
  Perm perm = outPerm(o, shape);
  Val sum = reduce(o + "_sum", shape, perm, ReduceKind::Sum, spatial, [&](const Indices& i, const Indices& r) {
    Indices j = {i[0], i[1]};
    j.insert(j.end(), r.begin(), r.end());
    return x.at(j);
  });
  out(n, 0, shape, [&](const Indices& i) { return sum.at(i) * floatImm(1.0 / double(product(spatial))); });
}

void TeLowerer::reduceAxes(const Node& n, ReduceKind kind, bool mean, const ExprFn& pre, const ExprFn& post) {
  Val x = in(n, 0);
  size_t rank = x.shape.size();
  std::vector<int64_t> axes = axesOf(n, 1);
  bool keep = n.attrInt("keepdims", 1) != 0;
  if (axes.empty() && n.attrInt("noop_with_empty_axes", 0)) return set(n, 0, x);
  std::vector<bool> red(rank, axes.empty());
  for (int64_t a : axes)
    red[size_t(normaliseAxis(n, a, int64_t(rank)))] = true;
  std::vector<int64_t> shape, extents;
  for (size_t d = 0; d < rank; ++d) {
    if (red[d]) extents.push_back(x.shape[d]);
    if (!red[d] || keep) shape.push_back(red[d] ? 1 : x.shape[d]);
  }
  if (extents.empty()) return set(n, 0, x);
  const std::string& o = n.outputs[0];
  auto body = [&](const Indices& i, const Indices& r) {
    Indices j;
    size_t k = 0, q = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (red[d]) {
        j.push_back(r[k++]);
        if (keep) ++q;
      } else {
        j.push_back(i[q++]);
      }
    }
    return pre ? pre(x.at(j)) : x.at(j);
  };
  if (post) {
    Val r = reduce(o + "_red", shape, {}, kind, extents, body);
    out(n, 0, shape, [&](const Indices& i) { return post(r.at(i)); });
    return;
  }
  if (!mean) {
    set(n, 0, reduce(o, shape, outPerm(o, shape), kind, extents, body));
    return;
  }
  Val sum = reduce(o + "_sum", shape, {}, ReduceKind::Sum, extents, body);
  out(n, 0, shape, [&](const Indices& i) { return sum.at(i) * floatImm(1.0 / double(product(extents))); });
}

}  // namespace tessel::graph
