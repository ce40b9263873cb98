#include "codegen/register_tile.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

namespace tessel::codegen {

using lower::ForKind;
using lower::Stmt;
using lower::StmtNode;
using te::Expr;
using te::ExprKind;

namespace {

// Registers kept free for a broadcast operand and the compiler's temporaries.
constexpr int kSpareRegisters = 2;

// The coefficient of `var` in `e` when `e` is affine in it (other terms may
// be anything that does not use it); nothing otherwise.
std::optional<int64_t> coefficient(const Expr& e, const std::string& var) {
  if (!te::usesVar(e, var)) return 0;
  switch (e->kind) {
    case ExprKind::Var:
      return 1;
    case ExprKind::Add:
    case ExprKind::Sub: {
      const auto a = coefficient(e->args[0], var), b = coefficient(e->args[1], var);
      if (!a || !b) return std::nullopt;
      return e->kind == ExprKind::Add ? *a + *b : *a - *b;
    }
    case ExprKind::Mul: {
      int64_t c = 0;
      if (te::isIntImm(e->args[0], &c)) {
        const auto b = coefficient(e->args[1], var);
        return b ? std::optional<int64_t>(c * *b) : std::nullopt;
      }
      if (te::isIntImm(e->args[1], &c)) {
        const auto a = coefficient(e->args[0], var);
        return a ? std::optional<int64_t>(c * *a) : std::nullopt;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// A load with one (flat) index, stride 1 in `var`.
bool contiguousLoad(const Expr& e, const std::string& var) {
  if (e->kind != ExprKind::Load || e->args.size() != 1) return false;
  const auto c = coefficient(e->args[0], var);
  return c && *c == 1;
}

bool readsBuffer(const Expr& e, const std::string& buffer) {
  std::vector<const te::ExprNode*> loads;
  te::collectLoads(e, &loads);
  for (const te::ExprNode* l : loads)
    if (l->name == buffer) return true;
  return false;
}

// prefix + n, appended: GCC 12 warns falsely (-Wrestrict) on "literal" + std::to_string(n).
std::string named(const char* prefix, int64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

enum class Combine { Fma, Add, Max, Min };

struct Operand {
  Expr expr;
  bool vector = false;  // a contiguous load; otherwise broadcast
};

struct Tile {
  std::vector<const StmtNode*> reduction, tile;  // the loops, outer to inner
  const StmtNode* store = nullptr;
  Combine combine = Combine::Add;
  std::vector<Operand> operands;  // one, or two multiplied
};

// The perfect nest under `loop` and its innermost store, if it is one.
bool perfectNest(const StmtNode* loop, std::vector<const StmtNode*>* chain, const StmtNode** store) {
  const StmtNode* s = loop;
  for (;;) {
    if (s->kind != StmtNode::For) return false;
    chain->push_back(s);
    const StmtNode* inner = s;
    do {
      if (inner->body.size() != 1) return false;
      inner = inner->body[0].get();
    } while (inner->kind == StmtNode::Seq);
    if (inner->kind == StmtNode::Store) {
      *store = inner;
      return true;
    }
    s = inner;
  }
}

std::optional<Tile> recognise(const StmtNode* loop) {
  Tile t;
  std::vector<const StmtNode*> chain;
  if (!perfectNest(loop, &chain, &t.store)) return std::nullopt;
  const Expr& index = t.store->index;
  if (!index || t.store->value->dtype != te::DType::Float32) return std::nullopt;
  size_t firstTile = chain.size();
  while (firstTile > 0 && te::usesVar(index, chain[firstTile - 1]->loopVar))
    --firstTile;
  if (firstTile == 0 || firstTile == chain.size()) return std::nullopt;
  for (size_t i = 0; i < chain.size(); ++i) {
    const ForKind k = chain[i]->forKind;
    if (k != ForKind::Serial && k != ForKind::Unrolled && k != ForKind::Vectorized) return std::nullopt;
    if (i < firstTile && te::usesVar(index, chain[i]->loopVar)) return std::nullopt;
  }
  t.reduction.assign(chain.begin(), chain.begin() + long(firstTile));
  t.tile.assign(chain.begin() + long(firstTile), chain.end());
  const std::string& inner = t.tile.back()->loopVar;
  const auto stride = coefficient(index, inner);
  if (!stride || *stride != 1) return std::nullopt;

  // T = combine(T, term), T read at exactly the stored element.
  const Expr& value = t.store->value;
  const std::string self = te::toString(te::load(t.store->buffer, {index}));
  Expr term;  // all three combinations commute
  if (value->kind == ExprKind::Add || value->kind == ExprKind::Max || value->kind == ExprKind::Min) {
    if (te::toString(value->args[0]) == self)
      term = value->args[1];
    else if (te::toString(value->args[1]) == self)
      term = value->args[0];
  }
  if (!term || readsBuffer(term, t.store->buffer)) return std::nullopt;
  t.combine = value->kind == ExprKind::Max ? Combine::Max : value->kind == ExprKind::Min ? Combine::Min : Combine::Add;
  if (!te::usesVar(term, inner)) {
    t.operands = {{term, false}};
  } else if (t.combine == Combine::Add && term->kind == ExprKind::Mul) {
    t.combine = Combine::Fma;
    for (const Expr& a : term->args) {
      const bool vec = te::usesVar(a, inner);
      if (vec && !contiguousLoad(a, inner)) return std::nullopt;
      t.operands.push_back({a, vec});
    }
  } else if (contiguousLoad(term, inner)) {
    t.operands = {{term, true}};
  } else {
    return std::nullopt;
  }
  return t;
}

// The substitutions of the variables of `loops` (tile loops other than the
// innermost) by each combination of their values, the first loop outermost.
std::vector<std::map<std::string, Expr>> pointsOf(const std::vector<const StmtNode*>& loops) {
  std::vector<std::map<std::string, Expr>> points = {{}};
  for (const StmtNode* loop : loops) {
    std::vector<std::map<std::string, Expr>> next;
    for (const auto& p : points)
      for (int64_t v = 0; v < loop->extent; ++v) {
        auto q = p;
        q[loop->loopVar] = te::intImm(v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

// The tile's points other than the innermost loop.
std::vector<std::map<std::string, Expr>> outerPoints(const Tile& t) {
  return pointsOf({t.tile.begin(), t.tile.end() - 1});
}

}  // namespace

std::string registerTilePrelude() {
  std::ostringstream os;
  os << "// Vectors of the register tiles (GCC vector extensions; unaligned loads and stores).\n";
  for (int w : {4, 8, 16}) {
    const std::string v = named("tessel_v", w), n = std::to_string(w);
    // Every lane named: GCC makes that one broadcast (from memory when x is a
    // load). "{} + x" added 0.0 first (it may not drop that without
    // -fno-signed-zeros) and then broadcast from a register, which on Intel
    // takes port 5, one of the two 512-bit FMA ports.
    std::string splatList = "x";
    for (int i = 1; i < w; ++i)
      splatList += ", x";
    os << "typedef float " << v << " __attribute__((vector_size(" << 4 * w << ")));\n"
       << "static inline " << v << " tessel_load" << n << "(const float* p) { " << v
       << " v; __builtin_memcpy(&v, p, sizeof v); return v; }\n"
       << "static inline void tessel_store" << n << "(float* p, " << v << " v) { __builtin_memcpy(p, &v, sizeof v); }\n"
       << "static inline " << v << " tessel_splat" << n << "(float x) { return " << v << "{" << splatList << "}; }\n"
       << "static inline " << v << " tessel_max" << n << "(" << v << " a, " << v << " b) { return a > b ? a : b; }\n"
       << "static inline " << v << " tessel_min" << n << "(" << v << " a, " << v << " b) { return a < b ? a : b; }\n";
  }
  return os.str();
}

namespace {

// A recognised tile laid out on the machine's vectors: its points, the
// vectors per point, and the vector operands several accumulators share
// (loaded once per reduction step, the others where they are used).
struct Layout {
  Tile t;
  int lanes = 0;
  int64_t perRow = 0;                         // vectors per point
  int64_t pointCount = 0;                     // points of the tile's outer loops (their extents' product)
  std::map<std::string, std::string> shared;  // operand -> its register's name
  int64_t unsharedLoads = 0;                  // vector loads per step of operands used once
  int64_t accumulators() const { return pointCount * perRow; }
  int64_t broadcasts() const {
    return pointCount * std::ranges::count_if(t.operands, [](const Operand& o) { return !o.vector; });
  }
  // The operand `e` at point p, vector j.
  std::string at(const Expr& e, const std::map<std::string, Expr>& p, int64_t j) const {
    auto q = p;
    q[t.tile.back()->loopVar] = te::intImm(j * lanes);
    return te::toString(te::substitute(e, q));
  }
};

// How many of the tile's vector operands are the same vector, by the text of
// each operand at each point and vector. The text depends only on the outer
// tile loops the operand reads, so each combination of theirs is written once
// and counted as many times as the other loops repeat it: the features call
// this for every loop of every sampled program, and a tile that does not fit
// the registers may have thousands of points.
std::map<std::string, int64_t> vectorOperandUses(const Layout& l) {
  std::map<std::string, int64_t> uses;
  const std::vector<const StmtNode*> outer(l.t.tile.begin(), l.t.tile.end() - 1);
  for (const Operand& o : l.t.operands) {
    if (!o.vector) continue;
    std::vector<const StmtNode*> read;
    int64_t repeats = 1;
    for (const StmtNode* loop : outer)
      if (te::usesVar(o.expr, loop->loopVar))
        read.push_back(loop);
      else
        repeats *= loop->extent;
    for (const auto& p : pointsOf(read))
      for (int64_t j = 0; j < l.perRow; ++j)
        uses[l.at(o.expr, p, j)] += repeats;
  }
  return uses;
}

std::optional<Layout> layOut(const StmtNode* loop, const VectorIsa& isa) {
  if (!loop || loop->kind != StmtNode::For) return std::nullopt;
  std::optional<Tile> found = recognise(loop);
  if (!found) return std::nullopt;
  Layout l;
  l.t = std::move(*found);
  const int64_t innerExtent = l.t.tile.back()->extent;
  l.lanes = isa.lanes;
  while (l.lanes > 4 && innerExtent % l.lanes != 0)
    l.lanes /= 2;
  if (innerExtent % l.lanes != 0) return std::nullopt;
  l.perRow = innerExtent / l.lanes;
  l.pointCount = 1;
  for (size_t i = 0; i + 1 < l.t.tile.size(); ++i)
    l.pointCount *= l.t.tile[i]->extent;
  for (const auto& [text, n] : vectorOperandUses(l))
    if (n > 1)
      l.shared.emplace(text, named("w", int64_t(l.shared.size())));
    else
      ++l.unsharedLoads;
  return l;
}

bool fitsRegisters(const Layout& l, const VectorIsa& isa) {
  return l.accumulators() + int64_t(l.shared.size()) + kSpareRegisters <= isa.registers;
}

}  // namespace

std::optional<RegisterTilePlan> planRegisterTile(const lower::StmtNode& loop, const VectorIsa& isa) {
  const std::optional<Layout> l = layOut(&loop, isa);
  if (!l) return std::nullopt;
  int64_t steps = 1;
  for (const StmtNode* r : l->t.reduction)
    steps *= r->extent;
  return RegisterTilePlan{l->t.store,
                          l->accumulators(),
                          l->lanes,
                          fitsRegisters(*l, isa),
                          int64_t(l->shared.size()) + l->unsharedLoads + l->broadcasts(),
                          steps};
}

std::optional<std::string> emitRegisterTile(const Stmt& loop, int depth, const VectorIsa& isa) {
  const std::optional<Layout> layout = layOut(loop.get(), isa);
  if (!layout || !fitsRegisters(*layout, isa)) return std::nullopt;
  const Tile& t = layout->t;
  const int lanes = layout->lanes;
  const int64_t perRow = layout->perRow, accumulators = layout->accumulators();
  const auto points = outerPoints(t);  // few: the tile fits the registers
  const auto& shared = layout->shared;
  const std::string W = std::to_string(lanes);
  auto at = [&](const Expr& e, const std::map<std::string, Expr>& p, int64_t j) { return layout->at(e, p, j); };

  const std::string pad(size_t(depth) * 2, ' ');
  std::ostringstream os;
  std::string tileShape;
  for (const StmtNode* l : t.tile)
    tileShape += (tileShape.empty() ? "" : " x ") + l->loopVar + " " + std::to_string(l->extent);
  os << pad << "{  // register tile of " << t.store->buffer << " (" << tileShape << "): " << accumulators
     << " vectors of " << lanes << " floats held across the reduction\n";
  const std::string in = pad + "  ";
  auto acc = [&](size_t p, int64_t j) { return named("acc", int64_t(p) * perRow + j); };
  auto element = [&](size_t p, int64_t j) { return at(te::load(t.store->buffer, {t.store->index}), points[p], j); };
  for (size_t p = 0; p < points.size(); ++p)
    for (int64_t j = 0; j < perRow; ++j)
      os << in << "tessel_v" << W << " " << acc(p, j) << " = tessel_load" << W << "(&" << element(p, j) << ");\n";
  std::string loopPad = in;
  for (const StmtNode* r : t.reduction) {
    if (r->forKind == ForKind::Unrolled)
      os << loopPad << "#pragma GCC unroll " << std::min<int64_t>(r->extent, 512) << "\n";
    os << loopPad << "for (int " << r->loopVar << " = 0; " << r->loopVar << " < " << r->extent << "; ++" << r->loopVar
       << ") {\n";
    loopPad += "  ";
  }
  for (const auto& [text, name] : shared)
    os << loopPad << "const tessel_v" << W << " " << name << " = tessel_load" << W << "(&" << text << ");\n";
  for (size_t p = 0; p < points.size(); ++p) {
    // Broadcast operands do not depend on the innermost loop: once per row.
    std::vector<std::string> broadcast(t.operands.size());
    for (size_t o = 0; o < t.operands.size(); ++o)
      if (!t.operands[o].vector) {
        broadcast[o] = named("b", int64_t(p));
        broadcast[o] += named("_", int64_t(o));
        os << loopPad << "const tessel_v" << W << " " << broadcast[o] << " = tessel_splat" << W << "("
           << at(t.operands[o].expr, points[p], 0) << ");\n";
      }
    for (int64_t j = 0; j < perRow; ++j) {
      std::vector<std::string> v;
      for (size_t o = 0; o < t.operands.size(); ++o) {
        if (!t.operands[o].vector) {
          v.push_back(broadcast[o]);
          continue;
        }
        const std::string text = at(t.operands[o].expr, points[p], j);
        auto s = shared.find(text);
        if (s != shared.end()) {
          v.push_back(s->second);
        } else {
          std::string load = "tessel_load";
          load += W + "(&" + text + ")";
          v.push_back(load);
        }
      }
      const std::string a = acc(p, j);
      os << loopPad << a << " = ";
      switch (t.combine) {
        case Combine::Fma:
          os << a << " + " << v[0] << " * " << v[1];
          break;
        case Combine::Add:
          os << a << " + " << v[0];
          break;
        case Combine::Max:
          os << "tessel_max" << W << "(" << a << ", " << v[0] << ")";
          break;
        case Combine::Min:
          os << "tessel_min" << W << "(" << a << ", " << v[0] << ")";
          break;
      }
      os << ";\n";
    }
  }
  for (size_t r = t.reduction.size(); r-- > 0;) {
    loopPad.resize(loopPad.size() - 2);
    os << loopPad << "}\n";
  }
  for (size_t p = 0; p < points.size(); ++p)
    for (int64_t j = 0; j < perRow; ++j)
      os << in << "tessel_store" << W << "(&" << element(p, j) << ", " << acc(p, j) << ");\n";
  os << pad << "}\n";
  return os.str();
}

}  // namespace tessel::codegen
