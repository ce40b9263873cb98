// Ansor's per-store statistical features (TVM src/auto_scheduler/feature.cc),
// computed on Tessel's lowered loop nest. One row per Store statement.
//
// Differences from TVM, all forced by the IR or deliberate:
// - Rows are per Store statement (TVM merges the stores of a buffer).
// - Buffers are flat: touched regions come from the linearised flat index
//   (sum of coefficient * loop variable, plus opaque div/mod atoms bounded by
//   interval arithmetic), counted as a lattice of strided runs.
// - float_mad / int_mad are detected (an add or sub with a multiply operand
//   counts as one MAD instead of one add and one multiply); TVM leaves them 0.
// - Annotation positions are classified from the loop order: loops whose
//   variable is in the store index are spatial, the others of an update store
//   (below its init's loops) reduce; a loop in several index terms is mixed.
// - auto_unroll_max_step is the extent of the innermost unrolled loop (the
//   pragma is lowered to unrolled loops).
// - Intermediate buffers the kernel allocates (temps) have allocation
//   features as allocated at the root, like TVM's Allocate nodes.
#include "cost/features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "lower/layout_rewrite.h"

namespace tessel::cost {

using lower::ForKind;
using lower::StmtNode;
using te::DType;
using te::ExprKind;
using te::ExprNode;

namespace {

constexpr int kMaxBufs = 5;
constexpr int kAccessFeatures = 18;
constexpr int kCurveSamples = 10;
constexpr double kCacheLineBytes = 64.0;
constexpr double kElemBytes = 4.0;  // every buffer holds float32

// Row layout.
constexpr size_t kOffAccess = 57;
constexpr size_t kOffCurve = kOffAccess + size_t(kMaxBufs * kAccessFeatures);
constexpr size_t kOffAlloc = kOffCurve + kCurveSamples;
constexpr size_t kOffOther = kOffAlloc + 4;
static_assert(kOffOther + 3 == kNumFeatures, "feature layout");

enum Pos : int {
  kPosNone,
  kPosInnerSpatial,
  kPosMiddleSpatial,
  kPosOuterSpatial,
  kPosInnerReduce,
  kPosMiddleReduce,
  kPosOuterReduce,
  kPosMixed
};
enum AccType : int { kRead, kWrite, kReadWrite };
enum ReuseType : int { kLoopMultipleRead, kSerialMultipleReadWrite, kNoReuse };
enum OpCount : int {
  kFloatMad,
  kFloatAddSub,
  kFloatMul,
  kFloatDivMod,
  kFloatCmp,
  kFloatMathFunc,
  kFloatOtherFunc,
  kIntMad,
  kIntAddSub,
  kIntMul,
  kIntDivMod,
  kIntCmp,
  kIntMathFunc,
  kIntOtherFunc,
  kBoolOp,
  kSelectOp,
  kNumOpCounts
};

// Ansor's shifted log: sign(x) * log2(|x| + 1).
float slog(double x) {
  return float(x < 0 ? -std::log2(-x + 1.0) : std::log2(x + 1.0));
}

uint64_t depthBit(int depth) {
  return uint64_t(1) << std::min(depth, 63);
}
// Bits of the loops at `level` and deeper.
uint64_t levelMask(int level) {
  return level >= 64 ? depthBit(63) : ~((uint64_t(1) << level) - 1);
}

struct Interval {
  int64_t lo = 0, hi = 0;
};

// An index expression compiled against the loop stack: variables resolved
// to loop depths once, so the per-level analyses never touch strings.
struct CNode {
  ExprKind kind = ExprKind::IntImm;
  int depth = -1;  // Var: enclosing loop depth; -1 = not a loop (value 0)
  int64_t imm = 0;
  int a = -1, b = -1, c = -1;
  uint64_t mask = 0;  // loop depths the subtree uses
};

struct Term {
  int depth;
  int64_t coef;
};
struct Atom {
  int node;
  int64_t coef;
};
// A flat index as constant + sum(coef * loop var) + sum(coef * atom).
struct IndexForm {
  size_t termBegin = 0, termEnd = 0, atomBegin = 0, atomEnd = 0;
  int64_t constant = 0;
  uint64_t mask = 0;
};

struct Access {
  int buf = 0;
  AccType type = kRead;
  std::vector<int> forms;
  uint64_t mask = 0;
  // Results.
  float bytes = 0, uniqueBytes = 0, lines = 0, uniqueLines = 0, stride = 0;
  float reuseDisIter = 0, reuseDisBytes = 0, reuseCt = 0;
  ReuseType reuse = kNoReuse;
  int64_t denseRun = 1;  // contiguous elements at the outermost level
};

struct Touch {
  int buf;
  int64_t elems;
};

struct Frame {
  const StmtNode* loop = nullptr;
  uint32_t id = 0;
  std::vector<Touch> touches;  // TVM's for_touch_regions: every access under the loop so far
};

struct BufferInfo {
  std::string_view name;
  int64_t allocSize = 0;  // elements; 0 = not allocated by the kernel
  double allocOuterProd = 1;
  std::vector<uint32_t> lastStoreLoops;  // loop ids around the previous store into it
  bool stored = false;
};

struct Dim {
  int64_t stride, extent;
};

class Extractor {
 public:
  ProgramFeatures run(const lower::LoweredFunc& f) {
    for (const lower::Buffer& b : f.args)
      bufferId(b.name);
    for (const lower::Buffer& b : f.temps) {
      BufferInfo& info = buffers_[size_t(bufferId(b.name))];
      info.allocSize = b.size;
      info.allocOuterProd = 1;
    }
    if (f.body) visit(*f.body);
    return std::move(rows_);
  }

