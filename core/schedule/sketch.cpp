#include "schedule/sketch.h"

#include <algorithm>
#include <deque>
#include <map>

#include "schedule/softmax_fusion_rule.h"

namespace tessel::schedule {

size_t addStep(Sketch& s, Step step) {
  applyStep(s.state, step);
  s.steps.push_back(std::move(step));
  return s.steps.size() - 1;
}

namespace {

std::vector<std::string> axisNames(const te::Op& op) {
  std::vector<std::string> v;
  for (const te::IterVar& a : op.axes)
    v.push_back(a.name);
  return v;
}

bool loadUsesAllAxes(const te::ExprNode* load, const std::vector<std::string>& axes) {
  for (const std::string& a : axes) {
    bool used = false;
    for (const te::Expr& i : load->args)
      used |= te::usesVar(i, a);
    if (!used) return false;
  }
  return true;
}

}  // namespace

bool hasExpensiveOp(const te::Expr& e) {
  if (e->kind == te::ExprKind::Call) return true;
  if (e->kind == te::ExprKind::Div && te::isFloat(e)) return true;
  for (const te::Expr& a : e->args)
    if (hasExpensiveOp(a)) return true;
  return false;
}

bool needsMultiLevelTiling(const State& s, int stage) {
  const te::Op& op = s.stages[size_t(stage)].op;
  if (op.placeholder || !op.hasReduce()) return false;
  std::vector<const te::ExprNode*> loads;
  te::collectLoads(op.body, &loads);
  std::vector<std::string> axes = axisNames(op);
  // Data reuse: some input is read by several iterations of the spatial space.
  return std::any_of(loads.begin(), loads.end(), [&](const te::ExprNode* l) { return !loadUsesAllAxes(l, axes); });
}

static bool hasSelect(const te::Expr& e) {
  if (e->kind == te::ExprKind::Select) return true;
  for (const te::Expr& a : e->args)
    if (hasSelect(a)) return true;
  return false;
}

bool isStrictlyInlinable(const State& s, int stage) {
  const Stage& st = s.stages[size_t(stage)];
  // Padding (a conditional load) is not inlined by rule: in a tiled
  // reduction its bounds test would run in the innermost loop. The
  // annotation chooses between inlining it, computing it at the root or
  // inside its consumer's tiles.
  return !st.op.placeholder && !st.op.hasReduce() && !s.isOutput(st.op.name) && !hasExpensiveOp(st.op.body) &&
         !hasSelect(st.op.body) && st.location == ComputeLocation::Root && s.attachedTo(stage).empty();
}

int elementwiseMatchedConsumer(const State& s, int stage) {
  std::vector<int> cons = s.consumers(stage);
  if (cons.size() != 1) return -1;
  const Stage& c = s.stages[size_t(cons[0])];
  const te::Op& p = s.stages[size_t(stage)].op;
  if (c.op.hasReduce() || c.op.shape != p.shape || c.location != ComputeLocation::Root) return -1;
  std::vector<const te::ExprNode*> loads;
  te::collectLoads(c.op.body, &loads);
  for (const te::ExprNode* l : loads) {
    if (l->name != p.name) continue;
    for (size_t d = 0; d < l->args.size(); ++d)
      if (l->args[d]->kind != te::ExprKind::Var || l->args[d]->name != c.op.axes[d].name) return -1;
  }
  return cons[0];
}

// Splits every spatial iterator into `sLevels` and every reduce iterator into
// `rLevels`, then orders them by the structure string ("SSRSRS").
void multiLevelTile(Sketch& sk, int stage, const std::string& structure) {
  int sLevels = int(std::count(structure.begin(), structure.end(), 'S'));
  int rLevels = int(std::count(structure.begin(), structure.end(), 'R'));
  std::vector<Iterator> roots = sk.state.stages[size_t(stage)].iters;
  std::map<std::string, std::vector<std::string>> levels;  // root -> level names
  for (const Iterator& it : roots) {
    int n = it.kind == IterKind::Spatial ? sLevels : rLevels;
    std::vector<std::string>& names = levels[it.name];
    if (n <= 1) {
      names.push_back(it.name);
      continue;
    }
    int idx = sk.state.stages[size_t(stage)].iterIndex(it.name);
    sk.tileSplits.push_back(addStep(sk, SplitStep{stage, idx, std::vector<int64_t>(size_t(n - 1), 1)}));
    for (int l = 0; l < n; ++l)
      names.push_back(it.name + "." + std::to_string(l));
  }
  std::vector<std::string> order;
  int sSeen = 0, rSeen = 0;
  for (char c : structure) {
    bool spatial = c == 'S';
    int level = spatial ? sSeen++ : rSeen++;
    for (const Iterator& it : roots)
      if ((it.kind == IterKind::Spatial) == spatial) order.push_back(levels[it.name][size_t(level)]);
  }
  const Stage& st = sk.state.stages[size_t(stage)];
  std::vector<int> perm;
  for (const std::string& n : order)
    perm.push_back(st.iterIndex(n));
  addStep(sk, ReorderStep{stage, perm});
  sk.tiled.insert(st.op.name);
}

std::string tileStructure(const HardwareParams& hw) {
  return hw.target.isCuda() ? "SSSRRSRS" : "SSRSRS";
}

// GPU: every input of a tiled stage is staged through shared memory, loaded
// once per outer reduction step (attached at the last level-0 reduce loop).
void addSharedCacheReads(Sketch& n, const std::string name, const std::set<std::string>& skip) {  // a copy
  std::vector<std::string> inputs = n.state.stages[size_t(n.state.stageIndex(name))].op.inputs();
  for (const std::string& in : inputs) {
    int src = n.state.stageIndex(in);
    if (src < 0 || skip.count(in)) continue;
    addStep(n, CacheReadStep{src, Scope::Shared, {n.state.stageIndex(name)}});
    std::string cache = in + ".shared";
    const Stage& st = n.state.stages[size_t(n.state.stageIndex(name))];
    int at = -1;
    for (size_t i = 0; i < st.iters.size(); ++i)
      if (st.iters[i].kind == IterKind::Reduce && st.iters[i].name.size() > 2 &&
          st.iters[i].name.compare(st.iters[i].name.size() - 2, 2, ".0") == 0)
        at = int(i);
    if (at < 0) continue;
    addStep(n, ComputeAtStep{n.state.stageIndex(cache), n.state.stageIndex(name), at});
    n.sharedCaches.insert(cache);
    n.placed.insert(cache);
  }
}

namespace {

using Condition = SketchRule::Condition;

class SkipRule : public SketchRule {
 public:
  std::string name() const override { return "skip"; }
  Condition check(const Sketch&, int, const HardwareParams&) const override { return Condition::Apply; }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
    return {{s, stage - 1}};
  }
};

class AlwaysInlineRule : public SketchRule {
 public:
  std::string name() const override { return "always_inline"; }
  Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
    return isStrictlyInlinable(s.state, stage) ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
    Sketch n = s;
    addStep(n, ComputeInlineStep{stage});
    n.placed.insert(s.state.stages[size_t(stage)].op.name);
    n.rules.push_back(name());
    return {{n, stage - 1}};
  }
};

