// Annotation of sketches (Ansor's initial population rules): tile sizes,
// compute locations, parallel, vectorize and unroll. Every choice goes
// through a Decider, so the same walk samples random programs and rebuilds
// a program from recorded (e.g. mutated) decisions.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "schedule/sketch.h"

namespace tessel::schedule {

namespace {

class Decider {
 public:
  Decider(ProgramDecisions* d, std::mt19937_64* rng, std::vector<std::string>* visited = nullptr)
      : d_(d), rng_(rng), visited_(visited) {}

  int64_t integer(const std::string& key, int64_t lo, int64_t hi) {
    if (visited_) visited_->push_back(key);
    Choice& c = d_->choices[key];
    bool fresh = c.value.empty();
    c.lo = lo, c.hi = hi, c.tile = false;
    if (rng_ && fresh) c.value = {std::uniform_int_distribution<int64_t>(lo, hi)(*rng_)};
    if (c.value.empty()) c.value = {lo};
    c.value[0] = std::clamp(c.value[0], lo, hi);
    return c.value[0];
  }

  // One of `options`, stored as its index.
  int64_t pick(const std::string& key, const std::vector<int64_t>& options) {
    return options[size_t(integer(key, 0, int64_t(options.size()) - 1))];
  }

  std::vector<int64_t> tile(const std::string& key, int64_t extent, size_t n, int64_t maxInnermost) {
    if (visited_) visited_->push_back(key);
    Choice& c = d_->choices[key];
    bool fresh = c.value.empty();
    // Lengths decided for another extent (a program transferred from another
    // task) are re-fitted to this one; the same task's never need it.
    if (!fresh && c.value.size() == n && c.tile && c.extent > 0 &&
        (c.extent != extent || (!c.value.empty() && c.value.back() > maxInnermost)))
      c.value = refitTileLengths(c.value, extent, maxInnermost);
    c.tile = true, c.extent = extent, c.maxInnermost = maxInnermost;
    if (rng_ && fresh) c.value = sampleTileLengths(extent, n, maxInnermost, *rng_);
    if (c.value.size() != n) c.value.assign(n, 1);
    for (int64_t& v : c.value)
      v = std::max<int64_t>(1, v);
    return c.value;
  }

