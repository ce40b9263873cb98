#include "lower/index_analysis.h"

#include <algorithm>

namespace tessel::lower {

using te::Expr;
using te::ExprKind;

std::optional<Interval> bounds(const Expr& e, const Ranges& r) {
  auto sub = [&](size_t i) { return bounds(e->args[i], r); };
  switch (e->kind) {
    case ExprKind::IntImm:
      return Interval{e->ival, e->ival};
    case ExprKind::Var: {
      auto it = r.find(e->name);
      if (it == r.end()) return std::nullopt;
      return it->second;
    }
    case ExprKind::Add: {
      auto a = sub(0), b = sub(1);
      if (!a || !b) return std::nullopt;
      return Interval{a->lo + b->lo, a->hi + b->hi};
    }
    case ExprKind::Sub: {
      auto a = sub(0), b = sub(1);
      if (!a || !b) return std::nullopt;
      return Interval{a->lo - b->hi, a->hi - b->lo};
    }
    case ExprKind::Mul: {
      auto a = sub(0), b = sub(1);
      if (!a || !b) return std::nullopt;
      int64_t c[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
      return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
    }
    case ExprKind::Div: {
      auto a = sub(0);
      int64_t d;
      if (!a || !te::isIntImm(e->args[1], &d) || d <= 0) return std::nullopt;
      return Interval{a->lo / d, a->hi / d};  // truncation is monotonic
    }
    case ExprKind::Mod: {
      auto a = sub(0);
      int64_t d;
      if (!a || !te::isIntImm(e->args[1], &d) || d <= 0) return std::nullopt;
      if (a->lo >= 0 && a->hi - a->lo < d && a->lo % d <= a->hi % d) return Interval{a->lo % d, a->hi % d};
      return a->lo >= 0 ? Interval{0, d - 1} : Interval{-(d - 1), d - 1};
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      auto a = sub(0), b = sub(1);
      if (!a || !b) return std::nullopt;
      if (e->kind == ExprKind::Min) return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
      return Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    }
    case ExprKind::Select: {
      auto a = sub(1), b = sub(2);
      if (!a || !b) return std::nullopt;
      return Interval{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
    }
    default:
      return std::nullopt;
  }
}

void linearize(const Expr& e, int64_t scale, Linear* out) {
  int64_t c;
  switch (e->kind) {
    case ExprKind::IntImm:
      out->constant += scale * e->ival;
      return;
    case ExprKind::Add:
      linearize(e->args[0], scale, out);
      linearize(e->args[1], scale, out);
      return;
    case ExprKind::Sub:
      linearize(e->args[0], scale, out);
      linearize(e->args[1], -scale, out);
      return;
    case ExprKind::Mul:
      if (te::isIntImm(e->args[1], &c)) return linearize(e->args[0], scale * c, out);
      if (te::isIntImm(e->args[0], &c)) return linearize(e->args[1], scale * c, out);
      break;
    default:
      break;
  }
  Linear::Term& t = out->terms[te::toString(e)];
  t.atom = e;
  t.coef += scale;
}

Expr simplifyIndex(const Expr& e) {
  Linear lin;
  linearize(e, 1, &lin);
  Expr out = te::intImm(0);
  for (const auto& [key, t] : lin.terms)
    if (t.coef != 0) out = out + (t.coef == 1 ? t.atom : t.atom * t.coef);
  return out + lin.constant;
}

}  // namespace tessel::lower