 private:
  // ---- traversal ------------------------------------------------------------

  void visit(const StmtNode& s) {
    switch (s.kind) {
      case StmtNode::For: {
        if (size_t(depth_) == stack_.size()) stack_.emplace_back();
        Frame& fr = stack_[size_t(depth_)];
        fr.loop = &s;
        fr.id = nextLoopId_++;
        fr.touches.clear();
        ++depth_;
        double extent = double(extentAt(depth_ - 1));
        outerProd_ *= extent;
        for (const lower::Stmt& b : s.body)
          visit(*b);
        outerProd_ /= extent;
        --depth_;
        return;
      }
      case StmtNode::Seq:
      case StmtNode::If:
        for (const lower::Stmt& b : s.body)
          visit(*b);
        return;
      case StmtNode::Alloc: {
        BufferInfo& info = buffers_[size_t(bufferId(s.buffer))];
        info.allocSize = s.size;
        info.allocOuterProd = outerProd_;
        return;
      }
      case StmtNode::Store:
        visitStore(s);
        return;
    }
  }

  int bufferId(std::string_view name) {
    for (size_t i = 0; i < buffers_.size(); ++i)
      if (buffers_[i].name == name) return int(i);
    buffers_.push_back({});
    buffers_.back().name = name;
    return int(buffers_.size() - 1);
  }

  // Extents are constants >= 1 (an empty loop would make every ratio meaningless).
  int64_t extentAt(int d) const { return std::max<int64_t>(1, stack_[size_t(d)].loop->extent); }

  int depthOf(const std::string& var) const {
    for (int d = depth_ - 1; d >= 0; --d)
      if (stack_[size_t(d)].loop->loopVar == var) return d;
    return -1;
  }

  // ---- operation counts -------------------------------------------------------

  static bool floatOperands(const ExprNode& e) {
    for (const te::Expr& a : e.args)
      if (a->dtype == DType::Float32) return true;
    return false;
  }

