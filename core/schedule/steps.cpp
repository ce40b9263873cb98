#include "schedule/steps.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace tessel::schedule {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& step, const std::string& why) {
  throw ScheduleError(step + ": " + why);
}

Stage& stageAt(State& s, int i, const char* step) {
  if (i < 0 || size_t(i) >= s.stages.size())
    fail(step, "stage index " + std::to_string(i) + " out of range (" + std::to_string(s.stages.size()) + " stages)");
  return s.stages[size_t(i)];
}

Stage& computeStage(State& s, int i, const char* step) {
  Stage& st = stageAt(s, i, step);
  if (st.op.placeholder) fail(step, "stage '" + st.op.name + "' is a placeholder");
  return st;
}

Stage& loopStage(State& s, int i, const char* step) {
  Stage& st = computeStage(s, i, step);
  if (st.location == ComputeLocation::Inlined) fail(step, "stage '" + st.op.name + "' is inlined");
  return st;
}

Iterator& iterAt(Stage& st, int i, const char* step) {
  if (i < 0 || size_t(i) >= st.iters.size())
    fail(step, "iterator index " + std::to_string(i) + " out of range for stage '" + st.op.name + "' (" +
                   std::to_string(st.iters.size()) + " iterators)");
  return st.iters[size_t(i)];
}

// Moves attachments (and the unroll pragma) from old iterator names to a new one.
void renameAttachPoints(State& s, const std::string& stageName, const std::vector<std::string>& from,
                        const std::string& to) {
  for (Stage& st : s.stages)
    if (st.location == ComputeLocation::At && st.attachStage == stageName &&
        std::find(from.begin(), from.end(), st.attachIter) != from.end())
      st.attachIter = to;
  Stage& self = s.stages[size_t(s.stageIndex(stageName))];
  if (std::find(from.begin(), from.end(), self.pragmaIter) != from.end()) self.pragmaIter = to;
}

void requireNothingAttached(const State& s, int stage, const char* step) {
  std::vector<int> att = s.attachedTo(stage);
  if (!att.empty())
    fail(step, "stage '" + s.stages[size_t(att[0])].op.name + "' is attached to '" + s.stages[size_t(stage)].op.name +
                   "'; apply this step before compute_at");
}

void resetLoops(Stage& st) {
  st.iters = initialIterators(st.op);
  st.relations.clear();
  st.pragmaIter.clear();
  st.autoUnrollMaxStep = 0;
}

// Inserts a stage and keeps name-based references valid (they are by name).
void insertStage(State& s, size_t at, Stage st) {
  s.stages.insert(s.stages.begin() + long(at), std::move(st));
}

std::vector<te::Expr> axisVars(const te::Op& op) {
  std::vector<te::Expr> v;
  for (const te::IterVar& a : op.axes)
    v.push_back(te::var(a.name));
  return v;
}

struct Apply {
  State& s;
  // Generated loops count with 32-bit int (support/size_limits.h).
  static constexpr int64_t kMaxLoopExtent = 2147483647;

  void operator()(const SplitStep& x) {
    Stage& st = loopStage(s, x.stage, "split");
    Iterator it = iterAt(st, x.iter, "split");
    if (x.lengths.empty()) fail("split", "no lengths given");
    for (int64_t l : x.lengths)
      if (l < 1) fail("split", "length " + std::to_string(l) + " is not positive");
    if (it.annotation != Annotation::None)
      fail("split", "iterator '" + it.name + "' is annotated " + annotationName(it.annotation));
    // Checked: stored lengths are untrusted (fuzz_steps found an overflow).
    int64_t inner = 1;
    for (int64_t l : x.lengths)
      if (__builtin_mul_overflow(inner, l, &inner) || inner > kMaxLoopExtent)
        fail("split",
             "lengths multiply to more than " + std::to_string(kMaxLoopExtent) + ", the longest loop Tessel generates");
    Relation r{Relation::Split, {it.name}, {}, x.lengths};
    std::vector<Iterator> out;
    for (size_t i = 0; i <= x.lengths.size(); ++i) {
      Iterator c{it.name + "." + std::to_string(i), i ? x.lengths[i - 1] : (it.extent + inner - 1) / inner, it.kind};
      r.outputs.push_back(c.name);
      out.push_back(c);
    }
    st.iters.erase(st.iters.begin() + x.iter);
    st.iters.insert(st.iters.begin() + x.iter, out.begin(), out.end());
    st.relations.push_back(r);
    renameAttachPoints(s, st.op.name, {it.name}, out.back().name);
  }

