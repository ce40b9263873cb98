// Index arithmetic of the lowering: value ranges of integer expressions and
// affine decomposition of indices (sum of coefficient * term + constant).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "te/expr.h"

namespace tessel::lower {

struct Interval {
  int64_t lo, hi;  // inclusive
};
using Ranges = std::map<std::string, Interval>;  // loop variable -> its values

// Range of an integer expression over the given variable ranges; nullopt when
// it uses an unknown variable or an operation the analysis does not follow.
std::optional<Interval> bounds(const te::Expr& e, const Ranges& r);

// An index as sum(coef * atom) + constant; atoms are variables or opaque
// non-linear subexpressions (v / 4, (v / 4) % 8), keyed by their text.
struct Linear {
  struct Term {
    te::Expr atom;
    int64_t coef = 0;
  };
  std::map<std::string, Term> terms;
  int64_t constant = 0;
};

// Adds scale * e to *out.
void linearize(const te::Expr& e, int64_t scale, Linear* out);

// Canonical sum of an affine index: equal terms cancel ((x + 4) - x -> 4).
te::Expr simplifyIndex(const te::Expr& e);

}  // namespace tessel::lower