class MultiLevelTilingRule : public SketchRule {
 public:
  std::string name() const override { return "multi_level_tiling"; }
  Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
    return needsMultiLevelTiling(s.state, stage) ? Condition::ApplyAndSkipRest : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams& hw) const override {
    Sketch n = s;
    multiLevelTile(n, stage, tileStructure(hw));
    n.rules.push_back(name());
    return {{n, stage - 1}};
  }
};

// Tiles the stage and computes it inside the tiles of its element-wise consumer.
class MultiLevelTilingWithFusionRule : public SketchRule {
 public:
  std::string name() const override { return "multi_level_tiling_with_fusion"; }
  Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
    return needsMultiLevelTiling(s.state, stage) && elementwiseMatchedConsumer(s.state, stage) >= 0
               ? Condition::ApplyAndSkipRest
               : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams& hw) const override {
    std::vector<std::pair<Sketch, int>> out;
    int consumer = elementwiseMatchedConsumer(s.state, stage);
    std::vector<int> fuseLevels = hw.target.isCuda() ? std::vector<int>{3} : std::vector<int>{1, 2};
    for (int level : fuseLevels) {
      Sketch n = s;
      size_t firstSplit = n.tileSplits.size();
      multiLevelTile(n, stage, tileStructure(hw));
      // The consumer splits each axis like the producer, keeping `level` outer levels.
      const te::Op& cop = n.state.stages[size_t(consumer)].op;
      std::vector<std::string> roots = axisNames(cop);
      std::map<std::string, std::vector<std::string>> names;
      for (size_t d = 0; d < roots.size(); ++d) {
        int idx = n.state.stages[size_t(consumer)].iterIndex(roots[d]);
        size_t src = n.tileSplits[firstSplit + d];
        size_t step = addStep(n, SplitStep{consumer, idx, std::vector<int64_t>(size_t(level), 1)});
        n.follows.push_back({step, src, level});
        for (int l = 0; l <= level; ++l)
          names[roots[d]].push_back(roots[d] + "." + std::to_string(l));
      }
      std::vector<int> perm;
      const Stage& cst = n.state.stages[size_t(consumer)];
      for (int l = 0; l <= level; ++l)
        for (const std::string& r : roots)
          perm.push_back(cst.iterIndex(names[r][size_t(l)]));
      addStep(n, ReorderStep{consumer, perm});
      int at = n.state.stages[size_t(consumer)].iterIndex(names[roots.back()][size_t(level - 1)]);
      addStep(n, ComputeAtStep{stage, consumer, at});
      n.placed.insert(n.state.stages[size_t(stage)].op.name);
      n.tiled.insert(cop.name);
      std::string tiledName = n.state.stages[size_t(stage)].op.name;
      if (hw.target.isCuda()) {
        n.threadGroups[cop.name] = int(roots.size());
        addSharedCacheReads(n, tiledName);
      }
      n.rules.push_back(name() + "@" + std::to_string(level));
      out.push_back({n, n.state.stageIndex(tiledName) - 1});  // caches may have moved it
    }
    return out;
  }
};