  void operator()(const FuseStep& x) {
    Stage& st = loopStage(s, x.stage, "fuse");
    if (x.iters.empty()) fail("fuse", "no iterators given");
    for (size_t i = 0; i < x.iters.size(); ++i) {
      iterAt(st, x.iters[i], "fuse");
      if (i && x.iters[i] != x.iters[i - 1] + 1) fail("fuse", "iterators must be consecutive");
    }
    Relation r{Relation::Fuse, {}, {}, {}};
    Iterator f{"", 1, st.iters[size_t(x.iters[0])].kind};
    for (int i : x.iters) {
      const Iterator& it = st.iters[size_t(i)];
      if (it.kind != f.kind) fail("fuse", "cannot fuse spatial and reduce iterators");
      if (it.annotation != Annotation::None) fail("fuse", "iterator '" + it.name + "' is annotated");
      f.name += (f.name.empty() ? "" : "@") + it.name;
      f.extent *= it.extent;
      r.inputs.push_back(it.name);
    }
    r.outputs = {f.name};
    st.iters.erase(st.iters.begin() + x.iters.front(), st.iters.begin() + x.iters.back() + 1);
    st.iters.insert(st.iters.begin() + x.iters.front(), f);
    st.relations.push_back(r);
    renameAttachPoints(s, st.op.name, r.inputs, f.name);
  }