 private:
  ProgramDecisions* d_;
  std::mt19937_64* rng_;               // null: replay recorded decisions only
  std::vector<std::string>* visited_;  // set: every decision's key, in the order taken
};

std::vector<int64_t> followLengths(const std::vector<int64_t>& src, int level) {
  std::vector<int64_t> out(src.begin(), src.begin() + (level - 1));
  int64_t rest = 1;
  for (size_t i = size_t(level - 1); i < src.size(); ++i)
    rest *= src[i];
  out.push_back(rest);
  return out;
}

bool isAttachPoint(const State& s, int stage, const std::string& iter) {
  for (int a : s.attachedTo(stage))
    if (s.stages[size_t(a)].attachIter == iter) return true;
  return false;
}

void apply(State& s, std::vector<Step>& steps, Step step) {
  applyStep(s, step);
  steps.push_back(std::move(step));
}

// The root axes of the consumer whose values index its reads of `producer`.
std::set<std::string> axesIndexing(const te::Op& consumer, const std::string& producer) {
  std::vector<const te::ExprNode*> loads;
  te::collectLoads(consumer.body, &loads);
  std::vector<std::string> vars;
  for (const te::ExprNode* l : loads)
    if (l->name == producer)
      for (const te::Expr& index : l->args)
        te::collectVars(index, &vars);
  return {vars.begin(), vars.end()};
}

// Whether every root axis a loop derives from ("i.0", "i.1@j.0") is in `axes`.
bool derivesFrom(const std::string& loop, const std::set<std::string>& axes) {
  for (size_t start = 0; start <= loop.size();) {
    const size_t end = std::min(loop.find('@', start), loop.size());
    const std::string part = loop.substr(start, end - start);
    if (!axes.count(part.substr(0, part.find('.')))) return false;
    start = end + 1;
  }
  return true;
}

void changeComputeLocations(const Sketch& sk, State& s, std::vector<Step>& steps, Decider& d) {
  for (int i = int(s.stages.size()) - 1; i >= 0; --i) {
    const Stage& st = s.stages[size_t(i)];
    if (st.op.placeholder || st.location != ComputeLocation::Root || s.isOutput(st.op.name)) continue;
    if (sk.placed.count(st.op.name) || sk.tiled.count(st.op.name)) continue;
    std::vector<int> cons = s.consumers(i);
    if (cons.size() != 1) continue;
    const Stage& c = s.stages[size_t(cons[0])];
    // A costly stage (a reduction, or exp / sqrt / division) is placed only
    // where each of its values is computed once per use: attached above the
    // first consumer loop that does not index it, and never inlined into a
    // consumer that reduces. Ansor leaves this to its cost model; with a
    // small budget its picks (a layer norm's row mean recomputed per channel,
    // its sqrt per multiply-add of the matmul that reads it) cost a run
    // timeout each.
    const bool costly = st.op.hasReduce() || hasExpensiveOp(st.op.body);
    const std::set<std::string> indexing = costly ? axesIndexing(c.op, st.op.name) : std::set<std::string>{};
    int64_t spots = 0;  // the consumer's leading spatial loops
    while (size_t(spots) < c.iters.size() && c.iters[size_t(spots)].kind == IterKind::Spatial &&
           (!costly || derivesFrom(c.iters[size_t(spots)].name, indexing)))
      ++spots;
    // -1: stay at the root; -2: inline (for stages the rules left to us)
    bool inlinable = !st.op.hasReduce() && s.attachedTo(i).empty() && !(costly && c.op.hasReduce());
    int64_t at = d.integer("at:" + st.op.name, inlinable ? -2 : -1, spots - 1);
    if (at >= 0) apply(s, steps, ComputeAtStep{i, cons[0], int(at)});
    if (at == -2) apply(s, steps, ComputeInlineStep{i});
  }
}

void parallelize(const Sketch& sk, State& s, std::vector<Step>& steps, const HardwareParams& hw, Decider& d) {
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (st.op.placeholder || st.location != ComputeLocation::Root) continue;
    const bool stopAtAttach = sk.parallelStopsAtAttach.count(st.op.name) > 0;
    size_t k = 0, enough = 0;
    int64_t product = 1;
    while (k < st.iters.size() && st.iters[k].kind == IterKind::Spatial && st.iters[k].annotation == Annotation::None) {
      product *= st.iters[k].extent;
      ++k;
      if (!enough && product >= int64_t(hw.cores) * 16) enough = k;
      if (stopAtAttach && isAttachPoint(s, int(i), st.iters[k - 1].name)) break;
    }
    if (k == 0) continue;
    // At least enough loops to give every core work (when there are that
    // many), at most enough for 16 chunks per core.
    size_t least = 1;
    for (int64_t p = st.iters[0].extent; least < k && p < hw.cores; p *= st.iters[least++].extent) {
    }
    size_t most = std::max(least, enough ? enough : k);
    int64_t n = d.integer("parallel:" + st.op.name, int64_t(least), int64_t(most));
    if (n > 1) {
      std::vector<int> its;
      for (int j = 0; j < n; ++j)
        its.push_back(j);
      apply(s, steps, FuseStep{int(i), its});
    }
    if (s.stages[i].iters[0].extent > 1) apply(s, steps, AnnotationStep{int(i), 0, Annotation::Parallel});
  }
}

void vectorize(State& s, std::vector<Step>& steps, const HardwareParams& hw, Decider& d) {
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (st.op.placeholder || st.location == ComputeLocation::Inlined || st.iters.empty()) continue;
    int last = int(st.iters.size()) - 1;
    int64_t product = 1;
    int n = 0;
    for (int k = last; k >= 0; --k) {
      const Iterator& it = st.iters[size_t(k)];
      if (it.kind != IterKind::Spatial || it.annotation != Annotation::None || isAttachPoint(s, int(i), it.name)) break;
      if (product * it.extent > hw.maxVectorLanes) break;
      product *= it.extent;
      ++n;
    }
    if (n == 0) continue;
    int use = int(d.integer("vectorize:" + st.op.name, 1, n));
    int first = last - use + 1;
    if (use > 1) {
      std::vector<int> its;
      for (int k = first; k <= last; ++k)
        its.push_back(k);
      apply(s, steps, FuseStep{int(i), its});
    }
    if (s.stages[i].iters[size_t(first)].extent > 1)
      apply(s, steps, AnnotationStep{int(i), first, Annotation::Vectorize});
  }
}

