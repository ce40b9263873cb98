#include "codegen/cuda_codegen.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "codegen/cuda_vectorize.h"

namespace tessel::codegen {

using lower::ForKind;
using lower::Stmt;
using lower::StmtNode;
using te::Expr;
using te::ExprKind;

namespace {

constexpr int64_t kWarp = 32;  // threads
constexpr int64_t kMaxBlockThreads = 1024;

// ---- expressions ----------------------------------------------------------

bool hasIntMinMax(const Expr& e) {
  if ((e->kind == ExprKind::Min || e->kind == ExprKind::Max) && !te::isFloat(e)) return true;
  return std::any_of(e->args.begin(), e->args.end(), hasIntMinMax);
}

// Integer min/max print as std::min/std::max, which device code cannot call
// (without --expt-relaxed-constexpr): they become selects.
Expr withoutIntMinMax(const Expr& e) {
  if (e->args.empty()) return e;
  std::vector<Expr> a;
  for (const Expr& x : e->args)
    a.push_back(withoutIntMinMax(x));
  if ((e->kind == ExprKind::Min || e->kind == ExprKind::Max) && !te::isFloat(e))
    return te::select(e->kind == ExprKind::Min ? a[0] < a[1] : a[0] > a[1], a[0], a[1]);
  return te::withOperands(e, std::move(a));
}

std::string cuda(const Expr& e) {
  return te::toString(hasIntMinMax(e) ? withoutIntMinMax(e) : e);
}

// ---- cross-thread reductions ----------------------------------------------

// A reduction update `b[i] = combine(b[i], v)` whose reduce loops include one
// bound to threadIdx.x (sketch.cpp's cross_thread_reduction): each thread
// accumulates its part in a register, the block combines the parts with warp
// shuffles, and one thread updates b[i].
struct Reduction {
  const StmtNode* update = nullptr;
  ExprKind combine = ExprKind::Add;
  std::vector<Expr> outerConds;  // conditions inside the reduction that use none of its loops
  int id = 0;
};

bool isCombine(const StmtNode& s) {
  const Expr& v = s.value;
  if (v->kind != ExprKind::Add && v->kind != ExprKind::Mul && v->kind != ExprKind::Max && v->kind != ExprKind::Min)
    return false;
  const Expr& acc = v->args[0];
  return te::isFloat(v) && acc->kind == ExprKind::Load && acc->name == s.buffer && acc->args.size() == 1 &&
         te::toString(acc->args[0]) == te::toString(s.index);
}

// The prelude's name of a reduction's combiner (tessel_combine) and its identity.
struct Combiner {
  const char* name;
  const char* identity;
};

Combiner combiner(ExprKind k) {
  if (k == ExprKind::Mul) return {"TESSEL_MUL", "1.0f"};
  if (k == ExprKind::Max) return {"TESSEL_MAX", "-INFINITY"};
  if (k == ExprKind::Min) return {"TESSEL_MIN", "INFINITY"};
  return {"TESSEL_ADD", "0.0f"};
}

bool allocatesDirectly(const StmtNode& s, const std::string& buffer) {
  return std::any_of(s.body.begin(), s.body.end(),
                     [&](const Stmt& b) { return b->kind == StmtNode::Alloc && b->buffer == buffer; });
}

int countKind(const Stmt& s, StmtNode::Kind k) {
  int n = s->kind == k;
  for (const Stmt& b : s->body)
    n += countKind(b, k);
  return n;
}

template <class F>
void forEach(const Stmt& s, const F& f) {
  f(*s);
  for (const Stmt& b : s->body)
    forEach(b, f);
}

// The buffers a statement's own expressions read (not its body's).
void collectReads(const StmtNode& s, std::set<std::string>* reads) {
  for (const Expr& e : {s.index, s.value, s.cond}) {
    if (!e) continue;
    std::vector<const te::ExprNode*> loads;
    te::collectLoads(e, &loads);
    for (const te::ExprNode* l : loads)
      reads->insert(l->name);
  }
}

// The buffers a subtree stores to and reads.
void collectBuffers(const Stmt& s, std::set<std::string>* writes, std::set<std::string>* reads) {
  forEach(s, [&](const StmtNode& n) {
    if (n.kind == StmtNode::Store) writes->insert(n.buffer);
    collectReads(n, reads);
  });
}

// ---- one kernel -----------------------------------------------------------

// Where the emitter is: conditions not yet written (they are pushed down to
// the statements that contain no barrier, so every __syncthreads() is
// reached by all threads of the block) and the thread axes bound above.
struct Ctx {
  int depth = 1;
  std::vector<std::string> guards;
  bool bound[3] = {false, false, false};  // threadIdx.x/y/z bound by an enclosing loop
  std::vector<std::string> threadVars;    // enclosing threadIdx loop variables, outermost first
  bool plain = false;                     // inside a statement that needs no barrier: written as it is
};

std::string joinGuards(const std::vector<std::string>& g) {
  std::string s;
  for (const std::string& c : g)
    s += (s.empty() ? "" : " && ") + c;
  return s;
}

class KernelEmitter {
 public:
  // `group`: root-level statements of the program, run in order by one block.
  KernelEmitter(const std::vector<Stmt>& group, const std::map<std::string, size_t>& buffers)
      : root_(group.size() == 1 ? group[0] : lower::makeSeq(group)) {
    const Stmt& root = root_;
    forEach(root, [&](const StmtNode& s) {
      if (s.kind == StmtNode::Alloc) (s.scope == schedule::Scope::Shared ? shared_ : perThread_).insert(s.buffer);
      if (s.kind == StmtNode::Alloc && s.scope == schedule::Scope::Shared) sharedBytes_ += s.size * 4;
      if (s.kind == StmtNode::For && (s.forKind == ForKind::BlockIdx || s.forKind == ForKind::ThreadIdx)) {
        CudaDim& d = s.forKind == ForKind::BlockIdx ? grid_ : block_;
        int64_t& v = s.axis == 'y' ? d.y : s.axis == 'z' ? d.z : d.x;
        v = std::max(v, s.extent);
      }
    });
    std::set<std::string> used;
    collectBuffers(root, &used, &used);
    // A statement of the group that touches global memory an earlier one
    // wrote waits for the block; other blocks cannot be waited for.
    std::set<std::string> written;
    for (const Stmt& g : group) {
      std::set<std::string> w, r;
      collectBuffers(g, &w, &r);
      r.insert(w.begin(), w.end());
      bool depends = std::any_of(r.begin(), r.end(), [&](const std::string& b) { return written.count(b) > 0; });
      if (depends && grid_.count() > 1)
        throw CudaCodegenError("statements sharing an allocation depend through global memory across blocks");
      if (depends) barrierBefore_.insert(g.get());
      for (const std::string& b : w)
        if (buffers.count(b)) written.insert(b);
    }
    std::vector<const StmtNode*> path;
    findReductions(root, &path);
    if (!reductions_.empty()) {
      // Full warps: every lane of a shuffle exists.
      if (block_.y > 1 || block_.z > 1)
        throw CudaCodegenError("cross-thread reduction in a block with threadIdx.y or threadIdx.z");
      block_.x = (block_.x + kWarp - 1) / kWarp * kWarp;
      sharedBytes_ += kWarp * 4;
    }
    if (block_.count() > kMaxBlockThreads)
      throw CudaCodegenError("a block of " + std::to_string(block_.count()) + " threads, over the " +
                             std::to_string(kMaxBlockThreads) + " a CUDA block may have");
    facts(root);
    for (const auto& [name, index] : buffers)
      if (used.count(name) && !perThread_.count(name) && !shared_.count(name)) params_.push_back(index);
    std::sort(params_.begin(), params_.end());
  }