  void operator()(const ReorderStep& x) {
    Stage& st = loopStage(s, x.stage, "reorder");
    std::vector<int> sorted = x.order;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != int(i) || sorted.size() != st.iters.size())
        fail("reorder", "order is not a permutation of the " + std::to_string(st.iters.size()) + " iterators of '" +
                            st.op.name + "'");
    std::vector<Iterator> its;
    for (int i : x.order)
      its.push_back(st.iters[size_t(i)]);
    st.iters = its;
  }

  void operator()(const ComputeAtStep& x) {
    Stage& st = loopStage(s, x.stage, "compute_at");
    Stage& target = loopStage(s, x.target, "compute_at");
    iterAt(target, x.targetIter, "compute_at");
    if (s.isOutput(st.op.name)) fail("compute_at", "'" + st.op.name + "' is an output");
    // Every consumer is the target, or computed at the same loop of it
    // already (a softmax's stages at a matmul's row tile: the region is what
    // they read there together).
    const std::string& iterName = target.iters[size_t(x.targetIter)].name;
    std::vector<int> cons = s.consumers(x.stage);
    if (cons.empty()) fail("compute_at", "nothing reads '" + st.op.name + "'");
    for (int c : cons) {
      const Stage& cs = s.stages[size_t(c)];
      if (c != x.target &&
          !(cs.location == ComputeLocation::At && cs.attachStage == target.op.name && cs.attachIter == iterName))
        fail("compute_at", "'" + cs.op.name + "' reads '" + st.op.name + "' outside loop '" + iterName + "' of '" +
                               target.op.name + "'");
    }
    for (std::string t = target.op.name; !t.empty();) {  // no cycles through attachments
      if (t == st.op.name) fail("compute_at", "attachment would form a cycle");
      const Stage& ts = s.stage(t);
      t = ts.location == ComputeLocation::At ? ts.attachStage : "";
    }
    st.location = ComputeLocation::At;
    st.attachStage = target.op.name;
    st.attachIter = iterName;
  }

  void operator()(const ComputeInlineStep& x) {
    Stage& st = computeStage(s, x.stage, "compute_inline");
    if (st.op.hasReduce()) fail("compute_inline", "'" + st.op.name + "' has a reduction");
    if (s.isOutput(st.op.name)) fail("compute_inline", "'" + st.op.name + "' is an output");
    requireNothingAttached(s, x.stage, "compute_inline");
    st.location = ComputeLocation::Inlined;
  }

  void operator()(const ComputeRootStep& x) {
    Stage& st = computeStage(s, x.stage, "compute_root");
    st.location = ComputeLocation::Root;
    st.attachStage.clear();
    st.attachIter.clear();
  }

  void operator()(const CacheWriteStep& x) {
    Stage& st = loopStage(s, x.stage, "cache_write");
    if (x.scope == Scope::Global) fail("cache_write", "the cache must be local or shared");
    requireNothingAttached(s, x.stage, "cache_write");
    Stage cache;
    cache.op = st.op;
    cache.op.name = st.op.name + "." + scopeName(x.scope);
    cache.scope = x.scope;
    resetLoops(cache);
    st.op.reduce = te::ReduceKind::None;
    st.op.reduceAxes.clear();
    st.op.body = te::load(cache.op.name, axisVars(st.op));
    resetLoops(st);
    insertStage(s, size_t(x.stage), std::move(cache));
  }

  void operator()(const CacheReadStep& x) {
    Stage& st = stageAt(s, x.stage, "cache_read");
    if (x.scope == Scope::Global) fail("cache_read", "the cache must be local or shared");
    if (x.readers.empty()) fail("cache_read", "no readers given");
    std::string name = st.op.name, cacheName = name + "." + scopeName(x.scope);
    if (s.stageIndex(cacheName) >= 0) fail("cache_read", "'" + cacheName + "' exists already");
    for (int r : x.readers) {
      Stage& rd = computeStage(s, r, "cache_read");
      std::vector<std::string> in = rd.op.inputs();
      if (std::find(in.begin(), in.end(), name) == in.end())
        fail("cache_read", "'" + rd.op.name + "' does not read '" + name + "'");
    }
    Stage cache;
    cache.op.name = cacheName;
    cache.op.shape = st.op.shape;
    te::Indices idx;
    static const char* names[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
    for (size_t d = 0; d < st.op.shape.size(); ++d) {
      std::string n = d < 8 ? names[d] : "a" + std::to_string(d);
      cache.op.axes.push_back({n, st.op.shape[d]});
      idx.push_back(te::var(n));
    }
    cache.op.body = te::load(name, idx);
    cache.scope = x.scope;
    resetLoops(cache);
    for (int r : x.readers) {
      Stage& rd = s.stages[size_t(r)];
      rd.op.body = te::rewriteLoads(rd.op.body, name, [&](const te::Indices& i) { return te::load(cacheName, i); });
    }
    insertStage(s, size_t(x.stage) + 1, std::move(cache));
  }

  void operator()(const RfactorStep& x) {
    Stage& st = loopStage(s, x.stage, "rfactor");
    const Iterator& it = iterAt(st, x.iter, "rfactor");
    if (it.kind != IterKind::Reduce) fail("rfactor", "'" + it.name + "' is not a reduce iterator");
    if (x.factorAxis < 0 || size_t(x.factorAxis) > st.op.axes.size())
      fail("rfactor", "factor axis " + std::to_string(x.factorAxis) + " out of range");
    requireNothingAttached(s, x.stage, "rfactor");
    LoopStructure ls = deriveLoops(st, fullExtents(st.op));
    // The partial stage: spatial axes plus the factored iterator; it reduces
    // over the remaining reduce iterators.
    Stage rf;
    rf.op.name = st.op.name + ".rf";
    rf.op.reduce = st.op.reduce;
    rf.op.axes = st.op.axes;
    rf.op.shape = st.op.shape;
    std::string factorName = "f";
    rf.op.axes.insert(rf.op.axes.begin() + x.factorAxis, {factorName, it.extent});
    rf.op.shape.insert(rf.op.shape.begin() + x.factorAxis, it.extent);
    std::map<std::string, te::Expr> sub;
    for (const te::IterVar& a : st.op.reduceAxes)
      sub[a.name] = ls.rootValue.at(a.name);
    size_t rk = 0;
    std::map<std::string, te::Expr> rename;
    for (size_t i = 0; i < st.iters.size(); ++i) {
      const Iterator& r = st.iters[i];
      if (r.kind != IterKind::Reduce) continue;
      if (int(i) == x.iter) {
        rename[r.name] = te::var(factorName);
      } else {
        std::string n = "r" + std::to_string(rk++);
        rf.op.reduceAxes.push_back({n, ls.extents[i]});
        rename[r.name] = te::var(n);
      }
    }
    te::Expr body = te::substitute(st.op.body, sub);
    // Guards of uneven reduce splits keep the padding out of the partial sums.
    for (const te::Expr& p : ls.predicates) {
      std::vector<std::string> vars;
      te::collectVars(p, &vars);
      bool onReduce = std::all_of(vars.begin(), vars.end(), [&](const std::string& v) { return rename.count(v) > 0; });
      if (onReduce) body = te::select(p, body, te::reduceInit(st.op.reduce));
    }
    rf.op.body = te::substitute(body, rename);
    // With the factored iterator the only reduce loop, the partial stage is a plain map.
    if (rf.op.reduceAxes.empty()) rf.op.reduce = te::ReduceKind::None;
    resetLoops(rf);
    // The original stage now reduces the partials over the factor axis.
    te::Indices idx = axisVars(st.op);
    idx.insert(idx.begin() + x.factorAxis, te::var("rk"));
    st.op.reduceAxes = {{"rk", it.extent}};
    st.op.body = te::load(rf.op.name, idx);
    resetLoops(st);
    insertStage(s, size_t(x.stage), std::move(rf));
  }

  void operator()(const AnnotationStep& x) {
    Stage& st = loopStage(s, x.stage, "annotate");
    Iterator& it = iterAt(st, x.iter, "annotate");
    Annotation a = x.annotation;
    if (a != Annotation::None && it.annotation != Annotation::None)
      fail("annotate", "iterator '" + it.name + "' is annotated " + annotationName(it.annotation) + " already");
    bool reduceOk = a == Annotation::Unroll || a == Annotation::ThreadX || a == Annotation::None;
    if (it.kind == IterKind::Reduce && !reduceOk)
      fail("annotate", std::string("cannot mark reduce iterator '") + it.name + "' " + annotationName(a));
    it.annotation = a;
  }

  void operator()(const PragmaStep& x) {
    Stage& st = loopStage(s, x.stage, "pragma");
    const Iterator& it = iterAt(st, x.iter, "pragma");
    if (x.autoUnrollMaxStep < 0) fail("pragma", "auto_unroll_max_step must not be negative");
    st.pragmaIter = it.name;
    st.autoUnrollMaxStep = x.autoUnrollMaxStep;
  }
};

