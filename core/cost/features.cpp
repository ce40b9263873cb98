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
// - Four more per row say whether the code generator writes the store as an
//   explicit register tile (codegen/register_tile.h), with how many vectors of
//   how many lanes, or found the tile too large for the registers and wrote
//   it plainly. TVM leaves vector code to LLVM; here that choice is the code
//   generator's, and kernels with and without a tile differ ~10x in the
//   median, which the loop-nest features alone leave the models to guess.
#include "cost/features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string_view>

#include "codegen/register_tile.h"
#include "cost/feature_scale.h"
#include "cost/index_regions.h"
#include "lower/layout_rewrite.h"

namespace tessel::cost {

using lower::ForKind;
using lower::StmtNode;
using te::DType;
using te::ExprKind;
using te::ExprNode;

using detail::depthBit;
using detail::IndexForm;
using detail::IndexRegions;
using detail::levelMask;
using detail::LoopStack;

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
constexpr size_t kOffTile = kOffOther + 3;
static_assert(kOffTile + 6 == kNumFeatures, "feature layout");

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

class Extractor {
 public:
  // `isa`: the vectors the kernel is built with; none: no register tiles.
  explicit Extractor(std::optional<codegen::VectorIsa> isa) : isa_(std::move(isa)) {}

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
        // As the code generator walks: the outermost loop whose nest is a
        // tile that fits is written as one; otherwise it tries inside.
        bool opensTile = false;
        if (isa_ && !inTile_)
          if (const std::optional<codegen::RegisterTilePlan> plan = codegen::planRegisterTile(s, *isa_)) {
            tiles_[plan->store] = *plan;
            opensTile = inTile_ = plan->fits;
          }
        if (size_t(loops_.depth) == stack_.size()) {
          stack_.emplace_back();
          loops_.loops.push_back(nullptr);
        }
        Frame& fr = stack_[size_t(loops_.depth)];
        loops_.loops[size_t(loops_.depth)] = &s;
        fr.id = nextLoopId_++;
        fr.touches.clear();
        ++loops_.depth;
        double extent = double(extentAt(loops_.depth - 1));
        outerProd_ *= extent;
        for (const lower::Stmt& b : s.body)
          visit(*b);
        outerProd_ /= extent;
        --loops_.depth;
        if (opensTile) inTile_ = false;
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

  int64_t extentAt(int d) const { return loops_.extentAt(d); }

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

  // ---- per store -------------------------------------------------------------

  void addAccess(int buf, AccType type, int form) {
    if (size_t(numAccesses_) == accesses_.size()) accesses_.emplace_back();
    Access& a = accesses_[size_t(numAccesses_++)];
    a.buf = buf;
    a.type = type;
    a.forms.assign(1, form);
    a.mask = index_.form(form).mask;
    a.denseRun = 1;
  }

  void collectReads(const ExprNode& e) {
    if (e.kind == ExprKind::Load && !e.args.empty()) {
      int buf = bufferId(e.name);
      Access* found = nullptr;
      for (int i = 0; i < numAccesses_; ++i)
        if (accesses_[size_t(i)].buf == buf) found = &accesses_[size_t(i)];
      if (!found) {
        addAccess(buf, kRead, index_.addForm(*e.args[0]));
      } else if (found->type == kWrite) {
        found->type = kReadWrite;  // an update: it reads where it writes
      } else if (found->type == kRead) {
        int form = index_.addForm(*e.args[0]);  // touches the index forms only: `found` stays valid
        found->forms.push_back(form);
        found->mask |= index_.form(form).mask;
      }
    }
    for (const te::Expr& a : e.args)
      collectReads(*a);
  }

  // Position of the annotated loop at `depth` among the store's loops.
  Pos position(int depth, int storeForm, bool update, int reduceFrom) const {
    const int n = loops_.depth;
    const IndexForm& store = index_.form(storeForm);
    const int occurrences = index_.uses(storeForm, depth);
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
    index_.clear();
    numAccesses_ = 0;
    const int n = loops_.depth;
    std::vector<float> row(kNumFeatures, 0.0f);

    // Group 1: computation.
    std::array<double, kNumOpCounts> ops{};
    countOps(*s.value, ops);
    for (int k = 0; k < kNumOpCounts; ++k)
      row[size_t(k)] = slog(ops[size_t(k)] * outerProd_);

    int sbuf = bufferId(s.buffer);
    int wform = index_.addForm(*s.index);
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
      const StmtNode& l = *loops_.loops[size_t(d)];
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
        pos = position(ann->inner, wform, update, reduceFrom);
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
        int64_t elems = index_.accessRegion(a.forms, i, &a.denseRun);
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

    // Group 6: the register tile of the store (Tessel's).
    if (const auto t = tiles_.find(&s); t != tiles_.end()) {
      const codegen::RegisterTilePlan& plan = t->second;
      row[kOffTile] = plan.fits ? 1.0f : 0.0f;
      row[kOffTile + 1] = slog(double(plan.accumulators));
      row[kOffTile + 2] = slog(plan.lanes);
      row[kOffTile + 3] = plan.fits ? 0.0f : 1.0f;
      row[kOffTile + 4] = float(double(plan.loadsPerStep) / double(std::max<int64_t>(plan.accumulators, 1)));
      row[kOffTile + 5] = slog(double(plan.reductionSteps));
    }

    binfo.stored = true;
    binfo.lastStoreLoops.resize(size_t(n));
    for (int d = 0; d < n; ++d)
      binfo.lastStoreLoops[size_t(d)] = stack_[size_t(d)].id;
    rows_.push_back(std::move(row));
  }

  void accessFeatures(Access& a) {
    const int n = loops_.depth;
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
        stride = index_.accessStride(a.forms, i);
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
    for (int i = loops_.depth - 1; i >= 0; --i) {
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
  std::optional<codegen::VectorIsa> isa_;
  bool inTile_ = false;  // under a loop the code generator writes as a register tile
  std::map<const StmtNode*, codegen::RegisterTilePlan> tiles_;  // by store
  LoopStack loops_;
  IndexRegions index_{loops_};
  std::vector<Frame> stack_;  // per loop of loops_
  uint32_t nextLoopId_ = 1;
  double outerProd_ = 1;
  std::vector<BufferInfo> buffers_;
  ProgramFeatures rows_;
  // Per-store scratch.
  std::vector<Access> accesses_;
  int numAccesses_ = 0;
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
                        "auto_unroll_max_step", "reg_tile", "reg_tile_vectors", "reg_tile_lanes", "reg_tile_spilled",
                        "reg_tile_loads_per_fma", "reg_tile_steps"})
    names.push_back(n);
  return names;
}

}  // namespace

ProgramFeatures extractFeatures(const lower::LoweredFunc& f, const target::Target& target) {
  std::optional<codegen::VectorIsa> isa;
  if (target.isCpu()) isa = codegen::vectorIsa(target);
  return Extractor(std::move(isa)).run(f);
}

ProgramFeatures extractProgramFeatures(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps,
                                       const target::Target& target) {
  try {
    schedule::State state = schedule::replay(dag, steps);
    lower::LoweredFunc f = lower::lowerState(state);
    lower::rewriteLayouts(&f);  // as measured and run: constants in the layout the loops walk
    return extractFeatures(f, target);
  } catch (const std::exception&) {
    return {};
  }
}

const std::vector<std::string>& featureNames() {
  static const std::vector<std::string> names = makeNames();
  return names;
}

}  // namespace tessel::cost
