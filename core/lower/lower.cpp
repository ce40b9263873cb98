#include <algorithm>
#include <functional>
#include <optional>
#include <sstream>

#include "lower/index_analysis.h"
#include "lower/loop_nest.h"

namespace tessel::lower {

using schedule::ComputeLocation;
using schedule::IterKind;
using schedule::ScheduleError;
using schedule::Stage;
using schedule::State;
using te::Expr;
using te::ExprKind;

Stmt makeFor(std::string var, int64_t extent, ForKind kind, std::vector<Stmt> body, char axis) {
  auto s = std::make_shared<StmtNode>();
  s->kind = StmtNode::For;
  s->loopVar = std::move(var);
  s->extent = extent;
  s->forKind = kind;
  s->axis = axis;
  s->body = std::move(body);
  return s;
}
Stmt makeSeq(std::vector<Stmt> body) {
  auto s = std::make_shared<StmtNode>();
  s->kind = StmtNode::Seq;
  s->body = std::move(body);
  return s;
}
Stmt makeStore(std::string buffer, Expr index, Expr value) {
  auto s = std::make_shared<StmtNode>();
  s->kind = StmtNode::Store;
  s->buffer = std::move(buffer);
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}
Stmt makeIf(Expr cond, std::vector<Stmt> body) {
  auto s = std::make_shared<StmtNode>();
  s->kind = StmtNode::If;
  s->cond = std::move(cond);
  s->body = std::move(body);
  return s;
}
Stmt makeAlloc(std::string buffer, int64_t size, schedule::Scope scope) {
  auto s = std::make_shared<StmtNode>();
  s->kind = StmtNode::Alloc;
  s->buffer = std::move(buffer);
  s->size = size;
  s->scope = scope;
  return s;
}

std::string cIdent(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t" + out;
  return out;
}

namespace {

bool usesAny(const Expr& e, const std::vector<std::string>& vars) {
  for (const std::string& v : vars)
    if (te::usesVar(e, v)) return true;
  return false;
}

// Region of one index: base (outer variables only) + [lo, hi].
struct DimRegion {
  std::string key;  // of the base's symbolic part, to compare regions
  Expr symbolic;
  int64_t lo = 0, hi = 0;
};

std::optional<DimRegion> indexRegion(const Expr& index, const std::vector<std::string>& inner, const Ranges& ranges) {
  Linear lin;
  linearize(index, 1, &lin);
  DimRegion r;
  r.symbolic = te::intImm(0);
  r.lo = r.hi = lin.constant;
  for (const auto& [key, t] : lin.terms) {
    if (t.coef == 0) continue;
    if (usesAny(t.atom, inner)) {
      auto b = bounds(t.atom, ranges);
      if (!b) return std::nullopt;
      r.lo += t.coef > 0 ? t.coef * b->lo : t.coef * b->hi;
      r.hi += t.coef > 0 ? t.coef * b->hi : t.coef * b->lo;
    } else {
      r.key += std::to_string(t.coef) + "*" + key + ";";
      r.symbolic = r.symbolic + t.atom * t.coef;
    }
  }
  return r;
}

// ---- per-stage layout -----------------------------------------------------

struct StageInfo {
  std::vector<std::string> loopVars;  // "" for loops of extent 1
  std::vector<int64_t> extents;
  std::map<std::string, Expr> axisValue;  // absolute value of each root axis
  std::vector<Expr> relValue;             // spatial axis relative to the buffer region
  std::vector<Expr> predicates;
  // The tensor's buffer: element (idx) lives at flat((idx - base) in extents).
  std::string buffer;
  std::vector<Expr> base;
  std::vector<int64_t> bufExtent;
  bool local = false;
};

class Lowerer {
 public:
  explicit Lowerer(const State& s) : s_(s), info_(s.stages.size()), body_(s.stages.size()) {}