json ints(const std::vector<int>& v) {
  return json(v);
}

int getInt(const json& j, size_t i) {
  if (i >= j.size() || !j[i].is_number_integer())
    throw ScheduleError("step " + j.dump() + ": field " + std::to_string(i) + " must be an integer");
  return j[i].get<int>();
}

template <class T>
std::vector<T> getList(const json& j, size_t i) {
  if (i >= j.size() || !j[i].is_array())
    throw ScheduleError("step " + j.dump() + ": field " + std::to_string(i) + " must be a list");
  std::vector<T> out;
  for (const json& v : j[i]) {
    if (!v.is_number_integer()) throw ScheduleError("step " + j.dump() + ": list must hold integers");
    out.push_back(v.get<T>());
  }
  return out;
}

std::string getStr(const json& j, size_t i) {
  if (i >= j.size() || !j[i].is_string())
    throw ScheduleError("step " + j.dump() + ": field " + std::to_string(i) + " must be a string");
  return j[i].get<std::string>();
}

Scope scopeFrom(const std::string& s) {
  if (s == "local") return Scope::Local;
  if (s == "shared") return Scope::Shared;
  throw ScheduleError("unknown scope '" + s + "'");
}

json toJson(const Step& step) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, SplitStep>) return {"SP", x.stage, x.iter, x.lengths};
        if constexpr (std::is_same_v<T, FuseStep>) return {"FU", x.stage, ints(x.iters)};
        if constexpr (std::is_same_v<T, ReorderStep>) return {"RE", x.stage, ints(x.order)};
        if constexpr (std::is_same_v<T, ComputeAtStep>) return {"CA", x.stage, x.target, x.targetIter};
        if constexpr (std::is_same_v<T, ComputeInlineStep>) return {"CI", x.stage};
        if constexpr (std::is_same_v<T, ComputeRootStep>) return {"CR", x.stage};
        if constexpr (std::is_same_v<T, CacheWriteStep>) return {"CHW", x.stage, scopeName(x.scope)};
        if constexpr (std::is_same_v<T, CacheReadStep>) return {"CHR", x.stage, scopeName(x.scope), ints(x.readers)};
        if constexpr (std::is_same_v<T, RfactorStep>) return {"RF", x.stage, x.iter, x.factorAxis};
        if constexpr (std::is_same_v<T, AnnotationStep>) return {"AN", x.stage, x.iter, annotationName(x.annotation)};
        if constexpr (std::is_same_v<T, PragmaStep>) return {"PR", x.stage, x.iter, x.autoUnrollMaxStep};
      },
      step);
}

