#include "schedule/softmax_fusion_rule.h"

#include <algorithm>

namespace tessel::schedule {

namespace {

std::vector<int64_t> outerShape(const te::Op& op) {
  return std::vector<int64_t>(op.shape.begin(), op.shape.end() - 1);
}

// A reduction of kind `k` over the last axis of `full` (one reduce axis).
bool reducesRows(const te::Op& op, te::ReduceKind k, const te::Op& full) {
  return op.reduce == k && op.reduceAxes.size() == 1 && op.reduceAxes[0].extent == full.shape.back() &&
         op.shape == outerShape(full);
}

bool sameSet(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

// A compute stage the rule may move: at the root, not an output.
bool movable(const State& s, int i) {
  const Stage& st = s.stages[size_t(i)];
  return !st.op.placeholder && st.location == ComputeLocation::Root && !s.isOutput(st.op.name);
}

// Every load of `name` in `body` indexes its last axis by variable `var`.
bool lastIndexIs(const te::Expr& body, const std::string& name, const std::string& var) {
  std::vector<const te::ExprNode*> loads;
  te::collectLoads(body, &loads);
  bool any = false;
  for (const te::ExprNode* l : loads) {
    if (l->name != name) continue;
    any = true;
    if (l->args.empty() || l->args.back()->kind != te::ExprKind::Var || l->args.back()->name != var) return false;
  }
  return any;
}

// Every load of `name` in `op` is at op's own indices.
bool readsElementwise(const te::Op& op, const std::string& name) {
  std::vector<const te::ExprNode*> loads;
  te::collectLoads(op.body, &loads);
  for (const te::ExprNode* l : loads) {
    if (l->name != name) continue;
    if (l->args.size() != op.axes.size()) return false;
    for (size_t d = 0; d < l->args.size(); ++d)
      if (l->args[d]->kind != te::ExprKind::Var || l->args[d]->name != op.axes[d].name) return false;
  }
  return true;
}

// A batch matmul reading a softmax: the softmax, and the element-wise stage
// between them (-1 if none) that the rule inlines.
struct Attention {
  SoftmaxStages softmax;
  int via = -1;
};

std::optional<Attention> matchAttention(const State& s, int stage) {
  const Stage& st = s.stages[size_t(stage)];
  if (st.op.placeholder || st.location != ComputeLocation::Root || !st.relations.empty()) return std::nullopt;
  if (st.op.reduceAxes.size() != 1 || st.op.axes.size() < 3 || !needsMultiLevelTiling(s, stage)) return std::nullopt;
  // Not a stage with an element-wise consumer (an epilogue, or the copy of
  // add_cache_write's local accumulator): those are tiled for their consumer.
  if (elementwiseMatchedConsumer(s, stage) >= 0) return std::nullopt;
  const std::string& k = st.op.reduceAxes[0].name;
  for (const std::string& in : s.effectiveInputs(stage)) {
    const int i = s.stageIndex(in);
    if (i < 0 || s.consumers(i) != std::vector<int>{stage} || !lastIndexIs(st.op.body, in, k)) continue;
    if (auto sm = matchSoftmax(s, i)) return Attention{*sm, -1};
    if (!isStrictlyInlinable(s, i)) continue;
    const te::Op& via = s.stages[size_t(i)].op;
    for (const std::string& in2 : s.effectiveInputs(i)) {
      const int j = s.stageIndex(in2);
      if (j < 0 || s.consumers(j) != std::vector<int>{i} || !readsElementwise(via, in2)) continue;
      if (s.stages[size_t(j)].op.shape != via.shape) continue;
      if (auto sm = matchSoftmax(s, j)) return Attention{*sm, i};
    }
  }
  return std::nullopt;
}

// Bytes of one normalised row, which the GPU sketch keeps in shared memory.
int64_t rowBytes(const State& s, const Attention& a) {
  return s.stages[size_t(a.softmax.norm)].op.shape.back() * int64_t(sizeof(float));
}

void attach(Sketch& n, int stage, int target, int at) {
  addStep(n, ComputeAtStep{stage, target, at});
  n.placed.insert(n.state.stages[size_t(stage)].op.name);
}

// CPU: the matmul tiled as by multi_level_tiling, its column loops of levels
// 0 and 1 moved under the row loops of level 1, and every softmax stage
// computed at the level-1 row-tile loop: for each tile of rows (and batch),
// its softmax, then all columns of its output (one softmax serves every
// column tile); parallel loops stop there.
Sketch cpuSketch(const Sketch& s, int stage, const Attention& a, const HardwareParams& hw) {
  Sketch n = s;
  multiLevelTile(n, stage, tileStructure(hw));
  const Stage& st = n.state.stages[size_t(stage)];
  const std::string col = st.op.axes.back().name, row = st.op.axes[st.op.axes.size() - 2].name;
  std::vector<int> order;
  for (int level = 0; level < 2; ++level)
    for (size_t d = 0; d + 1 < st.op.axes.size(); ++d)
      order.push_back(st.iterIndex(st.op.axes[d].name + "." + std::to_string(level)));
  order.push_back(st.iterIndex(col + ".0"));
  order.push_back(st.iterIndex(col + ".1"));
  for (int i = 0; i < int(st.iters.size()); ++i)
    if (std::find(order.begin(), order.end(), i) == order.end()) order.push_back(i);
  addStep(n, ReorderStep{stage, order});
  const int at = n.state.stages[size_t(stage)].iterIndex(row + ".1");
  const SoftmaxStages& sm = a.softmax;
  // Consumers first: each stage's readers are computed at that loop already.
  for (int i : {sm.norm, sm.sum, sm.exp, sm.max, sm.input})
    if (i >= 0) attach(n, i, stage, at);
  n.parallelStopsAtAttach.insert(st.op.name);
  return n;
}

// GPU: the matmul tiled as by multi_level_tiling (its level-0 loops bound to
// blockIdx by the annotation); the normalised rows of a block computed into
// shared memory by its threads (a shared cache_write of the normalisation,
// its copy inlined), the row max and sum (exp and the input inlined into
// them) by each thread, all at the block loop; the other input cached in
// shared memory per outer reduction step as usual.
Sketch gpuSketch(const Sketch& s, int stage, const Attention& a, const HardwareParams& hw) {
  Sketch n = s;
  const std::string mm = n.state.stages[size_t(stage)].op.name;
  auto name = [&](int i) { return i < 0 ? std::string() : n.state.stages[size_t(i)].op.name; };
  const std::string norm = name(a.softmax.norm), sum = name(a.softmax.sum), max = name(a.softmax.max),
                    exp = name(a.softmax.exp), input = name(a.softmax.input), via = name(a.via);
  auto index = [&](const std::string& x) { return n.state.stageIndex(x); };
  multiLevelTile(n, stage, tileStructure(hw));
  const int spatial = int(n.state.stages[size_t(stage)].op.axes.size());
  n.threadGroups[mm] = spatial;
  addStep(n, CacheWriteStep{index(norm), Scope::Shared});
  addStep(n, ComputeInlineStep{index(norm)});  // the copy: the matmul reads the shared rows
  n.placed.insert(norm);
  std::set<std::string> skip = {norm};
  if (!via.empty()) skip.insert(via);
  addSharedCacheReads(n, mm, skip);
  const int at = spatial - 1;  // the last loop of level 0: the block's
  const std::string rows = norm + ".shared";
  attach(n, index(rows), index(mm), at);
  n.sharedCaches.insert(rows);
  for (const std::string& x : {exp, input})
    if (!x.empty()) {
      addStep(n, ComputeInlineStep{index(x)});
      n.placed.insert(x);
    }
  attach(n, index(sum), index(mm), at);
  attach(n, index(max), index(mm), at);
  return n;
}

class FuseSoftmaxIntoBatchMatmulRule : public SketchRule {
 public:
  std::string name() const override { return "fuse_softmax_into_batch_matmul"; }
  Condition check(const Sketch& s, int stage, const HardwareParams& hw) const override {
    std::optional<Attention> a = matchAttention(s.state, stage);
    if (!a) return Condition::Pass;
    // GPU: one normalised row and the other input's tile must fit in shared memory.
    if (hw.target.isCuda() && rowBytes(s.state, *a) > hw.target.sharedMemoryPerBlock / 2) return Condition::Pass;
    return Condition::Apply;  // the other rules' sketches stay beside this one
  }
  std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams& hw) const override {
    std::optional<Attention> a = matchAttention(s.state, stage);
    if (!a) return {};
    Sketch base = s;
    if (a->via >= 0) {
      addStep(base, ComputeInlineStep{a->via});
      base.placed.insert(base.state.stages[size_t(a->via)].op.name);
    }
    const std::string mm = base.state.stages[size_t(stage)].op.name;
    Sketch n = hw.target.isCuda() ? gpuSketch(base, stage, *a, hw) : cpuSketch(base, stage, *a, hw);
    n.tiled.insert(mm);
    n.rules.push_back(name());
    return {{n, n.state.stageIndex(mm) - 1}};
  }
};

}  // namespace

std::optional<SoftmaxStages> matchSoftmax(const State& s, int norm) {
  const te::Op& n = s.stages[size_t(norm)].op;
  if (!movable(s, norm) || n.hasReduce() || n.shape.size() < 2) return std::nullopt;
  std::vector<std::string> ins = s.effectiveInputs(norm);
  if (ins.size() != 2) return std::nullopt;
  SoftmaxStages sm;
  sm.norm = norm;
  for (const std::string& in : ins) {
    const int i = s.stageIndex(in);
    if (i < 0) return std::nullopt;
    (reducesRows(s.stages[size_t(i)].op, te::ReduceKind::Sum, n) ? sm.sum : sm.exp) = i;
  }
  if (sm.sum < 0 || sm.exp < 0 || !movable(s, sm.sum) || !movable(s, sm.exp)) return std::nullopt;
  const te::Op& e = s.stages[size_t(sm.exp)].op;
  if (e.hasReduce() || e.shape != n.shape || s.effectiveInputs(sm.sum) != std::vector<std::string>{e.name})
    return std::nullopt;
  std::vector<std::string> eins = s.effectiveInputs(sm.exp);
  if (eins.size() != 2) return std::nullopt;
  int x = -1;
  for (const std::string& in : eins) {
    const int i = s.stageIndex(in);
    if (i >= 0 && reducesRows(s.stages[size_t(i)].op, te::ReduceKind::Max, n))
      sm.max = i;
    else
      x = i;
  }
  if (sm.max < 0 || x < 0 || !movable(s, sm.max)) return std::nullopt;
  if (s.effectiveInputs(sm.max) != std::vector<std::string>{s.stages[size_t(x)].op.name}) return std::nullopt;
  if (s.consumers(sm.max) != std::vector<int>{sm.exp} || !sameSet(s.consumers(sm.exp), {sm.sum, norm}) ||
      s.consumers(sm.sum) != std::vector<int>{norm})
    return std::nullopt;
  const te::Op& xo = s.stages[size_t(x)].op;
  if (movable(s, x) && !xo.hasReduce() && xo.shape == n.shape && sameSet(s.consumers(x), {sm.max, sm.exp}) &&
      s.attachedTo(x).empty())
    sm.input = x;
  return sm;
}

std::shared_ptr<SketchRule> makeSoftmaxFusionRule() {
  return std::make_shared<FuseSoftmaxIntoBatchMatmulRule>();
}

}  // namespace tessel::schedule