  CudaKernel emit(const std::string& name, const std::vector<lower::Buffer>& buffers) {
    CudaKernel k;
    k.name = name;
    k.grid = grid_;
    k.block = block_;
    k.sharedBytes = sharedBytes_;
    k.params = params_;
    k.crossThreadReduction = !reductions_.empty();
    os_ << "// grid (" << grid_.x << ", " << grid_.y << ", " << grid_.z << "), block (" << block_.x << ", " << block_.y
        << ", " << block_.z << ")\n";
    os_ << "extern \"C\" __global__ void __launch_bounds__(" << block_.count() << ") " << name << "(";
    for (size_t i = 0; i < params_.size(); ++i)
      os_ << (i ? ", " : "") << "float* __restrict__ " << buffers[params_[i]].name;
    os_ << ") {\n";
    if (!reductions_.empty()) os_ << "  __shared__ float tessel_red_buf[" << kWarp << "];\n";
    stmt(root_, Ctx());
    os_ << "}\n";
    k.source = os_.str();
    return k;
  }

 private:
  struct Facts {
    bool writesShared = false;
    bool readsOwnShared = false;  // reads a shared buffer it writes
    bool reduction = false;       // contains a cross-thread reduction
  };

  // The shared buffers a subtree writes and the buffers it reads; records its Facts.
  std::pair<std::set<std::string>, std::set<std::string>> facts(const Stmt& s) {
    std::set<std::string> writes, reads;
    Facts f;
    if (s->kind == StmtNode::Store && shared_.count(s->buffer)) writes.insert(s->buffer);
    collectReads(*s, &reads);
    f.reduction = reductions_.count(s.get()) > 0;
    for (const Stmt& b : s->body) {
      auto [w, r] = facts(b);
      writes.insert(w.begin(), w.end());
      reads.insert(r.begin(), r.end());
      f.reduction |= facts_[b.get()].reduction;
    }
    f.writesShared = !writes.empty();
    f.readsOwnShared = std::any_of(writes.begin(), writes.end(), [&](const std::string& b) { return reads.count(b); });
    facts_[s.get()] = f;
    return {writes, reads};
  }

