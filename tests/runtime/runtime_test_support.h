// What the graph executor tests share: arrays with their shapes, a graph
// built by hand whose outputs are checked against references, and the
// references themselves, computed with plain loops.
#pragma once

#include <QtTest>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "frontend/model_loader.h"
#include "graph/graph.h"
#include "graph/te_lowering.h"
#include "runtime/graph_executor.h"

namespace runtime_test {

using namespace tessel;
using graph::AttrValue;
using graph::Graph;
using graph::Node;
using runtime::GraphExecutor;
using runtime::HostTensor;

using Shape = std::vector<int64_t>;

struct Arr {
  Shape shape;
  std::vector<float> data;
  int64_t size() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  int64_t offset(const Shape& idx) const {
    int64_t off = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      off = off * shape[d] + idx[d];
    return off;
  }
  float& at(const Shape& idx) { return data[size_t(offset(idx))]; }
  float at(const Shape& idx) const { return data[size_t(offset(idx))]; }
};

inline Arr zeros(const Shape& s) {
  Arr a{s, {}};
  a.data.assign(size_t(a.size()), 0.f);
  return a;
}

inline Arr randomArr(const Shape& s, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Arr a = zeros(s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (float& x : a.data)
    x = u(rng);
  return a;
}

// Calls f for every multi-index of `shape`.
inline void forEach(const Shape& shape, const std::function<void(const Shape&)>& f) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  Shape idx(shape.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    f(idx);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Element of a (right-aligned, broadcast) operand for an output index.
inline float bcastAt(const Arr& a, const Shape& out) {
  Shape idx;
  size_t lead = out.size() - a.shape.size();
  for (size_t d = 0; d < a.shape.size(); ++d)
    idx.push_back(a.shape[d] == 1 ? 0 : out[lead + d]);
  return a.at(idx);
}

inline Arr mapArr(const Arr& a, const std::function<float(float)>& f) {
  Arr r = a;
  for (float& x : r.data)
    x = f(x);
  return r;
}

inline Arr binaryRef(const Arr& a, const Arr& b, const Shape& out, const std::function<float(float, float)>& f) {
  Arr r = zeros(out);
  forEach(out, [&](const Shape& i) { r.at(i) = f(bcastAt(a, i), bcastAt(b, i)); });
  return r;
}

// A graph built by hand; node outputs get the shapes the test states.
struct Builder {
  Graph g;
  std::map<std::string, HostTensor> feeds;
  std::map<std::string, Arr> arrays;
  uint32_t seed = 1;

  Arr input(const std::string& name, const Shape& s, float lo = -1.f, float hi = 1.f) {
    Arr a = randomArr(s, seed++, lo, hi);
    g.inputs.push_back({name, s, graph::DType::Float32});
    g.values[name] = {name, s, graph::DType::Float32};
    feeds[name] = {s, a.data};
    arrays[name] = a;
    return a;
  }
  Arr weight(const std::string& name, const Shape& s, float lo = -1.f, float hi = 1.f) {
    Arr a = randomArr(s, seed++, lo, hi);
    graph::Initializer init;
    init.info = {name, s, graph::DType::Float32};
    init.data = a.data;
    g.initializers[name] = init;
    g.values[name] = init.info;
    arrays[name] = a;
    return a;
  }
  void ints(const std::string& name, const std::vector<int64_t>& v, Shape s = {-1}) {
    if (s == Shape{-1}) s = {int64_t(v.size())};
    graph::Initializer init;
    init.info = {name, s, graph::DType::Int64};
    init.ints = v;
    g.initializers[name] = init;
    g.values[name] = init.info;
  }
  void node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
            std::vector<Shape> outShapes, std::map<std::string, AttrValue> attrs = {}) {
    Node n;
    n.name = "n" + std::to_string(g.nodes.size()) + "_" + op;
    n.op = op;
    n.inputs = std::move(ins);
    n.outputs = outs;
    n.attrs = std::move(attrs);
    for (size_t i = 0; i < outs.size(); ++i)
      if (!outs[i].empty()) g.values[outs[i]] = {outs[i], outShapes.at(i), graph::DType::Float32};
    g.nodes.push_back(n);
  }
  // A node whose (single) output is a graph output compared with `want`.
  void check(const std::string& op, std::vector<std::string> ins, const std::string& out, const Arr& want,
             std::map<std::string, AttrValue> attrs = {}) {
    node(op, std::move(ins), {out}, {want.shape}, std::move(attrs));
    g.outputs.push_back(out);
    expected[out] = want;
  }
  std::map<std::string, Arr> expected;
};

inline bool compare(const std::map<std::string, HostTensor>& got, const std::map<std::string, Arr>& want, QString* why,
                    double tol = 1e-4) {
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      *why = QString("missing output %1").arg(QString::fromStdString(name));
      return false;
    }
    if (it->second.shape != w.shape) {
      *why = QString("output %1: wrong shape").arg(QString::fromStdString(name));
      return false;
    }
    for (size_t e = 0; e < w.data.size(); ++e) {
      float a = it->second.data[e], b = w.data[e];
      if (!(std::fabs(a - b) <= tol * (1 + std::fabs(b)))) {
        *why = QString("output %1 element %2: got %3, want %4")
                   .arg(QString::fromStdString(name))
                   .arg(e)
                   .arg(double(a))
                   .arg(double(b));
        return false;
      }
    }
  }
  return true;
}