  LoweredFunc run() {
    inlineBodies();
    for (size_t i = s_.stages.size(); i-- > 0;)
      layout(int(i));
    LoweredFunc f;
    for (size_t i = 0; i < s_.stages.size(); ++i) {
      const Stage& st = s_.stages[i];
      Buffer b{info_[i].buffer, st.op.numElements(), st.op.layoutFree};
      if (st.op.placeholder) f.args.push_back(b);
    }
    f.numInputs = f.args.size();
    for (const std::string& out : s_.outputs) {
      int i = s_.stageIndex(out);
      f.args.push_back({info_[size_t(i)].buffer, s_.stages[size_t(i)].op.numElements()});
    }
    std::vector<Stmt> top;
    for (size_t i = 0; i < s_.stages.size(); ++i) {
      const Stage& st = s_.stages[i];
      if (st.op.placeholder || st.location != ComputeLocation::Root) continue;
      if (!s_.isOutput(st.op.name)) f.temps.push_back({info_[i].buffer, st.op.numElements()});
      for (Stmt& x : emitStage(int(i)))
        top.push_back(x);
    }
    f.body = makeSeq(std::move(top));
    return f;
  }

 private:
  // Bodies with inlined stages substituted, in root axis variables.
  void inlineBodies() {
    for (size_t i = 0; i < s_.stages.size(); ++i) {
      const Stage& st = s_.stages[i];
      if (st.op.placeholder) continue;
      Expr b = st.op.body;
      std::vector<const te::ExprNode*> loads;
      for (size_t j = 0; j < i; ++j) {
        const Stage& p = s_.stages[j];
        if (p.location != ComputeLocation::Inlined || p.op.placeholder) continue;
        b = te::rewriteLoads(b, p.op.name, [&](const te::Indices& idx) {
          std::map<std::string, Expr> sub;
          for (size_t d = 0; d < p.op.axes.size(); ++d)
            sub[p.op.axes[d].name] = idx[d];
          return te::substitute(body_[j], sub);
        });
      }
      body_[i] = b;
    }
  }

  void layout(int si) {
    const Stage& st = s_.stages[size_t(si)];
    StageInfo& in = info_[size_t(si)];
    in.buffer = cIdent(st.op.name);
    in.bufExtent = st.op.shape;
    in.base.assign(st.op.shape.size(), te::intImm(0));
    if (st.op.placeholder || st.location == ComputeLocation::Inlined) return;

    std::map<std::string, int64_t> extents = schedule::fullExtents(st.op);
    std::vector<Expr> guards;
    if (st.location == ComputeLocation::At) {
      in.local = true;
      inferRegion(si, &guards);
      for (size_t d = 0; d < st.op.axes.size(); ++d)
        extents[st.op.axes[d].name] = in.bufExtent[d];
    }
    schedule::LoopStructure ls = schedule::deriveLoops(st, extents);
    std::map<std::string, Expr> rename;
    for (size_t i = 0; i < st.iters.size(); ++i) {
      std::string v = ls.extents[i] > 1 ? cIdent(st.op.name) + "_" + cIdent(st.iters[i].name) : "";
      for (const Stage& other : s_.stages)
        if (!v.empty() && cIdent(other.op.name) == v) v += "_l";  // never the name of a buffer
      in.loopVars.push_back(v);
      if (!v.empty()) {
        rename[st.iters[i].name] = te::var(v);
        ranges_[v] = {0, ls.extents[i] - 1};
        schedule::Annotation a = st.iters[i].annotation;
        if (a == schedule::Annotation::VThread ||
            (a >= schedule::Annotation::ThreadX && a <= schedule::Annotation::ThreadZ))
          threadVars_.push_back(v);
      }
    }
    in.extents = ls.extents;
    for (const auto& [axis, value] : ls.rootValue)
      in.axisValue[axis] = te::substitute(value, rename);
    for (const Expr& p : ls.predicates)
      in.predicates.push_back(te::substitute(p, rename));
    for (size_t d = 0; d < st.op.axes.size(); ++d) {
      const std::string& a = st.op.axes[d].name;
      in.relValue.push_back(in.axisValue[a]);
      in.axisValue[a] = in.base[d] + in.axisValue[a];
    }
    for (const Expr& g : guards)
      in.predicates.push_back(te::substitute(g, in.axisValue));
  }