  void findReductions(const Stmt& s, std::vector<const StmtNode*>* path) {
    path->push_back(s.get());
    if (s->kind == StmtNode::Store && isCombine(*s)) findReduction(*path);
    for (const Stmt& b : s->body)
      findReductions(b, path);
    path->pop_back();
  }

  // The outermost loop of the update's reduction: the enclosing loops (and
  // conditions) up to the first loop the index uses, a blockIdx loop, or the
  // scope that allocates the buffer.
  void findReduction(const std::vector<const StmtNode*>& path) {
    const StmtNode& update = *path.back();
    size_t top = path.size();
    int threadLoops = 0;
    char axis = 'x';
    for (size_t i = path.size() - 1; i-- > 0;) {
      const StmtNode& a = *path[i];
      if (allocatesDirectly(a, update.buffer)) break;
      if (a.kind == StmtNode::If) continue;
      if (a.kind != StmtNode::For || a.forKind == ForKind::BlockIdx || te::usesVar(update.index, a.loopVar)) break;
      top = i;
      if (a.forKind == ForKind::ThreadIdx) ++threadLoops, axis = a.axis;
    }
    if (threadLoops == 0) return;
    if (threadLoops > 1 || axis != 'x')
      throw CudaCodegenError("cross-thread reduction over several or non-x thread axes (" + update.buffer + ")");
    std::vector<std::string> loops;
    for (size_t i = top; i < path.size(); ++i)
      if (path[i]->kind == StmtNode::For) loops.push_back(path[i]->loopVar);
    Reduction r;
    r.update = &update;
    r.combine = update.value->kind;
    r.id = int(reductions_.size());
    for (size_t i = top; i + 1 < path.size(); ++i)
      if (path[i]->kind == StmtNode::If &&
          std::none_of(loops.begin(), loops.end(), [&](const std::string& v) { return te::usesVar(path[i]->cond, v); }))
        r.outerConds.push_back(path[i]->cond);
    const StmtNode* root = path[top];
    // Only the update inside: the loops are replaced by one register's accumulation.
    int stores = 0, allocs = 0;
    for (const Stmt& b : root->body)
      stores += countKind(b, StmtNode::Store), allocs += countKind(b, StmtNode::Alloc);
    if (stores != 1 || allocs != 0)
      throw CudaCodegenError("cross-thread reduction with other statements in its loops (" + update.buffer + ")");
    reductions_[root] = r;
  }

  // ---- emission ----

  void line(const Ctx& c, const std::string& text) {
    os_ << std::string(size_t(c.depth) * 2, ' ') << text << "\n";
    lastBarrier_ = false;
  }

  void barrier(const Ctx& c) {
    if (lastBarrier_) return;
    line(c, "__syncthreads();");
    lastBarrier_ = true;
  }

  bool needsUniform(const Stmt& s) const {
    const Facts& f = facts_.at(s.get());
    return f.writesShared || f.reduction;
  }

  // A statement that writes shared memory and reads none it writes (the
  // cooperative fetch of a cache): synchronised before (the previous
  // readers are done) and after (its writes are visible).
  bool isProducer(const Stmt& s) const {
    const Facts& f = facts_.at(s.get());
    return f.writesShared && !f.reduction && (s->kind == StmtNode::Store || !f.readsOwnShared);
  }

