#include "cost/index_regions.h"

#include <cstdlib>
#include <limits>

namespace tessel::cost::detail {

using te::ExprKind;

void IndexRegions::clear() {
  nodes_.clear();
  terms_.clear();
  atoms_.clear();
  forms_.clear();
}

int IndexRegions::uses(int f, int depth) const {
  const IndexForm& form = forms_[size_t(f)];
  const uint64_t bit = depthBit(depth);
  int occurrences = 0;
  for (size_t i = form.termBegin; i < form.termEnd; ++i)
    if (terms_[i].depth == depth && terms_[i].coef != 0) ++occurrences;
  for (size_t i = form.atomBegin; i < form.atomEnd; ++i)
    if (nodes_[size_t(atoms_[i].node)].mask & bit) ++occurrences;
  return occurrences;
}

int IndexRegions::compile(const te::ExprNode& e) {
  CNode n;
  n.kind = e.kind;
  switch (e.kind) {
    case ExprKind::IntImm:
      n.imm = e.ival;
      break;
    case ExprKind::FloatImm:  // not an index: a constant that moves nothing
      n.kind = ExprKind::IntImm;
      break;
    case ExprKind::Var:
      n.depth = loops_.depthOf(e.name);
      if (n.depth >= 0) n.mask = depthBit(n.depth);
      break;
    case ExprKind::Load:  // an indirect index: opaque, loop independent
      break;
    default: {
      int* slots[3] = {&n.a, &n.b, &n.c};
      for (size_t i = 0; i < e.args.size() && i < 3; ++i) {
        *slots[i] = compile(*e.args[i]);
        n.mask |= nodes_[size_t(*slots[i])].mask;
      }
      break;
    }
  }
  nodes_.push_back(n);
  return int(nodes_.size() - 1);
}

bool IndexRegions::immOf(int node, int64_t* v) const {
  if (node < 0 || nodes_[size_t(node)].kind != ExprKind::IntImm) return false;
  *v = nodes_[size_t(node)].imm;
  return true;
}

// Range of a compiled expression when loops at `level` and deeper run over
// their extents and the outer ones sit at 0.
Interval IndexRegions::bounds(int node, int level) const {
  const CNode& n = nodes_[size_t(node)];
  switch (n.kind) {
    case ExprKind::IntImm:
      return {n.imm, n.imm};
    case ExprKind::Var:
      if (n.depth >= level) return {0, extentAt(n.depth) - 1};
      return {0, 0};
    case ExprKind::Add: {
      Interval a = bounds(n.a, level), b = bounds(n.b, level);
      return {a.lo + b.lo, a.hi + b.hi};
    }
    case ExprKind::Sub: {
      Interval a = bounds(n.a, level), b = bounds(n.b, level);
      return {a.lo - b.hi, a.hi - b.lo};
    }
    case ExprKind::Mul: {
      Interval a = bounds(n.a, level), b = bounds(n.b, level);
      int64_t p[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
      return {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
    case ExprKind::Div: {
      Interval a = bounds(n.a, level);
      int64_t d;
      if (!immOf(n.b, &d) || d <= 0) return a;
      return {a.lo / d, a.hi / d};
    }
    case ExprKind::Mod: {
      Interval a = bounds(n.a, level);
      int64_t d;
      if (!immOf(n.b, &d) || d <= 0) return a;
      if (a.lo >= 0 && a.hi - a.lo < d && a.lo % d <= a.hi % d) return {a.lo % d, a.hi % d};
      return a.lo >= 0 ? Interval{0, d - 1} : Interval{-(d - 1), d - 1};
    }
    case ExprKind::Min:
    case ExprKind::Max: {
      Interval a = bounds(n.a, level), b = bounds(n.b, level);
      if (n.kind == ExprKind::Min) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    case ExprKind::Select: {
      Interval a = bounds(n.b, level), b = bounds(n.c, level);
      return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    default:
      return {0, 0};
  }
}

// How far one step of the loop at `depth` moves the expression (TVM's
// CoefficientExtractor: 2 when it cannot tell); 0 when it does not use it.
int64_t IndexRegions::coefficient(int node, int depth) const {
  const CNode& n = nodes_[size_t(node)];
  if (!(n.mask & depthBit(depth))) return 0;
  int64_t v;
  switch (n.kind) {
    case ExprKind::Var:
      return n.depth == depth ? 1 : 0;
    case ExprKind::Add:
    case ExprKind::Sub: {
      int64_t a = coefficient(n.a, depth), b = coefficient(n.b, depth);
      if (a && b) return std::min(a, b);
      return a ? a : b;
    }
    case ExprKind::Mul:
      if (immOf(n.b, &v)) return coefficient(n.a, depth) * std::abs(v);
      if (immOf(n.a, &v)) return coefficient(n.b, depth) * std::abs(v);
      return 2;
    case ExprKind::Div:
      if (immOf(n.b, &v) && v > 0) return std::max<int64_t>(1, coefficient(n.a, depth) / v);
      return 2;
    case ExprKind::Mod:
      return coefficient(n.a, depth);
    default:
      return 2;
  }
}

void IndexRegions::linearize(int node, int64_t scale, IndexForm& f) {
  const CNode& n = nodes_[size_t(node)];
  int64_t v;
  switch (n.kind) {
    case ExprKind::IntImm:
      f.constant += scale * n.imm;
      return;
    case ExprKind::Var:
      if (n.depth < 0) return;
      for (size_t i = f.termBegin; i < terms_.size(); ++i)
        if (terms_[i].depth == n.depth) {
          terms_[i].coef += scale;
          return;
        }
      terms_.push_back({n.depth, scale});
      return;
    case ExprKind::Add:
      linearize(n.a, scale, f);
      linearize(n.b, scale, f);
      return;
    case ExprKind::Sub:
      linearize(n.a, scale, f);
      linearize(n.b, -scale, f);
      return;
    case ExprKind::Mul:
      if (immOf(n.b, &v)) return linearize(n.a, scale * v, f);
      if (immOf(n.a, &v)) return linearize(n.b, scale * v, f);
      break;
    default:
      break;
  }
  if (n.mask == 0) {
    f.constant += scale * bounds(node, 0).lo;
    return;
  }
  atoms_.push_back({node, scale});
}

int IndexRegions::addForm(const te::ExprNode& index) {
  int root = compile(index);
  IndexForm f;
  f.termBegin = terms_.size();
  f.atomBegin = atoms_.size();
  linearize(root, 1, f);
  f.termEnd = terms_.size();
  f.atomEnd = atoms_.size();
  for (size_t i = f.termBegin; i < f.termEnd; ++i)
    if (terms_[i].coef != 0) f.mask |= depthBit(terms_[i].depth);
  for (size_t i = f.atomBegin; i < f.atomEnd; ++i)
    f.mask |= nodes_[size_t(atoms_[i].node)].mask;
  forms_.push_back(f);
  return int(forms_.size() - 1);
}

// Elements one index touches while loops at `level` and deeper run: its
// strided dimensions merged from the smallest stride up.
IndexRegions::Region IndexRegions::formRegion(const IndexForm& f, int level, std::vector<Dim>& dims) const {
  Region r;
  r.lo = r.hi = f.constant;
  dims.clear();
  for (size_t i = f.termBegin; i < f.termEnd; ++i) {
    const Term& t = terms_[i];
    if (t.coef == 0 || t.depth < level) continue;
    int64_t span = t.coef * (extentAt(t.depth) - 1);
    (span > 0 ? r.hi : r.lo) += span;
    if (span != 0) dims.push_back({std::abs(t.coef), extentAt(t.depth)});
  }
  uint64_t live = levelMask(level);
  for (size_t i = f.atomBegin; i < f.atomEnd; ++i) {
    const Atom& a = atoms_[i];
    Interval b = bounds(a.node, level);
    r.lo += a.coef > 0 ? a.coef * b.lo : a.coef * b.hi;
    r.hi += a.coef > 0 ? a.coef * b.hi : a.coef * b.lo;
    if ((nodes_[size_t(a.node)].mask & live) && b.hi > b.lo && a.coef != 0)
      dims.push_back({std::abs(a.coef), b.hi - b.lo + 1});
  }
  std::sort(dims.begin(), dims.end(), [](const Dim& x, const Dim& y) { return x.stride < y.stride; });
  int64_t count = 1, span = 1;
  bool dense = true;
  for (const Dim& d : dims) {
    int64_t newSpan = span + d.stride * (d.extent - 1);
    if (d.stride >= span)
      count *= d.extent;
    else if (count == span)
      count = newSpan;
    else
      count = std::min(count * d.extent, newSpan);
    span = newSpan;
    dense = dense && count == span;
    if (dense) r.denseRun = span;
  }
  r.count = count;
  return r;
}

// Elements an access (all its indices) touches at `level`.
int64_t IndexRegions::accessRegion(const std::vector<int>& forms, int level, int64_t* denseRun) {
  if (forms.size() == 1) {
    Region r = formRegion(forms_[size_t(forms[0])], level, dims_);
    if (level == 0) *denseRun = r.denseRun;
    return r.count;
  }
  // Several indices: the union of shifted copies (same strides), or at most
  // the sum of the parts, never more than the span they cover together.
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  int64_t sum = 0, first = 0, run = 1;
  bool same = true;
  distinctLo_.clear();
  for (size_t k = 0; k < forms.size(); ++k) {
    Region r = formRegion(forms_[size_t(forms[k])], level, k == 0 ? dims0_ : dims_);
    if (k == 0)
      first = r.count;
    else
      same = same && r.count == first && dims_.size() == dims0_.size() &&
             std::equal(dims_.begin(), dims_.end(), dims0_.begin(),
                        [](const Dim& x, const Dim& y) { return x.stride == y.stride && x.extent == y.extent; });
    lo = std::min(lo, r.lo);
    hi = std::max(hi, r.hi);
    sum += r.count;
    run = std::max(run, r.denseRun);
    if (std::find(distinctLo_.begin(), distinctLo_.end(), r.lo) == distinctLo_.end()) distinctLo_.push_back(r.lo);
  }
  if (level == 0) *denseRun = run;
  int64_t span = hi - lo + 1;
  return std::max<int64_t>(1, std::min(span, same ? first * int64_t(distinctLo_.size()) : sum));
}

// Smallest step of the access per iteration of the loop at `depth`.
int64_t IndexRegions::accessStride(const std::vector<int>& forms, int depth) const {
  int64_t best = 0;
  for (int fi : forms) {
    const IndexForm& f = forms_[size_t(fi)];
    if (!(f.mask & depthBit(depth))) continue;
    int64_t s = 0;
    for (size_t i = f.termBegin; i < f.termEnd; ++i)
      if (terms_[i].depth == depth && terms_[i].coef != 0) s = std::abs(terms_[i].coef);
    for (size_t i = f.atomBegin; i < f.atomEnd; ++i) {
      int64_t c = coefficient(atoms_[i].node, depth) * std::abs(atoms_[i].coef);
      if (c != 0) s = s ? std::min(s, c) : c;
    }
    if (s != 0) best = best ? std::min(best, s) : s;
  }
  return best;
}

}  // namespace tessel::cost::detail