  // The part of an attached stage's tensor its consumer needs inside the
  // attach loop: sets base/bufExtent, and guards where it may leave the tensor.
  void inferRegion(int si, std::vector<Expr>* guards) {
    const Stage& st = s_.stages[size_t(si)];
    StageInfo& in = info_[size_t(si)];
    int ci = s_.stageIndex(st.attachStage);
    const Stage& cs = s_.stages[size_t(ci)];
    const StageInfo& cinfo = info_[size_t(ci)];
    int k = cs.iterIndex(st.attachIter);
    if (k < 0) throw ScheduleError("compute_at: iterator '" + st.attachIter + "' of '" + cs.op.name + "' is gone");
    std::vector<std::string> inner;
    for (size_t i = size_t(k) + 1; i < cinfo.loopVars.size(); ++i)
      if (!cinfo.loopVars[i].empty()) inner.push_back(cinfo.loopVars[i]);
    // Shared memory is filled by all threads of a block together: its region
    // spans every thread (and virtual thread) index, not one thread's share.
    if (st.scope == schedule::Scope::Shared) inner.insert(inner.end(), threadVars_.begin(), threadVars_.end());

    // The reads: the target's, and those of the stages computed at the same
    // loop (laid out already: consumers come later), whose loops are inner.
    struct Read {
      const te::ExprNode* load;
      const StageInfo* reader;
      std::vector<std::string> inner;
    };
    std::vector<Read> reads;
    std::vector<const te::ExprNode*> loads;
    te::collectLoads(body_[size_t(ci)], &loads);
    for (const te::ExprNode* l : loads)
      reads.push_back({l, &cinfo, inner});
    for (int c : s_.consumers(si)) {
      const Stage& cs2 = s_.stages[size_t(c)];
      if (c == ci) continue;
      if (cs2.location != ComputeLocation::At || cs2.attachStage != st.attachStage || cs2.attachIter != st.attachIter)
        throw ScheduleError("'" + cs2.op.name + "' reads '" + st.op.name + "' outside the loop it is computed at");
      std::vector<std::string> own = inner;
      for (const std::string& v : info_[size_t(c)].loopVars)
        if (!v.empty()) own.push_back(v);
      std::vector<const te::ExprNode*> theirs;
      te::collectLoads(body_[size_t(c)], &theirs);
      for (const te::ExprNode* l : theirs)
        reads.push_back({l, &info_[size_t(c)], own});
    }
    size_t nd = st.op.shape.size();
    std::vector<std::optional<DimRegion>> region(nd);
    bool first = true;
    std::vector<bool> full(nd, false);
    for (const Read& rd : reads) {
      const te::ExprNode* l = rd.load;
      if (l->name != st.op.name) continue;
      for (size_t d = 0; d < nd; ++d) {
        if (full[d]) continue;
        Expr idx = te::substitute(l->args[d], rd.reader->axisValue);
        auto r = indexRegion(idx, rd.inner, ranges_);
        if (!r || (!first && r->key != region[d]->key)) {
          full[d] = true;
          continue;
        }
        if (first)
          region[d] = r;
        else
          region[d]->lo = std::min(region[d]->lo, r->lo), region[d]->hi = std::max(region[d]->hi, r->hi);
      }
      first = false;
    }
    for (size_t d = 0; d < nd; ++d) {
      int64_t whole = st.op.shape[d];
      if (full[d] || !region[d] || region[d]->hi - region[d]->lo + 1 >= whole) continue;  // keep the whole axis
      Expr base = region[d]->symbolic + region[d]->lo;
      int64_t ext = region[d]->hi - region[d]->lo + 1;
      in.base[d] = base;
      in.bufExtent[d] = ext;
      auto b = bounds(base, ranges_);
      if (!b || b->lo < 0 || b->hi + ext > whole) {
        Expr v = te::var(st.op.axes[d].name);
        guards->push_back(v >= te::intImm(0) && v < te::intImm(whole));
      }
    }
  }