  void stmt(const Stmt& s, Ctx c) {
    if (s->kind == StmtNode::Alloc) return alloc(*s, c);  // never under a condition: its users follow it
    if (c.plain) return node(s, c);
    if (barrierBefore_.count(s.get())) barrier(c);
    if (auto r = reductions_.find(s.get()); r != reductions_.end()) return reduction(s, r->second, c);
    if (!needsUniform(s) || isProducer(s)) {
      bool sync = needsUniform(s);
      if (sync) barrier(c);
      guarded(s, c);
      if (sync) barrier(c);
      return;
    }
    node(s, c);  // contains barriers: the pending conditions go further down
  }

  // `s` under the pending conditions, written here.
  void guarded(const Stmt& s, Ctx c) {
    c.plain = true;
    if (c.guards.empty()) return node(s, c);
    line(c, "if (" + joinGuards(c.guards) + ") {");
    c.guards.clear();
    ++c.depth;
    node(s, c);
    --c.depth;
    line(c, "}");
  }

  void body(const Stmt& s, Ctx c) {
    for (const Stmt& b : s->body)
      stmt(b, c);
  }

  void node(const Stmt& s, Ctx c) {
    switch (s->kind) {
      case StmtNode::Seq:
        return body(s, c);
      case StmtNode::Store:
        return store(*s, c);
      case StmtNode::Alloc:
        return alloc(*s, c);
      case StmtNode::If:
        if (needsUniform(s)) {
          c.guards.push_back(cuda(s->cond));
          return body(s, c);
        }
        line(c, "if (" + cuda(s->cond) + ") {");
        ++c.depth;
        body(s, c);
        --c.depth;
        line(c, "}");
        return;
      case StmtNode::For:
        return loop(s, c);
    }
  }

  void loop(const Stmt& s, Ctx c) {
    const std::string& v = s->loopVar;
    if (s->forKind == ForKind::BlockIdx || s->forKind == ForKind::ThreadIdx) {
      bool thread = s->forKind == ForKind::ThreadIdx;
      int a = s->axis - 'x';
      const CudaDim& d = thread ? block_ : grid_;
      int64_t launched = a == 0 ? d.x : a == 1 ? d.y : d.z;
      line(c, "{");
      ++c.depth;
      line(c, "int " + v + " = " + (thread ? "threadIdx." : "blockIdx.") + s->axis + ";");
      if (thread) c.bound[a] = true, c.threadVars.push_back(v);
      if (launched > s->extent) {
        std::string g = v + " < " + std::to_string(s->extent);
        if (needsUniform(s)) {
          c.guards.push_back(g);
        } else {
          line(c, "if (" + g + ") {");
          ++c.depth;
        }
      }
      body(s, c);
      if (launched > s->extent && !needsUniform(s)) {
        --c.depth;
        line(c, "}");
      }
      --c.depth;
      line(c, "}");
      return;
    }
    switch (s->forKind) {
      case ForKind::Unrolled:
      case ForKind::VThread:  // a virtual thread: the thread runs each in turn
        line(c, "#pragma unroll");
        break;
      case ForKind::Parallel:
        line(c, "// parallel (serial in a GPU thread)");
        break;
      case ForKind::Vectorized:
        if (vectorized(*s, c)) return;
        line(c, "// vectorize (serial in a GPU thread)");
        break;
      default:
        break;
    }
    line(c, "for (int " + v + " = 0; " + v + " < " + std::to_string(s->extent) + "; ++" + v + ") {");
    ++c.depth;
    body(s, c);
    --c.depth;
    line(c, "}");
  }

  void alloc(const StmtNode& s, const Ctx& c) {
    bool wasBarrier = lastBarrier_;  // a declaration is no statement between barriers
    // Aligned for float4 access (cuda_vectorize.h).
    line(c, std::string(s.scope == schedule::Scope::Shared ? "__shared__ " : "") + "__align__(16) float " + s.buffer +
                "[" + std::to_string(s.size) + "];");
    lastBarrier_ = wasBarrier;
    allocThreadVars_[s.buffer] = c.threadVars.size();
  }

