#include "lower/layout_rewrite.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "lower/index_analysis.h"

namespace tessel::lower {

using te::Expr;
using te::ExprKind;

namespace {

// Packing may pad a tensor (a split that does not divide its loop rounds the
// extent up); beyond this factor the memory is not worth it.
constexpr int64_t kMaxPadding = 4;

struct Loop {
  std::string var;
  int64_t extent;
};

// Every load of one buffer, with the loops around it (outermost first).
struct LoadSite {
  Expr index;
  std::vector<Loop> loops;
};

void collectSites(const Stmt& s, const std::string& buffer, std::vector<Loop>& loops, std::vector<LoadSite>* sites,
                  bool* inCondition) {
  auto gather = [&](const Expr& e) {
    if (!e) return;
    std::vector<const te::ExprNode*> loads;
    te::collectLoads(e, &loads);
    for (const te::ExprNode* l : loads)
      if (l->name == buffer) sites->push_back({l->args.at(0), loops});
  };
  switch (s->kind) {
    case StmtNode::Store:
      gather(s->index);
      gather(s->value);
      return;
    case StmtNode::If: {
      std::vector<const te::ExprNode*> loads;
      te::collectLoads(s->cond, &loads);
      for (const te::ExprNode* l : loads)
        if (l->name == buffer) *inCondition = true;
      break;
    }
    default:
      break;
  }
  if (s->kind == StmtNode::For) loops.push_back({s->loopVar, s->extent});
  for (const Stmt& b : s->body)
    collectSites(b, buffer, loops, sites, inCondition);
  if (s->kind == StmtNode::For) loops.pop_back();
}

// The loop variable an index term is a part of (v, v / a, v % b, (v / a) % b)
// and the divisor that orders parts of one variable (outer parts divide more).
bool termOfLoop(const Expr& atom, std::string* var, int64_t* divisor) {
  *divisor = 1;
  Expr e = atom;
  if (e->kind == ExprKind::Mod) {
    if (!te::isIntImm(e->args[1])) return false;
    e = e->args[0];
  }
  if (e->kind == ExprKind::Div) {
    if (!te::isIntImm(e->args[1], divisor) || *divisor <= 0) return false;
    e = e->args[0];
  }
  if (e->kind != ExprKind::Var) return false;
  *var = e->name;
  return true;
}

struct PackedTerm {
  Expr atom;
  int64_t coef = 0;
  size_t depth = 0;  // position of its loop, outermost 0
  int64_t divisor = 1;
  int64_t extent = 1;
};

// The packed layout of one buffer's loads, or nothing if they do not allow one.
std::optional<std::vector<PackedTerm>> planLayout(const std::vector<LoadSite>& sites, int64_t* offset) {
  Linear first;
  linearize(sites[0].index, 1, &first);
  auto signature = [](const Linear& l) {
    std::string s = std::to_string(l.constant);
    for (const auto& [key, t] : l.terms)
      if (t.coef != 0) s += ";" + key + "*" + std::to_string(t.coef);
    return s;
  };
  const std::string sig = signature(first);
  for (size_t i = 1; i < sites.size(); ++i) {
    Linear l;
    linearize(sites[i].index, 1, &l);
    if (signature(l) != sig) return std::nullopt;
  }
  Ranges ranges;
  for (const Loop& l : sites[0].loops)
    ranges[l.var] = {0, l.extent - 1};
  std::vector<PackedTerm> terms;
  for (const auto& [key, t] : first.terms) {
    if (t.coef == 0) continue;
    PackedTerm p{t.atom, t.coef};
    std::string var;
    if (!termOfLoop(t.atom, &var, &p.divisor)) return std::nullopt;
    auto at = std::find_if(sites[0].loops.begin(), sites[0].loops.end(), [&](const Loop& l) { return l.var == var; });
    if (at == sites[0].loops.end()) return std::nullopt;
    p.depth = size_t(at - sites[0].loops.begin());
    std::optional<Interval> b = bounds(t.atom, ranges);
    if (!b || b->lo < 0) return std::nullopt;
    p.extent = b->hi + 1;
    terms.push_back(p);
  }
  std::stable_sort(terms.begin(), terms.end(), [](const PackedTerm& a, const PackedTerm& b) {
    return a.depth != b.depth ? a.depth < b.depth : a.divisor > b.divisor;
  });
  *offset = first.constant;
  return terms;
}

void rewriteLoads(const Stmt& s, const std::string& buffer, const Expr& index) {
  auto fn = [&](const te::Indices&) { return te::load(buffer, {index}); };
  if (s->kind == StmtNode::Store) {
    s->index = te::rewriteLoads(s->index, buffer, fn);
    s->value = te::rewriteLoads(s->value, buffer, fn);
  }
  for (const Stmt& b : s->body)
    rewriteLoads(b, buffer, index);
}

}  // namespace

int64_t PackedLayout::size() const {
  int64_t n = 1;
  for (const Dim& d : dims)
    n *= d.extent;
  return n;
}

int64_t plainIndex(const PackedLayout& layout, int64_t packedIndex) {
  int64_t plain = layout.plainOffset;
  for (size_t d = layout.dims.size(); d-- > 0;) {
    plain += (packedIndex % layout.dims[d].extent) * layout.dims[d].plainStride;
    packedIndex /= layout.dims[d].extent;
  }
  return plain >= 0 && plain < layout.plainSize ? plain : -1;
}

void rewriteLayouts(LoweredFunc* f) {
  for (size_t a = 0; a < f->numInputs; ++a) {
    Buffer& buf = f->args[a];
    if (!buf.layoutFree) continue;
    std::vector<LoadSite> sites;
    std::vector<Loop> loops;
    bool inCondition = false;
    collectSites(f->body, buf.name, loops, &sites, &inCondition);
    if (sites.empty() || inCondition) continue;
    PackedLayout layout;
    layout.arg = a;
    layout.plainSize = buf.size;
    std::optional<std::vector<PackedTerm>> terms = planLayout(sites, &layout.plainOffset);
    if (!terms) continue;
    for (const PackedTerm& t : *terms)
      layout.dims.push_back({t.extent, t.coef});
    const int64_t size = layout.size();
    if (size > kMaxPadding * buf.size) continue;
    // Row-major strides of the packed buffer; the same as the plain ones means
    // the loops already walk the tensor in its own order.
    std::vector<int64_t> strides(terms->size());
    bool same = layout.plainOffset == 0 && size == buf.size;
    int64_t stride = 1;
    for (size_t d = terms->size(); d-- > 0;) {
      strides[d] = stride;
      same = same && stride == (*terms)[d].coef;
      stride *= (*terms)[d].extent;
    }
    if (same) continue;
    Expr index = te::intImm(0);
    for (size_t d = 0; d < terms->size(); ++d)
      index = index + (strides[d] == 1 ? (*terms)[d].atom : (*terms)[d].atom * strides[d]);
    rewriteLoads(f->body, buf.name, index);
    buf.size = size;
    f->packed.push_back(layout);
  }
}

}  // namespace tessel::lower
