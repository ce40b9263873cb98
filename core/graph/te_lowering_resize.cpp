// Resize as index expressions. A rational scale makes each axis's reads
// periodic: output i = P k + r reads input Q k + c[r] with weight w[r]. So an
// axis needs only i / P, i % P and a short select over the residue r, and
// the reads stay in the index forms the bound analysis understands.
#include <algorithm>
#include <cmath>

#include "graph/resize_plan.h"
#include "graph/te_lowerer.h"

namespace tessel::graph {

namespace {

using namespace lowering;

constexpr int64_t kMaxPeriod = 256;  // longer select chains cost more than they save

struct Period {
  int64_t p = 1, q = 0;
};

// The shortest P with source[i + P] == source[i] + Q (and equal weights).
std::optional<Period> periodOf(const ResizeAxis& a, bool linear) {
  const auto& u = a.source;
  const int64_t n = a.outSize;
  for (int64_t p = 1; p <= std::min(n, kMaxPeriod); ++p) {
    const int64_t q = p < n ? u[size_t(p)] - u[0] : 0;
    bool ok = true;
    for (int64_t i = 0; i + p < n && ok; ++i)
      ok = u[size_t(i + p)] == u[size_t(i)] + q &&
           (!linear || std::abs(a.weight[size_t(i + p)] - a.weight[size_t(i)]) < 1e-7);
    if (ok) return Period{p, q};
  }
  return std::nullopt;
}

// values[r] for the residue r: a constant, an affine form, or a select chain.
Expr pickInt(const Expr& r, const std::vector<int64_t>& values) {
  const int64_t step = values.size() > 1 ? values[1] - values[0] : 0;
  bool affine = true;
  for (size_t k = 1; k < values.size() && affine; ++k)
    affine = values[k] - values[k - 1] == step;
  if (affine) return step == 0 ? intImm(values[0]) : r * step + values[0];
  Expr e = intImm(values.back());
  for (size_t k = values.size() - 1; k-- > 0;)
    e = te::select(te::binary(te::ExprKind::EQ, r, intImm(int64_t(k))), intImm(values[k]), e);
  return e;
}

Expr pickFloat(const Expr& r, const std::vector<double>& values) {
  Expr e = floatImm(values.back());
  for (size_t k = values.size() - 1; k-- > 0;)
    if (values[k] != values.back())
      e = te::select(te::binary(te::ExprKind::EQ, r, intImm(int64_t(k))), floatImm(values[k]), e);
  return e;
}

// One resized axis, as expressions of the output index.
struct AxisReads {
  Expr lo, hi;  // clamped source indices (hi: linear only)
  Expr weight;  // of hi; null when every weight is 0 (the axis reads lo only)
};

AxisReads axisReads(const Node& n, const ResizeAxis& a, bool linear, const Expr& i) {
  std::optional<Period> per = periodOf(a, linear);
  if (!per)
    throw UnsupportedError(n.describe() + ": resizing " + std::to_string(a.inSize) + " to " +
                           std::to_string(a.outSize) + " repeats its pattern only every " + "more than " +
                           std::to_string(kMaxPeriod) + " outputs, which is not supported");
  const Expr r = per->p == 1 ? intImm(0) : i % per->p;
  const Expr k = per->p >= a.outSize ? intImm(0) : i / per->p;
  std::vector<int64_t> first(a.source.begin(), a.source.begin() + per->p);
  const Expr u = (per->q == 0 ? intImm(0) : k * per->q) + pickInt(r, first);
  auto clamp = [&](const Expr& e) { return te::minExpr(te::maxExpr(e, intImm(0)), intImm(a.inSize - 1)); };
  AxisReads reads{clamp(u), nullptr, nullptr};
  if (!linear) return reads;
  std::vector<double> w(a.weight.begin(), a.weight.begin() + per->p);
  if (std::all_of(w.begin(), w.end(), [](double x) { return x == 0.0; })) return reads;
  reads.hi = clamp(u + 1);
  reads.weight = pickFloat(r, w);
  return reads;
}

}  // namespace

void TeLowerer::resize(const Node& n) {
  Val x = in(n, 0);
  std::optional<std::vector<float>> scales;
  std::optional<std::vector<int64_t>> sizes;
  if (hasInput(n, 2)) scales = constFloats(n.inputs[2]);
  if (hasInput(n, 3)) sizes = constInts(n.inputs[3]);
  const ResizePlan plan = planResize(n, x.shape, scales, sizes);
  out(n, 0, plan.outShape, [&](const Indices& i) {
    // Corner c of the 2^m neighbourhood takes hi on the axes whose bit is set.
    std::vector<AxisReads> reads;
    std::vector<size_t> linearAxes;
    for (size_t d = 0; d < i.size(); ++d) {
      const ResizeAxis& a = plan.axes[d];
      reads.push_back(a.identity ? AxisReads{i[d], nullptr, nullptr} : axisReads(n, a, plan.linear, i[d]));
      if (reads.back().weight) linearAxes.push_back(d);
    }
    Expr sum;
    for (size_t corner = 0; corner < (size_t(1) << linearAxes.size()); ++corner) {
      Indices j;
      for (const AxisReads& r : reads)
        j.push_back(r.lo);
      Expr w;
      for (size_t b = 0; b < linearAxes.size(); ++b) {
        const AxisReads& r = reads[linearAxes[b]];
        const bool high = (corner >> b) & 1;
        if (high) j[linearAxes[b]] = r.hi;
        Expr f = high ? r.weight : floatImm(1.0) - r.weight;
        w = w ? w * f : f;
      }
      Expr term = w ? x.at(j) * w : x.at(j);
      sum = sum ? sum + term : term;
    }
    return sum;
  });
}

}  // namespace tessel::graph