  Expr flatIndex(const StageInfo& t, const std::vector<Expr>& idx, bool relative) const {
    Expr flat = te::intImm(0);
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr i = relative ? idx[d] : idx[d] - t.base[d];
      flat = flat * t.bufExtent[d] + i;
    }
    return simplifyIndex(flat);
  }

  // Substitutes loop values for axes and turns loads into flat buffer reads.
  Expr lowerValue(int si, const Expr& body) const {
    Expr e = te::substitute(body, info_[size_t(si)].axisValue);
    for (size_t j = 0; j < s_.stages.size(); ++j) {
      const StageInfo& t = info_[j];
      if (s_.stages[j].location == ComputeLocation::Inlined && !s_.stages[j].op.placeholder) continue;
      e = te::rewriteLoads(e, s_.stages[j].op.name,
                           [&](const te::Indices& idx) { return te::load(t.buffer, {flatIndex(t, idx, false)}); });
    }
    return e;
  }

  ForKind forKind(schedule::Annotation a, char* axis) const {
    using A = schedule::Annotation;
    switch (a) {
      case A::Parallel:
        return ForKind::Parallel;
      case A::Vectorize:
        return ForKind::Vectorized;
      case A::Unroll:
        return ForKind::Unrolled;
      case A::VThread:
        return ForKind::VThread;
      case A::BlockX:
      case A::BlockY:
      case A::BlockZ:
        *axis = char('x' + (int(a) - int(A::BlockX)));
        return ForKind::BlockIdx;
      case A::ThreadX:
      case A::ThreadY:
      case A::ThreadZ:
        *axis = char('x' + (int(a) - int(A::ThreadX)));
        return ForKind::ThreadIdx;
      default:
        return ForKind::Serial;
    }
  }

  // Loops [from, to) of a stage around `inner`; stages attached to those
  // loops go at the start of their bodies.
  // `innerProduct`: iterations of the stage's loops already inside `inner`;
  // auto_unroll_max_step unrolls a loop only if its whole body has at most
  // that many iterations.
  std::vector<Stmt> nest(int si, int from, int to, std::vector<Stmt> inner, bool withAttached,
                         const std::function<bool(int)>& keep, int64_t innerProduct = 1) {
    const Stage& st = s_.stages[size_t(si)];
    const StageInfo& in = info_[size_t(si)];
    int pragma = st.autoUnrollMaxStep > 0 ? st.iterIndex(st.pragmaIter) : -1;
    std::vector<Stmt> body = std::move(inner);
    for (int i = to - 1; i >= from; --i) {
      if (!keep(i)) continue;
      std::vector<Stmt> b;
      if (withAttached)
        for (int a : s_.attachedTo(si))
          if (s_.stages[size_t(a)].attachIter == st.iters[size_t(i)].name)
            for (Stmt& x : emitAttached(a))
              b.push_back(x);
      for (Stmt& x : body)
        b.push_back(x);
      if (in.extents[size_t(i)] == 1) {
        body = std::move(b);
        continue;
      }
      innerProduct *= in.extents[size_t(i)];
      char axis = 'x';
      ForKind k = forKind(st.iters[size_t(i)].annotation, &axis);
      if (k == ForKind::Serial && pragma >= 0 && i >= pragma && innerProduct <= st.autoUnrollMaxStep)
        k = ForKind::Unrolled;
      body = {makeFor(in.loopVars[size_t(i)], in.extents[size_t(i)], k, std::move(b), axis)};
    }
    return body;
  }

  std::vector<Stmt> guarded(const std::vector<Expr>& preds, Stmt s) const {
    Expr c = te::intImm(1);
    for (const Expr& p : preds)
      c = c && p;
    int64_t v;
    if (te::isIntImm(c, &v) && v) return {s};
    return {makeIf(c, {s})};
  }

  std::vector<Stmt> emitAttached(int si) {
    const StageInfo& in = info_[size_t(si)];
    int64_t size = 1;
    for (int64_t e : in.bufExtent)
      size *= e;
    std::vector<Stmt> out = {makeAlloc(in.buffer, size, s_.stages[size_t(si)].scope)};
    for (Stmt& x : emitStage(si))
      out.push_back(x);
    return out;
  }