Step fromJson(const json& j) {
  if (!j.is_array() || j.empty() || !j[0].is_string()) throw ScheduleError("malformed step " + j.dump());
  std::string k = j[0].get<std::string>();
  if (k == "SP") return SplitStep{getInt(j, 1), getInt(j, 2), getList<int64_t>(j, 3)};
  if (k == "FU") return FuseStep{getInt(j, 1), getList<int>(j, 2)};
  if (k == "RE") return ReorderStep{getInt(j, 1), getList<int>(j, 2)};
  if (k == "CA") return ComputeAtStep{getInt(j, 1), getInt(j, 2), getInt(j, 3)};
  if (k == "CI") return ComputeInlineStep{getInt(j, 1)};
  if (k == "CR") return ComputeRootStep{getInt(j, 1)};
  if (k == "CHW") return CacheWriteStep{getInt(j, 1), scopeFrom(getStr(j, 2))};
  if (k == "CHR") return CacheReadStep{getInt(j, 1), scopeFrom(getStr(j, 2)), getList<int>(j, 3)};
  if (k == "RF") return RfactorStep{getInt(j, 1), getInt(j, 2), getInt(j, 3)};
  if (k == "AN") return AnnotationStep{getInt(j, 1), getInt(j, 2), annotationFromName(getStr(j, 3))};
  if (k == "PR") return PragmaStep{getInt(j, 1), getInt(j, 2), getInt(j, 3)};
  throw ScheduleError("unknown step kind '" + k + "'");
}

}  // namespace

void applyStep(State& state, const Step& step) {
  std::visit(Apply{state}, step);
}

State replay(const te::ComputeDAG& dag, const std::vector<Step>& steps) {
  State s(dag);
  for (const Step& st : steps)
    applyStep(s, st);
  return s;
}

std::string serializeSteps(const std::vector<Step>& steps) {
  json j = json::array();
  for (const Step& s : steps)
    j.push_back(toJson(s));
  return j.dump();
}

std::vector<Step> deserializeSteps(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw ScheduleError(std::string("steps are not valid JSON: ") + e.what());
  }
  if (!j.is_array()) throw ScheduleError("steps must be a JSON list");
  std::vector<Step> out;
  for (const json& s : j)
    out.push_back(fromJson(s));
  return out;
}

std::string stepToString(const Step& step) {
  return toJson(step).dump();
}

std::optional<std::vector<Step>> replayableSteps(const te::ComputeDAG& dag, const std::string& text, std::string* why) {
  try {
    std::vector<Step> steps = deserializeSteps(text);
    replay(dag, steps);
    return steps;
  } catch (const std::exception& e) {
    // Not only ScheduleError: damaged steps must never take the caller down.
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace tessel::schedule