void unroll(State& s, std::vector<Step>& steps, Decider& d) {
  static const std::vector<int64_t> choices = {0, 16, 64, 512};
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (st.op.placeholder || st.location == ComputeLocation::Inlined || !st.op.hasReduce() || st.iters.empty())
      continue;
    int64_t v = d.pick("unroll:" + st.op.name, choices);
    if (v) apply(s, steps, PragmaStep{int(i), 0, int(v)});
  }
}

// Fuses iterators [first, first + count) of a stage into one (if more than one).
void fuseRange(State& s, std::vector<Step>& steps, int stage, int first, int count) {
  if (count <= 1) return;
  std::vector<int> its;
  for (int k = first; k < first + count; ++k)
    its.push_back(k);
  apply(s, steps, FuseStep{stage, its});
}

int64_t threadsOf(const Stage& st) {
  int64_t n = 1;
  for (const Iterator& it : st.iters)
    if (it.annotation == Annotation::ThreadX) n *= it.extent;
  return n;
}

// GPU: bind loops to blocks, virtual threads and threads; caches in shared
// memory are fetched cooperatively by the block's threads.
void bindGpu(const Sketch& sk, State& s, std::vector<Step>& steps, const HardwareParams& hw, Decider& d) {
  static const std::vector<int64_t> threadChoices = {32, 64, 128, 256, 512, 1024};
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    int si = int(i);
    if (st.op.placeholder || st.location != ComputeLocation::Root) continue;
    if (auto g = sk.threadGroups.find(st.op.name); g != sk.threadGroups.end()) {
      int m = g->second;
      fuseRange(s, steps, si, 0, m);
      apply(s, steps, AnnotationStep{si, 0, Annotation::BlockX});
      fuseRange(s, steps, si, 1, m);
      apply(s, steps, AnnotationStep{si, 1, Annotation::VThread});
      fuseRange(s, steps, si, 2, m);
      apply(s, steps, AnnotationStep{si, 2, Annotation::ThreadX});
      continue;
    }
    int spatial = 0;
    while (size_t(spatial) < st.iters.size() && st.iters[size_t(spatial)].kind == IterKind::Spatial)
      ++spatial;
    if (sk.crossThread.count(st.op.name)) {
      fuseRange(s, steps, si, 0, spatial);
      int r = spatial > 0 ? 1 : 0;
      if (spatial > 0) apply(s, steps, AnnotationStep{si, 0, Annotation::BlockX});
      apply(s, steps, AnnotationStep{si, r + 1, Annotation::ThreadX});  // the inner part of the reduction
      continue;
    }
    if (spatial == 0) continue;
    fuseRange(s, steps, si, 0, spatial);
    int64_t threads = d.pick("threads:" + st.op.name, threadChoices);
    apply(s, steps, SplitStep{si, 0, {threads}});
    apply(s, steps, AnnotationStep{si, 0, Annotation::BlockX});
    apply(s, steps, AnnotationStep{si, 1, Annotation::ThreadX});
  }
  for (size_t i = 0; i < s.stages.size(); ++i) {
    const Stage& st = s.stages[i];
    if (!sk.sharedCaches.count(st.op.name) || st.location != ComputeLocation::At) continue;
    // The block's thread count: that of the root stage this cache sits in.
    std::string root = st.attachStage;
    while (s.stage(root).location == ComputeLocation::At)
      root = s.stage(root).attachStage;
    int64_t threads = threadsOf(s.stage(root));
    fuseRange(s, steps, int(i), 0, int(st.iters.size()));
    // Each thread fetches 1, 2 or 4 consecutive elements (float2/float4
    // loads where aligned: codegen/cuda_vectorize.h), as Ansor's rule does.
    const int64_t extent = s.stages[i].iters[0].extent;
    std::vector<int64_t> lanes = {1};
    for (int64_t w : {2, 4})
      if (extent % (threads * w) == 0) lanes.push_back(w);
    const int64_t w = lanes.size() > 1 ? d.pick("vector:" + st.op.name, lanes) : 1;
    if (w == 1) {
      apply(s, steps, SplitStep{int(i), 0, {threads}});
    } else {
      apply(s, steps, SplitStep{int(i), 0, {threads, w}});
      apply(s, steps, AnnotationStep{int(i), 2, Annotation::Vectorize});
    }
    apply(s, steps, AnnotationStep{int(i), 1, Annotation::ThreadX});
  }
  (void)hw;
}

