// The program graph of the graph cost models, built in one walk of the
// lowered loop nest. Attributes are on Ansor's shifted-log scale so that
// extents of 1 and 10^6 sit in one range a network can learn from.
#include "cost/program_graph.h"

#include <cmath>
#include <map>

#include "cost/feature_scale.h"

namespace tessel::cost {

namespace {

// Attribute columns.
enum Column : size_t {
  kIsLoop,
  kIsStore,
  kIsLoad,
  kIsBuffer,
  kForKind,  // 7 columns, one per lower::ForKind
  kSize = kForKind + 7,
  kDepth,
  kWork,
  kStride,
  kIndexVars,
  kScope,  // 3 columns: global, local, shared
  kIsInput = kScope + 3,
  kIsOutput,
};
static_assert(kIsOutput + 1 == kGraphNodeFeatures, "graph attribute layout");

// The value of an integer index with the named variables set (others 0):
// enough to read a loop's stride off a flat index, divisions included.
int64_t evalIndex(const te::Expr& e, const std::map<std::string, int64_t>& vars) {
  using te::ExprKind;
  auto arg = [&](size_t i) { return evalIndex(e->args[i], vars); };
  switch (e->kind) {
    case ExprKind::IntImm:
      return e->ival;
    case ExprKind::Var: {
      auto it = vars.find(e->name);
      return it == vars.end() ? 0 : it->second;
    }
    case ExprKind::Add:
      return arg(0) + arg(1);
    case ExprKind::Sub:
      return arg(0) - arg(1);
    case ExprKind::Mul:
      return arg(0) * arg(1);
    case ExprKind::Div: {
      const int64_t d = arg(1);
      return d == 0 ? 0 : arg(0) / d;
    }
    case ExprKind::Mod: {
      const int64_t d = arg(1);
      return d == 0 ? 0 : arg(0) % d;
    }
    case ExprKind::Min:
      return std::min(arg(0), arg(1));
    case ExprKind::Max:
      return std::max(arg(0), arg(1));
    case ExprKind::Select:
      return arg(0) ? arg(1) : arg(2);
    case ExprKind::LT:
      return arg(0) < arg(1);
    case ExprKind::LE:
      return arg(0) <= arg(1);
    case ExprKind::GT:
      return arg(0) > arg(1);
    case ExprKind::GE:
      return arg(0) >= arg(1);
    case ExprKind::EQ:
      return arg(0) == arg(1);
    case ExprKind::NE:
      return arg(0) != arg(1);
    case ExprKind::Cast:
      return arg(0);
    default:
      return 0;
  }
}

class GraphBuilder {
 public:
  explicit GraphBuilder(const lower::LoweredFunc& f) {
    for (size_t i = 0; i < f.args.size(); ++i) {
      const int32_t n = addNode(GraphNodeKind::Buffer);
      set(n, kSize, slog(double(f.args[i].size)));
      set(n, kScope + 0, 1);
      set(n, i < f.numInputs ? kIsInput : kIsOutput, 1);
      buffers_[f.args[i].name] = n;
    }
    for (const lower::Buffer& t : f.temps)
      tempSizes_[t.name] = t.size;
    if (f.body) walk(*f.body, -1);
  }

  ProgramGraph take() { return std::move(g_); }

 private:
  struct Loop {
    std::string var;
    int64_t extent;
  };

  int32_t addNode(GraphNodeKind kind) {
    const int32_t n = int32_t(g_.kinds.size());
    g_.kinds.push_back(kind);
    g_.attributes.resize(g_.attributes.size() + kGraphNodeFeatures, 0.0f);
    set(n, size_t(kind), 1);
    return n;
  }
  void set(int32_t node, size_t column, float v) { g_.attributes[size_t(node) * kGraphNodeFeatures + column] = v; }
  void edge(int32_t from, int32_t to, GraphEdgeKind kind) {
    if (from >= 0 && to >= 0) g_.edges.push_back({from, to, kind});
  }