// Adds a local cache to a tiled stage without a fusible consumer, so the
// reduction accumulates in a small buffer; the copy-out then fuses with it.
class AddCacheWriteRule : public SketchRule {
 public:
  std::string name() const override { return "add_cache_write"; }
  Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
    const Stage& st = s.state.stages[size_t(stage)];
    bool fresh = st.relations.empty() && st.location == ComputeLocation::Root;
    return needsMultiLevelTiling(s.state, stage) && elementwiseMatchedConsumer(s.state, stage) < 0 && fresh
               ? Condition::Apply
               : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
    Sketch n = s;
    addStep(n, CacheWriteStep{stage, Scope::Local});
    n.rules.push_back(name());
    return {{n, stage}};  // the cache now sits at `stage`; its consumer is the copy
  }
};

// Splits a long reduction over a small output so its parts run in parallel.
class AddRfactorRule : public SketchRule {
 public:
  std::string name() const override { return "add_rfactor"; }
  Condition check(const Sketch& s, int stage, const HardwareParams& hw) const override {
    const Stage& st = s.state.stages[size_t(stage)];
    if (st.op.placeholder || !st.op.hasReduce() || needsMultiLevelTiling(s.state, stage)) return Condition::Pass;
    if (!st.relations.empty() || st.location != ComputeLocation::Root) return Condition::Pass;
    int64_t space = st.op.numElements(), reduce = 1;
    for (const te::IterVar& r : st.op.reduceAxes)
      reduce *= r.extent;
    return space < reduce && space < int64_t(hw.cores) * 16 ? Condition::Apply : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
    std::vector<std::pair<Sketch, int>> out;
    for (int which = 0; which < 2; ++which) {  // factor the outer or the inner part
      Sketch n = s;
      const Stage& st = n.state.stages[size_t(stage)];
      std::vector<int> reduceIters;
      for (size_t i = 0; i < st.iters.size(); ++i)
        if (st.iters[i].kind == IterKind::Reduce) reduceIters.push_back(int(i));
      if (reduceIters.size() > 1) addStep(n, FuseStep{stage, reduceIters});
      int r = reduceIters.front();
      n.tileSplits.push_back(addStep(n, SplitStep{stage, r, {1}}));
      addStep(n, RfactorStep{stage, r + which, int(st.op.axes.size())});
      n.rules.push_back(name());
      out.push_back({n, stage - 1});
    }
    return out;
  }
};