std::vector<Step> annotate(const Sketch& sk, const HardwareParams& hw, Decider& d) {
  State s = sk.initial;
  std::vector<Step> steps;
  std::map<size_t, std::vector<int64_t>> filled;
  for (size_t i = 0; i < sk.steps.size(); ++i) {
    Step step = sk.steps[i];
    if (auto* sp = std::get_if<SplitStep>(&step)) {
      if (std::find(sk.tileSplits.begin(), sk.tileSplits.end(), i) != sk.tileSplits.end()) {
        int64_t extent = s.stages.at(size_t(sp->stage)).iters.at(size_t(sp->iter)).extent;
        sp->lengths = d.tile("tile:" + std::to_string(i), extent, sp->lengths.size(), hw.maxInnermostSplit);
        filled[i] = sp->lengths;
      }
      for (const FollowSplit& f : sk.follows)
        if (f.step == i) sp->lengths = followLengths(filled.at(f.source), f.level);
    }
    apply(s, steps, step);
  }
  changeComputeLocations(sk, s, steps, d);
  if (hw.target.isCuda()) {
    bindGpu(sk, s, steps, hw, d);
  } else {
    parallelize(sk, s, steps, hw, d);
    vectorize(s, steps, hw, d);
  }
  unroll(s, steps, d);
  validateProgram(s, hw);
  return steps;
}

}  // namespace

std::vector<int64_t> sampleTileLengths(int64_t extent, size_t n, int64_t maxInnermost, std::mt19937_64& rng) {
  std::vector<int64_t> lengths(n, 1);
  int64_t rest = extent;
  for (size_t k = n; k-- > 0;) {
    std::vector<int64_t> d = divisors(rest);
    if (k == n - 1) d.erase(std::remove_if(d.begin(), d.end(), [&](int64_t x) { return x > maxInnermost; }), d.end());
    lengths[k] = d[std::uniform_int_distribution<size_t>(0, d.size() - 1)(rng)];
    rest /= lengths[k];
  }
  return lengths;
}

std::vector<Step> annotateSketch(const Sketch& sk, const HardwareParams& hw, std::mt19937_64& rng,
                                 ProgramDecisions* decisions) {
  ProgramDecisions local;
  ProgramDecisions& d = decisions ? *decisions : local;
  d.choices.clear();
  Decider decider(&d, &rng);
  return annotate(sk, hw, decider);
}

std::vector<Step> materialize(const Sketch& sk, ProgramDecisions& decisions, const HardwareParams& hw,
                              std::vector<std::string>* visited) {
  Decider decider(&decisions, nullptr, visited);
  return annotate(sk, hw, decider);
}

std::vector<int64_t> refitTileLengths(const std::vector<int64_t>& lengths, int64_t extent, int64_t maxInnermost) {
  // Innermost first: the inner levels size registers, vectors and caches, so
  // each keeps its length as nearly (in ratio) as the divisors of what is
  // left allow; the outer level, implied, takes the rest of the new extent.
  std::vector<int64_t> out(lengths.size(), 1);
  int64_t rest = std::max<int64_t>(1, extent);
  for (size_t k = lengths.size(); k-- > 0;) {
    const double want = std::log(double(std::max<int64_t>(1, lengths[k])));
    int64_t best = 1;
    double bestGap = std::abs(want);
    for (int64_t d : divisors(rest)) {
      if (k + 1 == lengths.size() && d > maxInnermost) break;
      const double gap = std::abs(std::log(double(d)) - want);
      if (gap < bestGap - 1e-12) best = d, bestGap = gap;  // ties: the shorter
    }
    out[k] = best;
    rest /= best;
  }
  return out;
}

void validateProgram(const State& s, const HardwareParams& hw) {
  for (const Stage& st : s.stages) {
    int64_t threads = 1;
    for (const Iterator& it : st.iters) {
      if (it.annotation == Annotation::Vectorize && it.extent > 64)
        throw ScheduleError("vectorized loop of " + std::to_string(it.extent) + " lanes in '" + st.op.name + "'");
      if (it.annotation >= Annotation::ThreadX) threads *= it.extent;
      if (it.annotation == Annotation::VThread && it.extent > 8)
        throw ScheduleError("'" + st.op.name + "' has " + std::to_string(it.extent) + " virtual threads (limit 8)");
    }
    if (hw.target.isCuda() && threads > hw.target.maxThreadsPerBlock)
      throw ScheduleError("'" + st.op.name + "' uses " + std::to_string(threads) + " threads per block (limit " +
                          std::to_string(hw.target.maxThreadsPerBlock) + ")");
  }
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i * i != n) d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

}  // namespace tessel::schedule