// Runs the built graph and checks every expected output.
inline void runAndCheck(Builder& b, runtime::ExecutorOptions opts = {}, double tol = 1e-4) {
  GraphExecutor ex(b.g, opts);
  auto out = ex.run(b.feeds);
  QString why;
  QVERIFY2(compare(out, b.expected, &why, tol), qPrintable(why));
}

// ---- references ------------------------------------------------------------

struct ConvP {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
};

inline Arr convRef(const Arr& x, const Arr& w, const Arr* bias, const ConvP& p) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t k = w.shape[0], cg = w.shape[1], r = w.shape[2], s = w.shape[3];
  int64_t oh = (h + p.pt + p.pb - p.dh * (r - 1) - 1) / p.sh + 1;
  int64_t ow = (wd + p.pl + p.pr - p.dw * (s - 1) - 1) / p.sw + 1;
  Arr y = zeros({n, k, oh, ow});
  int64_t kg = k / p.groups;
  (void)c;
  forEach(y.shape, [&](const Shape& i) {
    double acc = bias ? bias->data[size_t(i[1])] : 0.0;
    int64_t g = i[1] / kg;
    for (int64_t rc = 0; rc < cg; ++rc)
      for (int64_t rr = 0; rr < r; ++rr)
        for (int64_t rs = 0; rs < s; ++rs) {
          int64_t yy = i[2] * p.sh + rr * p.dh - p.pt, xx = i[3] * p.sw + rs * p.dw - p.pl;
          if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
          acc += double(x.at({i[0], g * cg + rc, yy, xx})) * w.at({i[1], rc, rr, rs});
        }
    y.at(i) = float(acc);
  });
  return y;
}

struct PoolP {
  int64_t k = 2, s = 2, pad = 0, dil = 1;
  bool ceil = false, includePad = false;
};

inline int64_t poolOut(int64_t in, const PoolP& p) {
  int64_t num = in + 2 * p.pad - p.dil * (p.k - 1) - 1;
  int64_t o = (p.ceil ? (num + p.s - 1) / p.s : num / p.s) + 1;
  if (p.ceil && (o - 1) * p.s >= in + p.pad) --o;
  return o;
}

inline Arr poolRef(const Arr& x, const PoolP& p, bool isMax) {
  int64_t h = x.shape[2], w = x.shape[3];
  Arr y = zeros({x.shape[0], x.shape[1], poolOut(h, p), poolOut(w, p)});
  forEach(y.shape, [&](const Shape& i) {
    double acc = isMax ? -INFINITY : 0.0;
    int64_t count = 0;
    for (int64_t a = 0; a < p.k; ++a)
      for (int64_t b = 0; b < p.k; ++b) {
        int64_t yy = i[2] * p.s + a * p.dil - p.pad, xx = i[3] * p.s + b * p.dil - p.pad;
        bool inside = yy >= 0 && yy < h && xx >= 0 && xx < w;
        bool inPadded = yy >= -p.pad && yy < h + p.pad && xx >= -p.pad && xx < w + p.pad;
        if (p.includePad ? inPadded : inside) ++count;
        if (!inside) continue;
        float v = x.at({i[0], i[1], yy, xx});
        acc = isMax ? std::max(acc, double(v)) : acc + v;
      }
    y.at(i) = float(isMax ? acc : acc / double(count));
  });
  return y;
}

inline Arr matmulRef(const Arr& a, const Arr& b, const Shape& out) {
  // a [..., M, K] and b [..., K, N] with right-aligned broadcast batch dims.
  Arr y = zeros(out);
  int64_t k = a.shape.back();
  forEach(out, [&](const Shape& i) {
    double acc = 0;
    for (int64_t r = 0; r < k; ++r) {
      Shape ia(i.end() - long(a.shape.size()), i.end()), ib(i.end() - long(b.shape.size()), i.end());
      for (size_t d = 0; d + 2 < ia.size(); ++d)
        if (a.shape[d] == 1) ia[d] = 0;
      for (size_t d = 0; d + 2 < ib.size(); ++d)
        if (b.shape[d] == 1) ib[d] = 0;
      ia[ia.size() - 1] = r;
      ib[ib.size() - 2] = r;
      acc += double(a.at(ia)) * b.at(ib);
    }
    y.at(i) = float(acc);
  });
  return y;
}

inline Arr softmaxRef(const Arr& x, size_t axis) {
  Arr y = zeros(x.shape);
  Shape outer = x.shape;
  outer[axis] = 1;
  forEach(outer, [&](const Shape& o) {
    Shape i = o;
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < x.shape[axis]; ++k) {
      i[axis] = k;
      mx = std::max(mx, double(x.at(i)));
    }
    for (int64_t k = 0; k < x.shape[axis]; ++k) {
      i[axis] = k;
      sum += std::exp(double(x.at(i)) - mx);
    }
    for (int64_t k = 0; k < x.shape[axis]; ++k) {
      i[axis] = k;
      y.at(i) = float(std::exp(double(x.at(i)) - mx) / sum);
    }
  });
  return y;
}

}  // namespace runtime_test