// A reduction without data reuse over a small window (pooling, a reduction
// over a few rows): the innermost spatial axis is split and its inner part
// moved under the reduction loops, so a block of contiguous outputs is
// updated together at every window step: a vector register tile
// (codegen/register_tile.h) instead of one output at a time with the window
// innermost. The plain sketch stays beside it.
class InnermostSpatialTileRule : public SketchRule {
 public:
  std::string name() const override { return "innermost_spatial_tile"; }
  Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
    const Stage& st = s.state.stages[size_t(stage)];
    if (st.op.placeholder || !st.op.hasReduce() || st.op.axes.empty() || needsMultiLevelTiling(s.state, stage))
      return Condition::Pass;
    if (!st.relations.empty() || st.location != ComputeLocation::Root) return Condition::Pass;
    int64_t reduce = 1;
    for (const te::IterVar& r : st.op.reduceAxes)
      reduce *= r.extent;
    // Wide enough to fill vectors, with a window short enough to keep every
    // step's accumulators in registers, and read contiguously along that axis
    // (an input's last index is the axis: pooling in NHWC, not a row softmax).
    const std::string& inner = st.op.axes.back().name;
    std::vector<const te::ExprNode*> loads;
    te::collectLoads(st.op.body, &loads);
    const bool contiguous = std::any_of(loads.begin(), loads.end(), [&](const te::ExprNode* l) {
      return !l->args.empty() && l->args.back()->kind == te::ExprKind::Var && l->args.back()->name == inner;
    });
    return contiguous && st.op.axes.back().extent >= 8 && reduce <= kMaxWindow ? Condition::Apply : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
    Sketch n = s;
    const std::string inner = n.state.stages[size_t(stage)].op.axes.back().name;
    n.tileSplits.push_back(
        addStep(n, SplitStep{stage, n.state.stages[size_t(stage)].iterIndex(inner), std::vector<int64_t>{1}}));
    const Stage& st = n.state.stages[size_t(stage)];
    std::vector<int> spatial, reduce;
    int tile = -1;
    for (size_t i = 0; i < st.iters.size(); ++i) {
      if (st.iters[i].name == inner + ".1")
        tile = int(i);
      else
        (st.iters[i].kind == IterKind::Reduce ? reduce : spatial).push_back(int(i));
    }
    if (tile < 0) return {{s, stage - 1}};
    std::vector<int> perm = spatial;
    perm.insert(perm.end(), reduce.begin(), reduce.end());
    perm.push_back(tile);
    addStep(n, ReorderStep{stage, perm});
    n.tiled.insert(st.op.name);
    n.rules.push_back(name());
    return {{n, stage - 1}};
  }

 private:
  static constexpr int64_t kMaxWindow = 1024;
};

// GPU: a tiled stage always accumulates in registers (a local cache).
class AddCacheWriteGpuRule : public AddCacheWriteRule {
 public:
  Condition check(const Sketch& s, int stage, const HardwareParams& hw) const override {
    return AddCacheWriteRule::check(s, stage, hw) == Condition::Pass ? Condition::Pass : Condition::ApplyAndSkipRest;
  }
};

// GPU: a reduction without data reuse is split so a block's threads each
// reduce a part (bound to threadIdx.x in annotation) and combine.
class CrossThreadReductionRule : public SketchRule {
 public:
  std::string name() const override { return "cross_thread_reduction"; }
  Condition check(const Sketch& s, int stage, const HardwareParams&) const override {
    const Stage& st = s.state.stages[size_t(stage)];
    if (st.op.placeholder || !st.op.hasReduce() || needsMultiLevelTiling(s.state, stage)) return Condition::Pass;
    if (!st.relations.empty() || st.location != ComputeLocation::Root) return Condition::Pass;
    int64_t reduce = 1;
    for (const te::IterVar& r : st.op.reduceAxes)
      reduce *= r.extent;
    return reduce >= 32 ? Condition::Apply : Condition::Pass;
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams&) const override {
    Sketch n = s;
    const Stage& st = n.state.stages[size_t(stage)];
    std::vector<int> reduceIters;
    for (size_t i = 0; i < st.iters.size(); ++i)
      if (st.iters[i].kind == IterKind::Reduce) reduceIters.push_back(int(i));
    if (reduceIters.size() > 1) addStep(n, FuseStep{stage, reduceIters});
    n.tileSplits.push_back(addStep(n, SplitStep{stage, reduceIters.front(), {1}}));
    n.crossThread.insert(n.state.stages[size_t(stage)].op.name);
    n.placed.insert(n.state.stages[size_t(stage)].op.name);
    n.rules.push_back(name());
    return {{n, stage - 1}};
  }
};