  void countOps(const ExprNode& e, std::array<double, kNumOpCounts>& c) const {
    auto children = [&](const ExprNode& n) {
      for (const te::Expr& a : n.args)
        countOps(*a, c);
    };
    switch (e.kind) {
      case ExprKind::Add:
      case ExprKind::Sub: {
        bool fl = floatOperands(e);
        // A multiply feeding an add is one multiply-add.
        const ExprNode* mul = nullptr;
        const ExprNode* other = nullptr;
        for (int k = 1; k >= 0; --k) {
          const ExprNode& x = *e.args[size_t(k)];
          if (!mul && x.kind == ExprKind::Mul && floatOperands(x) == fl) {
            mul = &x;
            other = e.args[size_t(1 - k)].get();
          }
        }
        if (mul) {
          c[fl ? kFloatMad : kIntMad] += 1;
          children(*mul);
          countOps(*other, c);
        } else {
          c[fl ? kFloatAddSub : kIntAddSub] += 1;
          children(e);
        }
        return;
      }
      case ExprKind::Mul:
        c[floatOperands(e) ? kFloatMul : kIntMul] += 1;
        break;
      case ExprKind::Div:
      case ExprKind::Mod:
        c[floatOperands(e) ? kFloatDivMod : kIntDivMod] += 1;
        break;
      case ExprKind::Min:
      case ExprKind::Max:
      case ExprKind::LT:
      case ExprKind::LE:
      case ExprKind::GT:
      case ExprKind::GE:
      case ExprKind::EQ:
      case ExprKind::NE:
        c[floatOperands(e) ? kFloatCmp : kIntCmp] += 1;
        break;
      case ExprKind::And:
      case ExprKind::Or:
      case ExprKind::Not:
        c[kBoolOp] += 1;
        break;
      case ExprKind::Select:
        c[kSelectOp] += 1;
        break;
      case ExprKind::Call:  // every math function Tessel has is pure
        c[e.dtype == DType::Float32 ? kFloatMathFunc : kIntMathFunc] += 1;
        break;
      default:
        break;
    }
    children(e);
  }

  // ---- index analysis -----------------------------------------------------

