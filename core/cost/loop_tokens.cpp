#include "cost/loop_tokens.h"

#include <cmath>

#include "cost/feature_scale.h"

namespace tessel::cost {

namespace {

enum Column : size_t {
  kForKind,  // 7 columns, one per lower::ForKind
  kExtent = kForKind + 7,
  kDepth,
  kExecutions,  // times the loop body runs in one call
  kStores,      // Store statements beneath
  kFlopsPerIteration,
  kFlops,  // beneath, in one call
  kLoopsBeneath,
};
static_assert(kLoopsBeneath + 1 == kLoopTokenFeatures, "loop token layout");

struct Beneath {
  double stores = 0, flops = 0, loops = 0;  // flops per execution of the enclosing body
};

class TokenWalker {
 public:
  LoopTokens take() { return std::move(t_); }

  // Returns what the statement holds; appends its loops' tokens.
  Beneath walk(const lower::StmtNode& s, int depth, double executions) {
    Beneath b;
    switch (s.kind) {
      case lower::StmtNode::For: {
        const size_t token = t_.size();
        const bool kept = token < kMaxLoopTokens;
        if (kept) t_.values.resize(t_.values.size() + kLoopTokenFeatures, 0.0f);
        const double runs = executions * double(s.extent);
        Beneath inner;
        for (const lower::Stmt& c : s.body)
          add(inner, walk(*c, depth + 1, runs));
        if (kept) {
          float* row = t_.values.data() + token * kLoopTokenFeatures;
          row[kForKind + size_t(s.forKind)] = 1;
          row[kExtent] = slog(double(s.extent));
          row[kDepth] = float(depth);
          row[kExecutions] = slog(runs);
          row[kStores] = slog(inner.stores);
          row[kFlopsPerIteration] = slog(inner.flops);
          row[kFlops] = slog(inner.flops * runs);
          row[kLoopsBeneath] = slog(inner.loops);
        }
        b = {inner.stores, inner.flops * double(s.extent), inner.loops + 1};
        break;
      }
      case lower::StmtNode::Store:
        b = {1, double(te::countFlops(s.value)), 0};
        break;
      case lower::StmtNode::Seq:
      case lower::StmtNode::If:
        for (const lower::Stmt& c : s.body)
          add(b, walk(*c, depth, executions));
        break;
      case lower::StmtNode::Alloc:
        break;
    }
    return b;
  }

 private:
  static void add(Beneath& a, const Beneath& b) {
    a.stores += b.stores;
    a.flops += b.flops;
    a.loops += b.loops;
  }
  LoopTokens t_;
};

}  // namespace

LoopTokens extractLoopTokens(const lower::LoweredFunc& f) {
  TokenWalker w;
  if (f.body) w.walk(*f.body, 0, 1.0);
  return w.take();
}

const std::vector<std::string>& loopTokenFeatureNames() {
  static const std::vector<std::string> names = {
      "serial",        "parallel",     "vectorized", "unrolled",   "vthread",        "block_idx",
      "thread_idx",    "extent",       "depth",      "executions", "stores_beneath", "flops_per_iteration",
      "flops_beneath", "loops_beneath"};
  return names;
}

}  // namespace tessel::cost