  std::vector<Stmt> emitStage(int si) {
    const Stage& st = s_.stages[size_t(si)];
    const StageInfo& in = info_[size_t(si)];
    int n = int(st.iters.size());
    Expr index = flatIndex(in, in.relValue, true);
    Expr value = lowerValue(si, body_[size_t(si)]);
    auto all = [](int) { return true; };
    if (!st.op.hasReduce())
      return nest(si, 0, n, guarded(in.predicates, makeStore(in.buffer, index, value)), true, all);

    std::vector<std::string> reduceVars;
    int p = n;
    for (int i = 0; i < n; ++i) {
      if (st.iters[size_t(i)].kind != IterKind::Reduce) continue;
      p = std::min(p, i);
      if (!in.loopVars[size_t(i)].empty()) reduceVars.push_back(in.loopVars[size_t(i)]);
    }
    std::vector<Expr> spatialPreds;
    for (const Expr& pr : in.predicates)
      if (!usesAny(pr, reduceVars)) spatialPreds.push_back(pr);
    Stmt init = makeStore(in.buffer, index, te::reduceInit(st.op.reduce));
    Expr acc = te::load(in.buffer, {index});
    Stmt update = makeStore(in.buffer, index, te::reduceCombine(st.op.reduce, acc, value));
    auto spatialOnly = [&](int i) { return st.iters[size_t(i)].kind == IterKind::Spatial; };
    std::vector<Stmt> body = nest(si, p, n, guarded(spatialPreds, init), false, spatialOnly);
    for (Stmt& x : nest(si, p, n, guarded(in.predicates, update), true, all))
      body.push_back(x);
    int64_t updateIterations = 1;
    for (int i = p; i < n; ++i)
      updateIterations *= in.extents[size_t(i)];
    return nest(si, 0, p, std::move(body), true, all, updateIterations);
  }

  const State& s_;
  std::vector<StageInfo> info_;
  std::vector<Expr> body_;
  Ranges ranges_;
  std::vector<std::string> threadVars_;  // loops bound to threadIdx or vthread
};

void print(const Stmt& s, int depth, std::ostream& os) {
  std::string pad(size_t(depth) * 2, ' ');
  switch (s->kind) {
    case StmtNode::For: {
      static const char* kinds[] = {"for", "parallel", "vectorize", "unroll", "vthread", "blockIdx", "threadIdx"};
      os << pad << kinds[int(s->forKind)];
      if (s->forKind == ForKind::BlockIdx || s->forKind == ForKind::ThreadIdx) os << "." << s->axis;
      os << " " << s->loopVar << " in 0.." << s->extent << "\n";
      for (const Stmt& b : s->body)
        print(b, depth + 1, os);
      return;
    }
    case StmtNode::Seq:
      for (const Stmt& b : s->body)
        print(b, depth, os);
      return;
    case StmtNode::Store:
      os << pad << s->buffer << "[" << te::toString(s->index) << "] = " << te::toString(s->value) << "\n";
      return;
    case StmtNode::If:
      os << pad << "if " << te::toString(s->cond) << "\n";
      for (const Stmt& b : s->body)
        print(b, depth + 1, os);
      return;
    case StmtNode::Alloc:
      os << pad << "alloc " << s->buffer << "[" << s->size << "] " << schedule::scopeName(s->scope) << "\n";
      return;
  }
}

}  // namespace

LoweredFunc lowerState(const State& state) {
  return Lowerer(state).run();
}

int64_t sharedMemoryBytes(const LoweredFunc& f) {
  int64_t bytes = 0;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (s->kind == StmtNode::Alloc && s->scope == schedule::Scope::Shared) bytes += s->size * 4;
    for (const Stmt& b : s->body)
      walk(b);
  };
  walk(f.body);
  return bytes;
}

std::string toString(const Stmt& s) {
  std::ostringstream os;
  print(s, 0, os);
  return os.str();
}

}  // namespace tessel::lower