  // The conditions under which this thread performs a store.
  std::vector<std::string> storeGuards(const StmtNode& s, const Ctx& c) {
    std::vector<std::string> g = c.guards;
    if (perThread_.count(s.buffer)) {
      // Each thread has its own copy: one written through another thread's
      // index (a loop bound to threadIdx inside its scope) is not expressible.
      auto first = c.threadVars.begin() + long(allocThreadVars_[s.buffer]);
      if (std::any_of(first, c.threadVars.end(), [&](const std::string& v) { return te::usesVar(s.index, v); }))
        throw CudaCodegenError("per-thread buffer '" + s.buffer + "' indexed by a thread index bound inside it");
    } else {
      // A store to memory the block shares, outside the loops bound to some
      // thread axis, is one store of the sequential program: one thread does it.
      const int64_t dims[3] = {block_.x, block_.y, block_.z};
      for (int a = 0; a < 3; ++a)
        if (dims[a] > 1 && !c.bound[a]) g.push_back(std::string("threadIdx.") + char('x' + a) + " == 0");
    }
    return g;
  }

  void store(const StmtNode& s, Ctx c) {
    if (auto r = replaced_.find(&s); r != replaced_.end()) return line(c, r->second);
    const std::vector<std::string> g = storeGuards(s, c);
    std::string text = s.buffer + "[" + cuda(s.index) + "] = " + cuda(s.value) + ";";
    line(c, g.empty() ? text : "if (" + joinGuards(g) + ") " + text);
  }

  // A vectorize loop over one store, as float2/float4 accesses where they
  // are aligned; false (nothing written) when none is.
  bool vectorized(const StmtNode& loop, Ctx c) {
    if (loop.body.size() != 1 || loop.body[0]->kind != StmtNode::Store || replaced_.count(loop.body[0].get()))
      return false;
    const StmtNode& s = *loop.body[0];
    const auto lines = vectorizeStore(s, loop.loopVar, loop.extent, cuda);
    if (!lines) return false;
    const std::vector<std::string> g = storeGuards(s, c);
    line(c, g.empty() ? "{  // vectorized" : "if (" + joinGuards(g) + ") {  // vectorized");
    ++c.depth;
    for (const std::string& l : *lines)
      line(c, l);
    --c.depth;
    line(c, "}");
    return true;
  }

  void reduction(const Stmt& s, const Reduction& r, Ctx c) {
    const StmtNode& u = *r.update;
    const std::string acc = "tessel_red" + std::to_string(r.id);
    const bool sync = facts_.at(s.get()).writesShared;
    if (sync) barrier(c);
    const Combiner op = combiner(r.combine);
    line(c, "float " + acc + " = " + op.identity + ";");
    replaced_[&u] = acc + " = " + cuda(te::binary(r.combine, te::var(acc), u.value->args[1])) + ";";
    guarded(s, c);  // each thread's part
    line(c, acc + " = tessel_block_allreduce<" + op.name + ">(" + acc + ", " + op.identity + ", tessel_red_buf);");
    for (const Expr& cond : r.outerConds)
      c.guards.push_back(cuda(cond));
    store(*lower::makeStore(u.buffer, u.index, te::binary(r.combine, u.value->args[0], te::var(acc))), c);
    if (sync) barrier(c);
  }

  Stmt root_;
  std::set<std::string> shared_, perThread_;
  std::set<const StmtNode*> barrierBefore_;  // statements of the group after a global-memory dependence
  std::vector<size_t> params_;
  CudaDim grid_, block_;
  int64_t sharedBytes_ = 0;
  std::map<const StmtNode*, Reduction> reductions_;  // by the reduction's outermost loop
  std::unordered_map<const StmtNode*, Facts> facts_;
  std::unordered_map<const StmtNode*, std::string> replaced_;  // update -> register accumulation
  std::map<std::string, size_t> allocThreadVars_;              // per-thread buffer -> thread loops around its alloc
  std::ostringstream os_;
  bool lastBarrier_ = false;
};

// Root-level statements, one group per kernel: each statement on its own,
// except that an allocation at the root (where the loops around it had
// extent 1) keeps every statement up to its last user with it.
std::vector<std::vector<Stmt>> kernelGroups(const std::vector<Stmt>& roots) {
  std::vector<std::vector<Stmt>> groups;
  for (size_t i = 0; i < roots.size();) {
    size_t end = i;
    for (size_t j = i; j <= end; ++j) {
      if (roots[j]->kind != StmtNode::Alloc) continue;
      for (size_t k = j + 1; k < roots.size(); ++k) {
        std::set<std::string> touched;
        collectBuffers(roots[k], &touched, &touched);
        if (touched.count(roots[j]->buffer)) end = std::max(end, k);
      }
    }
    groups.emplace_back(roots.begin() + long(i), roots.begin() + long(end) + 1);
    i = end + 1;
  }
  return groups;
}

std::string dim3(const CudaDim& d) {
  return "dim3(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ", " + std::to_string(d.z) + ")";
}

}  // namespace