  int32_t bufferNode(const std::string& name, int64_t size, schedule::Scope scope) {
    auto it = buffers_.find(name);
    if (it != buffers_.end()) return it->second;
    const int32_t n = addNode(GraphNodeKind::Buffer);
    auto temp = tempSizes_.find(name);
    set(n, kSize, slog(double(temp == tempSizes_.end() ? size : temp->second)));
    set(n, kScope + size_t(scope), 1);
    buffers_[name] = n;
    return n;
  }

  double executions() const {
    double n = 1;
    for (const Loop& l : loops_)
      n *= double(l.extent);
    return n;
  }

  // Stride of the innermost loop in a flat index, how many loop variables it
  // uses; both 0 outside loops.
  void accessColumns(int32_t node, const te::Expr& index) {
    set(node, kSize, slog(executions()));
    set(node, kDepth, float(loops_.size()));
    if (!index || loops_.empty()) return;
    const std::string& inner = loops_.back().var;
    const int64_t stride = evalIndex(index, {{inner, 1}}) - evalIndex(index, {});
    set(node, kStride, slog(double(stride)));
    int vars = 0;
    for (const Loop& l : loops_)
      vars += te::usesVar(index, l.var);
    set(node, kIndexVars, float(vars));
  }

  void walk(const lower::StmtNode& s, int32_t parent) {
    switch (s.kind) {
      case lower::StmtNode::For: {
        const int32_t n = addNode(GraphNodeKind::Loop);
        set(n, kForKind + size_t(s.forKind), 1);
        set(n, kSize, slog(double(s.extent)));
        set(n, kDepth, float(loops_.size()));
        edge(parent, n, GraphEdgeKind::Nesting);
        loops_.push_back({s.loopVar, s.extent});
        for (const lower::Stmt& c : s.body)
          walk(*c, n);
        loops_.pop_back();
        break;
      }
      case lower::StmtNode::Store: {
        const int32_t n = addNode(GraphNodeKind::Store);
        accessColumns(n, s.index);
        set(n, kWork, slog(double(te::countFlops(s.value))));
        edge(parent, n, GraphEdgeKind::Nesting);
        std::vector<const te::ExprNode*> loads;
        te::collectLoads(s.value, &loads);
        for (const te::ExprNode* l : loads) {
          const int32_t ln = addNode(GraphNodeKind::Load);
          accessColumns(ln, l->args.empty() ? te::Expr() : l->args[0]);
          edge(bufferNode(l->name, 0, schedule::Scope::Global), ln, GraphEdgeKind::DataFlow);
          edge(ln, n, GraphEdgeKind::DataFlow);
        }
        edge(n, bufferNode(s.buffer, 0, schedule::Scope::Global), GraphEdgeKind::DataFlow);
        break;
      }
      case lower::StmtNode::Alloc: {
        tempSizes_[s.buffer] = s.size;
        const int32_t n = bufferNode(s.buffer, s.size, s.scope);
        for (size_t c = 0; c < 3; ++c)
          set(n, kScope + c, c == size_t(s.scope) ? 1.0f : 0.0f);
        break;
      }
      case lower::StmtNode::Seq:
      case lower::StmtNode::If:
        for (const lower::Stmt& c : s.body)
          walk(*c, parent);
        break;
    }
  }

  ProgramGraph g_;
  std::map<std::string, int32_t> buffers_;
  std::map<std::string, int64_t> tempSizes_;  // elements
  std::vector<Loop> loops_;
};

}  // namespace

ProgramGraph buildProgramGraph(const lower::LoweredFunc& f) {
  return GraphBuilder(f).take();
}

const std::vector<std::string>& graphNodeFeatureNames() {
  static const std::vector<std::string> names = {
      "is_loop",      "is_store",      "is_load",      "is_buffer",      "loop_serial",     "loop_parallel",
      "loop_vector",  "loop_unrolled", "loop_vthread", "loop_block_idx", "loop_thread_idx",
      "size",  // loop extent, buffer elements, or executions of a store or load
      "depth",        "store_flops",   "inner_stride", "index_vars",     "scope_global",    "scope_local",
      "scope_shared", "is_input",      "is_output"};
  return names;
}

}  // namespace tessel::cost
