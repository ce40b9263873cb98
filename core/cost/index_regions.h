// The index analysis under Ansor's buffer-access features (cost/features.cpp):
// a flat index compiled against the loops around a store, linearised into
// constant + sum(coef x loop variable) + opaque div/mod atoms bounded by
// interval arithmetic, and the number of elements an access touches while
// the loops at some depth and deeper run. Internal to cost/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "lower/loop_nest.h"

namespace tessel::cost::detail {

// The loops around the statement being analysed, outermost first.
struct LoopStack {
  std::vector<const lower::StmtNode*> loops;  // [0, depth) are live
  int depth = 0;
  // Extents are constants >= 1 (an empty loop would make every ratio meaningless).
  int64_t extentAt(int d) const { return std::max<int64_t>(1, loops[size_t(d)]->extent); }
  int depthOf(const std::string& var) const {
    for (int d = depth - 1; d >= 0; --d)
      if (loops[size_t(d)]->loopVar == var) return d;
    return -1;
  }
};

inline uint64_t depthBit(int depth) {
  return uint64_t(1) << std::min(depth, 63);
}
// Bits of the loops at `level` and deeper.
inline uint64_t levelMask(int level) {
  return level >= 64 ? depthBit(63) : ~((uint64_t(1) << level) - 1);
}

struct Interval {
  int64_t lo = 0, hi = 0;
};

// An index expression compiled against the loop stack: variables resolved
// to loop depths once, so the per-level analyses never touch strings.
struct CNode {
  te::ExprKind kind = te::ExprKind::IntImm;
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

struct Dim {
  int64_t stride, extent;
};

class IndexRegions {
 public:
  explicit IndexRegions(const LoopStack& loops) : loops_(loops) {}
  // Forgets the previous store's indices.
  void clear();
  // Compiles and linearises one flat index; returns its form's number.
  int addForm(const te::ExprNode& index);
  const IndexForm& form(int f) const { return forms_[size_t(f)]; }
  // How many of the form's terms and atoms move with the loop at `depth`.
  int uses(int f, int depth) const;
  // Elements an access (all its indices) touches while the loops at
  // `level` and deeper run; at level 0 also its contiguous run.
  int64_t accessRegion(const std::vector<int>& forms, int level, int64_t* denseRun);
  // Smallest step of the access per iteration of the loop at `depth`.
  int64_t accessStride(const std::vector<int>& forms, int depth) const;

 private:
  struct Region {
    int64_t count = 1, lo = 0, hi = 0, denseRun = 1;
  };
  int compile(const te::ExprNode& e);
  bool immOf(int node, int64_t* v) const;
  Interval bounds(int node, int level) const;
  int64_t coefficient(int node, int depth) const;
  void linearize(int node, int64_t scale, IndexForm& f);
  Region formRegion(const IndexForm& f, int level, std::vector<Dim>& dims) const;
  int64_t extentAt(int d) const { return loops_.extentAt(d); }

  const LoopStack& loops_;
  std::vector<CNode> nodes_;
  std::vector<Term> terms_;
  std::vector<Atom> atoms_;
  std::vector<IndexForm> forms_;
  std::vector<Dim> dims_, dims0_;
  std::vector<int64_t> distinctLo_;
};

}  // namespace tessel::cost::detail