  int compile(const ExprNode& e) {
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
        n.depth = depthOf(e.name);
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

  bool immOf(int node, int64_t* v) const {
    if (node < 0 || nodes_[size_t(node)].kind != ExprKind::IntImm) return false;
    *v = nodes_[size_t(node)].imm;
    return true;
  }

  // Range of a compiled expression when loops at `level` and deeper run over
  // their extents and the outer ones sit at 0.
  Interval bounds(int node, int level) const {
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
  int64_t coefficient(int node, int depth) const {
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

  void linearize(int node, int64_t scale, IndexForm& f) {
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

  int addForm(const ExprNode& index) {
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

  struct Region {
    int64_t count = 1, lo = 0, hi = 0, denseRun = 1;
  };

  // Elements one index touches while loops at `level` and deeper run: its
  // strided dimensions merged from the smallest stride up.
  Region formRegion(const IndexForm& f, int level, std::vector<Dim>& dims) const {
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
  int64_t accessRegion(Access& a, int level) {
    if (a.forms.size() == 1) {
      Region r = formRegion(forms_[size_t(a.forms[0])], level, dims_);
      if (level == 0) a.denseRun = r.denseRun;
      return r.count;
    }
    // Several indices: the union of shifted copies (same strides), or at most
    // the sum of the parts, never more than the span they cover together.
    int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
    int64_t sum = 0, first = 0, run = 1;
    bool same = true;
    distinctLo_.clear();
    for (size_t k = 0; k < a.forms.size(); ++k) {
      Region r = formRegion(forms_[size_t(a.forms[k])], level, k == 0 ? dims0_ : dims_);
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
    if (level == 0) a.denseRun = run;
    int64_t span = hi - lo + 1;
    return std::max<int64_t>(1, std::min(span, same ? first * int64_t(distinctLo_.size()) : sum));
  }

  // Smallest step of the access per iteration of the loop at `depth`.
  int64_t accessStride(const Access& a, int depth) const {
    int64_t best = 0;
    for (int fi : a.forms) {
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

  // ---- per store -------------------------------------------------------------

  void addAccess(int buf, AccType type, int form) {
    if (size_t(numAccesses_) == accesses_.size()) accesses_.emplace_back();
    Access& a = accesses_[size_t(numAccesses_++)];
    a.buf = buf;
    a.type = type;
    a.forms.assign(1, form);
    a.mask = forms_[size_t(form)].mask;
    a.denseRun = 1;
  }

  void collectReads(const ExprNode& e) {
    if (e.kind == ExprKind::Load && !e.args.empty()) {
      int buf = bufferId(e.name);
      Access* found = nullptr;
      for (int i = 0; i < numAccesses_; ++i)
        if (accesses_[size_t(i)].buf == buf) found = &accesses_[size_t(i)];
      if (!found) {
        addAccess(buf, kRead, addForm(*e.args[0]));
      } else if (found->type == kWrite) {
        found->type = kReadWrite;  // an update: it reads where it writes
      } else if (found->type == kRead) {
        int form = addForm(*e.args[0]);  // touches forms_ only: `found` stays valid
        found->forms.push_back(form);
        found->mask |= forms_[size_t(form)].mask;
      }
    }
    for (const te::Expr& a : e.args)
      collectReads(*a);
  }

  // Position of the annotated loop at `depth` among the store's loops.
  Pos position(int depth, const IndexForm& store, bool update, int reduceFrom) const {
    int n = depth_;
    uint64_t bit = depthBit(depth);
    int occurrences = 0;
    for (size_t i = store.termBegin; i < store.termEnd; ++i)
      if (terms_[i].depth == depth && terms_[i].coef != 0) ++occurrences;
    for (size_t i = store.atomBegin; i < store.atomEnd; ++i)
      if (nodes_[size_t(atoms_[i].node)].mask & bit) ++occurrences;
    if (occurrences >= 2) return kPosMixed;
    auto classify = [&](auto isMember, Pos inner, Pos middle, Pos outer) {
      int innermost = -1, outermost = -1;
      for (int d = 0; d < n; ++d)
        if (isMember(d)) {
          if (outermost < 0) outermost = d;
          innermost = d;
        }
      if (depth == innermost) return inner;
      if (depth == outermost) return outer;
      return middle;
    };
    if (occurrences == 1)
      return classify([&](int d) { return (store.mask & depthBit(d)) != 0; }, kPosInnerSpatial, kPosMiddleSpatial,
                      kPosOuterSpatial);
    if (update && depth >= reduceFrom)
      return classify([&](int d) { return d >= reduceFrom && !(store.mask & depthBit(d)); }, kPosInnerReduce,
                      kPosMiddleReduce, kPosOuterReduce);
    return kPosOuterSpatial;  // a loop of a consumer this stage is computed at
  }

  void visitStore(const StmtNode& s) {
    nodes_.clear();
    terms_.clear();
    atoms_.clear();
    forms_.clear();
    numAccesses_ = 0;
    const int n = depth_;
    std::vector<float> row(kNumFeatures, 0.0f);

    // Group 1: computation.
    std::array<double, kNumOpCounts> ops{};
    countOps(*s.value, ops);
    for (int k = 0; k < kNumOpCounts; ++k)
      row[size_t(k)] = slog(ops[size_t(k)] * outerProd_);

    int sbuf = bufferId(s.buffer);
    int wform = addForm(*s.index);
    addAccess(sbuf, kWrite, wform);
    collectReads(*s.value);
    bool update = accesses_[0].type == kReadWrite;

    // Loops shared with the previous store into the buffer (its init): the
    // reduction loops of an update are below them.
    BufferInfo& binfo = buffers_[size_t(sbuf)];
    int reduceFrom = 0;
    if (binfo.stored)
      while (reduceFrom < n && size_t(reduceFrom) < binfo.lastStoreLoops.size() &&
             binfo.lastStoreLoops[size_t(reduceFrom)] == stack_[size_t(reduceFrom)].id)
        ++reduceFrom;

    struct Ann {
      int num = 0, inner = -1;
      double prod = 1;
    } vec, unroll, par;
    bool gpu = false;
    double block[3] = {1, 1, 1}, thread[3] = {1, 1, 1}, vthread = 1;
    for (int d = 0; d < n; ++d) {
      const StmtNode& l = *stack_[size_t(d)].loop;
      Ann* ann = nullptr;
      int axis = std::clamp(l.axis - 'x', 0, 2);
      switch (l.forKind) {
        case ForKind::Vectorized:
          ann = &vec;
          break;
        case ForKind::Unrolled:
          ann = &unroll;
          break;
        case ForKind::Parallel:
          ann = &par;
          break;
        case ForKind::BlockIdx:
          gpu = true;
          block[axis] = double(extentAt(d));
          break;
        case ForKind::ThreadIdx:
          gpu = true;
          thread[axis] = double(extentAt(d));
          break;
        case ForKind::VThread:
          gpu = true;
          vthread *= double(extentAt(d));
          break;
        case ForKind::Serial:
          break;
      }
      if (ann) {
        ann->num++;
        ann->prod *= double(extentAt(d));
        ann->inner = d;
      }
    }
    size_t o = kNumOpCounts;
    for (const Ann* ann : {&vec, &unroll, &par}) {
      Pos pos = kPosNone;
      if (ann->num > 0) {
        row[o] = slog(ann->num);
        row[o + 1] = slog(ann->prod);
        row[o + 2] = slog(double(extentAt(ann->inner)));
        pos = position(ann->inner, forms_[size_t(wform)], update, reduceFrom);
      }
      row[o + 3 + size_t(pos)] = 1.0f;
      o += 11;
    }
    row[o++] = gpu ? 1.0f : 0.0f;
    for (double v : block)
      row[o++] = slog(v);
    for (double v : thread)
      row[o++] = slog(v);
    row[o++] = slog(vthread);

    // Group 2: buffer access. Touched elements per loop level, innermost
    // first, recorded on the loops for the reuse analysis.
    double curOps = 0;
    for (int k = kFloatMad; k <= kFloatOtherFunc; ++k)
      curOps += ops[size_t(k)];
    computeOps_.clear();
    memBytes_.clear();
    for (int i = n - 1; i >= 0; --i) {
      double mem = 0;
      for (int k = 0; k < numAccesses_; ++k) {
        Access& a = accesses_[size_t(k)];
        int64_t elems = accessRegion(a, i);
        stack_[size_t(i)].touches.push_back({a.buf, elems});
        mem += double(elems) * kElemBytes;
      }
      memBytes_.push_back(mem);
      curOps *= double(extentAt(i));
      computeOps_.push_back(curOps);
    }

    for (int k = 0; k < numAccesses_; ++k)
      accessFeatures(accesses_[size_t(k)]);

    order_.resize(size_t(numAccesses_));
    for (int k = 0; k < numAccesses_; ++k)
      order_[size_t(k)] = k;
    std::stable_sort(order_.begin(), order_.end(), [&](int l, int r) {
      const Access& x = accesses_[size_t(l)];
      const Access& y = accesses_[size_t(r)];
      return x.lines > y.lines || (x.lines == y.lines && x.bytes > y.bytes);
    });
    for (size_t k = 0; k < order_.size() && k < size_t(kMaxBufs); ++k) {
      const Access& a = accesses_[size_t(order_[k])];
      float* p = row.data() + kOffAccess + k * kAccessFeatures;
      p[a.type] = 1.0f;
      p[3] = slog(a.bytes);
      p[4] = slog(a.uniqueBytes);
      p[5] = slog(a.lines);
      p[6] = slog(a.uniqueLines);
      p[7 + a.reuse] = 1.0f;
      p[10] = slog(a.reuseDisIter);
      p[11] = slog(a.reuseDisBytes);
      p[12] = slog(a.reuseCt);
      double div = a.reuseCt > 0.5f ? 1.0 / a.reuseCt : 2.0;  // no reuse: TVM's magic 2
      p[13] = slog(a.bytes * div);
      p[14] = slog(a.uniqueBytes * div);
      p[15] = slog(a.lines * div);
      p[16] = slog(a.uniqueLines * div);
      p[17] = slog(a.stride);
    }

    // Group 3: arithmetic intensity curve (FLOPs / bytes against FLOPs).
    if (curOps > 0 && !computeOps_.empty()) {
      size_t pt = 0;
      for (int i = 0; i < kCurveSamples; ++i) {
        double target = computeOps_.back() * double(i + 1) / kCurveSamples;
        while (pt + 1 < computeOps_.size() && computeOps_[pt] < target - 1e-4)
          ++pt;
        double value;
        if (pt == 0) {
          value = computeOps_[0] / memBytes_[0];
        } else {
          double base = computeOps_[pt - 1] / memBytes_[pt - 1];
          double slope =
              (computeOps_[pt] / memBytes_[pt] - base) / std::max(1e-12, computeOps_[pt] - computeOps_[pt - 1]);
          value = base + slope * (target - computeOps_[pt - 1]);
        }
        row[kOffCurve + size_t(i)] = slog(value);
      }
    }

    // Group 4: allocation.
    if (binfo.allocSize > 0) {
      row[kOffAlloc] = slog(double(binfo.allocSize) * kElemBytes);
      row[kOffAlloc + 1] = slog(double(binfo.allocSize) * binfo.allocOuterProd);
      row[kOffAlloc + 2] = slog(binfo.allocOuterProd);
      row[kOffAlloc + 3] = slog(outerProd_ / binfo.allocOuterProd);
    }

    // Group 5: outer scope.
    int64_t unrollStep = 0;
    if (unroll.inner >= 0) unrollStep = extentAt(unroll.inner);
    row[kOffOther] = slog(outerProd_);
    row[kOffOther + 1] = slog(n);
    row[kOffOther + 2] = slog(double(unrollStep));

    binfo.stored = true;
    binfo.lastStoreLoops.resize(size_t(n));
    for (int d = 0; d < n; ++d)
      binfo.lastStoreLoops[size_t(d)] = stack_[size_t(d)].id;
    rows_.push_back(std::move(row));
  }

  void accessFeatures(Access& a) {
    const int n = depth_;
    a.bytes = float(outerProd_ * kElemBytes);
    if (n == 0) {
      a.uniqueBytes = float(kElemBytes);
      a.stride = 0;
      a.lines = a.uniqueLines = 1;
    } else {
      int64_t unique = 1;
      for (const Touch& t : stack_[0].touches)
        if (t.buf == a.buf) {
          unique = t.elems;
          break;
        }
      a.uniqueBytes = float(double(unique) * kElemBytes);
      int64_t stride = 0;
      double reduceRatio = 1;
      int i;
      for (i = n - 1; i >= 0; --i) {
        stride = accessStride(a, i);
        if (stride != 0) break;
        reduceRatio *= double(extentAt(i));
      }
      double lines = outerProd_ / reduceRatio * std::min(1.0, double(stride) * kElemBytes / kCacheLineBytes);
      a.lines = float(std::max(lines, 1.0));
      a.stride = float(i == n - 1 ? stride : 0);
      double continuous = double(a.denseRun) * kElemBytes;
      a.uniqueLines = float(std::max(1.0, a.uniqueBytes / std::min(continuous, kCacheLineBytes)));
    }
    reuse(a);
  }

  // TVM's ComputeReuse over the loops around the store, innermost first.
  void reuse(Access& a) {
    double disIter = 1, disBytes = -1;
    for (int i = depth_ - 1; i >= 0; --i) {
      const Frame& fr = stack_[size_t(i)];
      double extent = double(extentAt(i));
      if (a.mask & depthBit(i)) {
        disIter *= extent;
        disBytes = 0;
        for (const Touch& t : fr.touches)
          disBytes += double(t.elems) * kElemBytes;
      } else {
        if (disBytes < 0) disBytes = double(fr.touches.size()) * kElemBytes;
        a.reuse = kLoopMultipleRead;
        a.reuseDisIter = float(disIter);
        a.reuseDisBytes = float(disBytes);
        a.reuseCt = float(extent);
        return;
      }
      int count = 0;
      double minElems = std::numeric_limits<double>::max();
      for (const Touch& t : fr.touches)
        if (t.buf == a.buf) {
          ++count;
          minElems = std::min(minElems, double(t.elems));
        }
      if (count > 1) {
        a.reuse = kSerialMultipleReadWrite;
        a.reuseDisIter = float(minElems / extent);
        a.reuseDisBytes = float(disBytes / extent);
        a.reuseCt = float(count - 1);
        return;
      }
    }
    a.reuse = kNoReuse;
    a.reuseDisIter = a.reuseDisBytes = a.reuseCt = 0;
  }

  // Traversal state.
  std::vector<Frame> stack_;
  int depth_ = 0;
  uint32_t nextLoopId_ = 1;
  double outerProd_ = 1;
  std::vector<BufferInfo> buffers_;
  ProgramFeatures rows_;
  // Per-store scratch.
  std::vector<CNode> nodes_;
  std::vector<Term> terms_;
  std::vector<Atom> atoms_;
  std::vector<IndexForm> forms_;
  std::vector<Access> accesses_;
  int numAccesses_ = 0;
  std::vector<Dim> dims_, dims0_;
  std::vector<int64_t> distinctLo_;
  std::vector<double> computeOps_, memBytes_;
  std::vector<int> order_;
};

std::vector<std::string> makeNames() {
  std::vector<std::string> names = {"float_mad",     "float_addsub",    "float_mul",        "float_divmod",
                                    "float_cmp",     "float_math_func", "float_other_func", "int_mad",
                                    "int_addsub",    "int_mul",         "int_divmod",       "int_cmp",
                                    "int_math_func", "int_other_func",  "bool_op",          "select_op"};
  static const char* positions[] = {"kPosNone",        "kPosInnerSpatial", "kPosMiddleSpatial", "kPosOuterSpatial",
                                    "kPosInnerReduce", "kPosMiddleReduce", "kPosOuterReduce",   "kPosMixed"};
  for (const char* ann : {"vec", "unroll", "parallel"}) {
    std::string a = ann;
    names.push_back(a + "_num");
    names.push_back(a + "_prod");
    names.push_back(a + "_len");
    for (const char* p : positions)
      names.push_back(a + "_type." + p);
  }
  for (const char* n : {"is_gpu", "blockIdx_x_len", "blockIdx_y_len", "blockIdx_z_len", "threadIdx_x_len",
                        "threadIdx_y_len", "threadIdx_z_len", "vthread_len"})
    names.push_back(n);
  static const char* access[] = {"acc_type.kRead",
                                 "acc_type.kWrite",
                                 "acc_type.kReadWrite",
                                 "bytes",
                                 "unique_bytes",
                                 "lines",
                                 "unique_lines",
                                 "reuse_type.kLoopMultipleRead",
                                 "reuse_type.kSerialMultipleReadWrite",
                                 "reuse_type.kNoReuse",
                                 "reuse_dis_iter",
                                 "reuse_dis_bytes",
                                 "reuse_ct",
                                 "bytes_d_reuse_ct",
                                 "unique_bytes_d_reuse_ct",
                                 "lines_d_reuse_ct",
                                 "unique_lines_d_reuse_ct",
                                 "stride"};
  for (int b = 0; b < kMaxBufs; ++b)
    for (const char* f : access) {
      std::string n(1, 'B');
      n += char('0' + b);
      n += '.';
      n += f;
      names.push_back(std::move(n));
    }
  for (int i = 0; i < kCurveSamples; ++i)
    names.push_back("arith_intensity_curve_" + std::to_string(i));
  for (const char* n : {"alloc_size", "alloc_prod", "alloc_outer_prod", "alloc_inner_prod", "outer_prod", "num_loops",
                        "auto_unroll_max_step"})
    names.push_back(n);
  return names;
}

}  // namespace

ProgramFeatures extractFeatures(const lower::LoweredFunc& f) {
  return Extractor().run(f);
}

ProgramFeatures extractProgramFeatures(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps) {
  try {
    schedule::State state = schedule::replay(dag, steps);
    lower::LoweredFunc f = lower::lowerState(state);
    lower::rewriteLayouts(&f);  // as measured and run: constants in the layout the loops walk
    return extractFeatures(f);
  } catch (const std::exception&) {
    return {};
  }
}

const std::vector<std::string>& featureNames() {
  static const std::vector<std::string> names = makeNames();
  return names;
}

}  // namespace tessel::cost