std::string cudaPrelude() {
  return R"(#ifndef TESSEL_CUDA_PRELUDE
#define TESSEL_CUDA_PRELUDE
// NVRTC has the math functions built in and no system headers.
#ifndef __CUDACC_RTC__
#include <math.h>
#else
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#endif

// How the host function launches a kernel; the host emulation
// (cuda_emulation.h) defines its own.
#ifndef TESSEL_LAUNCH
#define TESSEL_LAUNCH(kernel, grid, block, ...) kernel<<<grid, block>>>(__VA_ARGS__)
#define TESSEL_LAUNCH_STATUS() int(cudaGetLastError())
#endif

// Vector loads and stores at a multiple of the vector's size
// (cuda_vectorize.h); the host emulation defines checked ones.
#ifndef TESSEL_VECTOR_ACCESS
#define TESSEL_VECTOR_ACCESS
template <class V>
static __device__ __forceinline__ V tessel_load(const float* p) { return *reinterpret_cast<const V*>(p); }
template <class V>
static __device__ __forceinline__ void tessel_store(float* p, V v) { *reinterpret_cast<V*>(p) = v; }
#endif

// Float min and max with NaN propagating, as the C++ kernels compute them.
static __device__ __forceinline__ float tessel_maxf(float a, float b) { return (a > b || a != a) ? a : b; }
static __device__ __forceinline__ float tessel_minf(float a, float b) { return (a < b || a != a) ? a : b; }

enum { TESSEL_ADD, TESSEL_MUL, TESSEL_MAX, TESSEL_MIN };

template <int kOp>
static __device__ __forceinline__ float tessel_combine(float a, float b) {
  return kOp == TESSEL_ADD ? a + b : kOp == TESSEL_MUL ? a * b : kOp == TESSEL_MAX ? tessel_maxf(a, b) : tessel_minf(a, b);
}

// Combines v over the block's threads; every thread gets the result. Needs
// blockDim.x a multiple of 32 (full warps), blockDim.y = blockDim.z = 1, all
// threads calling, and `scratch`: 32 floats of shared memory.
template <int kOp>
static __device__ __forceinline__ float tessel_block_allreduce(float v, float identity, float* scratch) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int d = 16; d > 0; d /= 2) v = tessel_combine<kOp>(v, __shfl_down_sync(0xffffffffu, v, d));
  if (warps > 1) {
    __syncthreads();  // the previous reduction's reads of scratch are done
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    v = lane < warps ? scratch[lane] : identity;  // every warp combines the warps' parts
    for (int d = 16; d > 0; d /= 2) v = tessel_combine<kOp>(v, __shfl_down_sync(0xffffffffu, v, d));
  }
  return __shfl_sync(0xffffffffu, v, 0);
}
#endif
)";
}

CudaProgram emitCudaProgram(const lower::LoweredFunc& f, const std::string& name) {
  CudaProgram p;
  p.name = name;
  p.buffers = f.args;
  p.buffers.insert(p.buffers.end(), f.temps.begin(), f.temps.end());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    index[p.buffers[i].name] = i;
  std::vector<Stmt> roots = f.body->kind == StmtNode::Seq ? f.body->body : std::vector<Stmt>{f.body};
  for (const std::vector<Stmt>& group : kernelGroups(roots)) {
    KernelEmitter e(group, index);
    p.kernels.push_back(e.emit(name + "_k" + std::to_string(p.kernels.size()), p.buffers));
  }
  std::ostringstream device;
  device << cudaPrelude() << "\n";
  for (const CudaKernel& k : p.kernels)
    device << k.source << "\n";
  p.deviceSource = device.str();
  std::ostringstream os;
  os << p.deviceSource;
  os << "// Launches the kernels in order; buffers: the arguments, then the temps (cuda_codegen.h).\n";
  os << "extern \"C\" int " << name << "(float* const* buffers) {\n";
  for (const CudaKernel& k : p.kernels) {
    os << "  TESSEL_LAUNCH(" << k.name << ", " << dim3(k.grid) << ", " << dim3(k.block);
    for (size_t b : k.params)
      os << ", buffers[" << b << "]";
    os << ");\n";
  }
  os << "  return TESSEL_LAUNCH_STATUS();\n}\n";
  p.source = os.str();
  return p;
}

}  // namespace tessel::codegen