using Kind = target::Target::Kind;

std::map<Kind, std::vector<std::shared_ptr<SketchRule>>>& registry() {
  static std::map<Kind, std::vector<std::shared_ptr<SketchRule>>> r = [] {
    std::map<Kind, std::vector<std::shared_ptr<SketchRule>>> m;
    // AutoGTCO's softmax rule is the GPU's only: on the CPU it tuned to the
    // same latency as without it (softmax_fusion_rule.h has the figures).
    m[Kind::Cpu] = {std::make_shared<AlwaysInlineRule>(),
                    std::make_shared<AddCacheWriteRule>(),
                    std::make_shared<MultiLevelTilingWithFusionRule>(),
                    std::make_shared<MultiLevelTilingRule>(),
                    std::make_shared<AddRfactorRule>(),
                    std::make_shared<InnermostSpatialTileRule>(),
                    std::make_shared<SkipRule>()};
    m[Kind::Cuda] = {std::make_shared<AlwaysInlineRule>(),
                     makeSoftmaxFusionRule(),
                     std::make_shared<CrossThreadReductionRule>(),
                     std::make_shared<AddCacheWriteGpuRule>(),
                     std::make_shared<MultiLevelTilingWithFusionRule>(),
                     std::make_shared<MultiLevelTilingRule>(),
                     std::make_shared<SkipRule>()};
    return m;
  }();
  return r;
}

}  // namespace

const std::vector<std::shared_ptr<SketchRule>>& sketchRules(target::Target::Kind kind) {
  return registry()[kind];
}

void registerSketchRule(target::Target::Kind kind, std::shared_ptr<SketchRule> rule, const std::string& before) {
  auto& rules = registry()[kind];
  auto pos = std::find_if(rules.begin(), rules.end(), [&](const auto& r) { return r->name() == before; });
  rules.insert(before.empty() ? rules.end() : pos, std::move(rule));
}

std::shared_ptr<SketchRule> removeSketchRule(target::Target::Kind kind, const std::string& name) {
  auto& rules = registry()[kind];
  auto pos = std::find_if(rules.begin(), rules.end(), [&](const auto& r) { return r->name() == name; });
  if (pos == rules.end()) return nullptr;
  std::shared_ptr<SketchRule> rule = *pos;
  rules.erase(pos);
  return rule;
}

std::vector<Sketch> generateSketches(const te::ComputeDAG& dag, const HardwareParams& hw) {
  const auto& rules = sketchRules(hw.target.kind);
  Sketch init;
  init.initial = init.state = State(dag);
  std::deque<std::pair<Sketch, int>> queue = {{init, int(init.state.stages.size()) - 1}};
  std::vector<Sketch> out;
  while (!queue.empty()) {
    auto [sk, stage] = std::move(queue.front());
    queue.pop_front();
    if (stage < 0) {
      out.push_back(std::move(sk));
      continue;
    }
    if (sk.state.stages[size_t(stage)].op.placeholder ||
        sk.state.stages[size_t(stage)].location == ComputeLocation::Inlined) {
      queue.push_back({std::move(sk), stage - 1});
      continue;
    }
    for (const auto& rule : rules) {
      Condition c = rule->check(sk, stage, hw);
      if (c == Condition::Pass) continue;
      for (auto& derived : rule->apply(sk, stage, hw))
        queue.push_back(std::move(derived));
      if (c == Condition::ApplyAndSkipRest) break;
      if (rule->name() == "skip") break;
    }
  }
  return out;
}

}  // namespace tessel::schedule
