#include "te/compute_dag.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "support/size_limits.h"

namespace tessel::te {

int64_t Op::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::vector<std::string> Op::inputs() const {
  std::vector<std::string> names;
  if (!body) return names;
  std::vector<const ExprNode*> loads;
  collectLoads(body, &loads);
  for (const ExprNode* l : loads)
    if (std::find(names.begin(), names.end(), l->name) == names.end()) names.push_back(l->name);
  return names;
}

Expr reduceInit(ReduceKind k) {
  switch (k) {
    case ReduceKind::Max:
      return floatImm(-std::numeric_limits<double>::infinity());
    case ReduceKind::Min:
      return floatImm(std::numeric_limits<double>::infinity());
    default:
      return floatImm(0.0);
  }
}

Expr reduceCombine(ReduceKind k, Expr acc, Expr value) {
  switch (k) {
    case ReduceKind::Max:
      return maxExpr(acc, value);
    case ReduceKind::Min:
      return minExpr(acc, value);
    default:
      return acc + value;
  }
}

ComputeDAG::ComputeDAG(std::vector<Op> ops, std::vector<std::string> outputs)
    : ops_(std::move(ops)), outputs_(std::move(outputs)) {
  std::set<std::string> read;
  for (const Op& op : ops_) {
    if (op.placeholder) inputs_.push_back(op.name);
    for (const std::string& in : op.inputs())
      read.insert(in);
  }
  if (outputs_.empty())
    for (const Op& op : ops_)
      if (!op.placeholder && !read.count(op.name)) outputs_.push_back(op.name);
}

int ComputeDAG::indexOf(const std::string& name) const {
  for (size_t i = 0; i < ops_.size(); ++i)
    if (ops_[i].name == name) return int(i);
  return -1;
}

const Op& ComputeDAG::op(const std::string& name) const {
  int i = indexOf(name);
  if (i < 0) throw std::invalid_argument("no tensor named '" + name + "'");
  return ops_[size_t(i)];
}

bool ComputeDAG::isOutput(const std::string& name) const {
  return std::find(outputs_.begin(), outputs_.end(), name) != outputs_.end();
}

double ComputeDAG::compulsoryBytes() const {
  double elements = 0;
  for (const std::string& name : inputs_)
    elements += double(op(name).numElements());
  for (const std::string& name : outputs_)
    elements += double(op(name).numElements());
  return 4 * elements;
}

double ComputeDAG::flops() const {
  double total = 0;
  for (const Op& op : ops_) {
    if (op.placeholder) continue;
    double iters = double(op.numElements());
    for (const IterVar& r : op.reduceAxes)
      iters *= double(r.extent);
    // The combine of a reduction is one more operation per iteration.
    double per = double(countFlops(op.body)) + (op.hasReduce() ? 1.0 : 0.0);
    total += iters * per;
  }
  return total;
}

int64_t ComputeDAG::maxReductionLength() const {
  int64_t best = 1;
  for (const Op& op : ops_) {
    int64_t n = 1;
    for (const IterVar& r : op.reduceAxes)
      n *= r.extent;
    best = std::max(best, n);
  }
  return best;
}

std::string ComputeDAG::toString() const {
  std::ostringstream os;
  for (const Op& op : ops_) {
    os << op.name << "[";
    for (size_t i = 0; i < op.shape.size(); ++i)
      os << (i ? "," : "") << op.shape[i];
    os << "]";
    if (op.placeholder) {
      os << " = placeholder\n";
      continue;
    }
    os << "(";
    for (size_t i = 0; i < op.axes.size(); ++i)
      os << (i ? "," : "") << op.axes[i].name;
    os << ") = ";
    if (op.hasReduce()) {
      static const char* names[] = {"", "sum", "max", "min"};
      os << names[int(op.reduce)] << "(";
      for (const IterVar& r : op.reduceAxes)
        os << r.name << ":" << r.extent << " ";
      os << "| " << te::toString(op.body) << ")\n";
    } else {
      os << te::toString(op.body) << "\n";
    }
  }
  return os.str();
}

std::string DagBuilder::uniqueName(const std::string& base) const {
  for (const Op& op : ops_)
    if (op.name == base) throw std::invalid_argument("duplicate tensor name '" + base + "'");
  return base;
}

// Shapes enter here from every operator definition and fused task: each
// tensor within the kernels' index range and the machine's memory.
static void checkShape(const std::string& name, const std::vector<int64_t>& shape) {
  for (int64_t d : shape)
    if (d <= 0) throw std::invalid_argument("tensor '" + name + "' has a non-positive dimension " + std::to_string(d));
  support::checkTensorSize("tensor '" + name + "'", shape);
}

// Reduction loops count in 32-bit ints too; their extents hold no memory.
static void checkReduction(const std::string& name, const std::vector<int64_t>& extents) {
  for (int64_t d : extents) {
    if (d <= 0)
      throw std::invalid_argument("tensor '" + name + "' has a non-positive reduction extent " + std::to_string(d));
    if (d > support::kMaxTensorElements)
      throw support::LimitError("tensor '" + name + "': reduction extent " + std::to_string(d) + " is " +
                                support::tooLongText());
  }
}

Tensor DagBuilder::placeholder(const std::string& name, std::vector<int64_t> shape, bool layoutFree) {
  checkShape(name, shape);
  Op op;
  op.name = uniqueName(name);
  op.placeholder = true;
  op.layoutFree = layoutFree;
  op.shape = shape;
  ops_.push_back(op);
  return Tensor(name, shape);
}

static std::vector<IterVar> makeAxes(const char* prefix, const std::vector<int64_t>& extents, Indices* vars) {
  static const char* spatial[] = {"i", "j", "k", "l", "m", "n", "o", "p"};
  std::vector<IterVar> axes;
  for (size_t d = 0; d < extents.size(); ++d) {
    std::string n = prefix[0] == 's' && d < 8 ? spatial[d] : std::string(prefix) + std::to_string(d);
    axes.push_back({n, extents[d]});
    vars->push_back(var(n));
  }
  return axes;
}

Tensor DagBuilder::compute(const std::string& name, std::vector<int64_t> shape,
                           const std::function<Expr(const Indices&)>& f) {
  checkShape(name, shape);
  Op op;
  op.name = uniqueName(name);
  op.shape = shape;
  Indices idx;
  op.axes = makeAxes("s", shape, &idx);
  op.body = f(idx);
  ops_.push_back(op);
  return Tensor(name, shape);
}

Tensor DagBuilder::reduce(const std::string& name, std::vector<int64_t> shape, ReduceKind kind,
                          std::vector<int64_t> reduceExtents,
                          const std::function<Expr(const Indices&, const Indices&)>& f) {
  checkShape(name, shape);
  checkReduction(name, reduceExtents);
  Op op;
  op.name = uniqueName(name);
  op.shape = shape;
  Indices idx, ridx;
  op.axes = makeAxes("s", shape, &idx);
  op.reduceAxes = makeAxes("r", reduceExtents, &ridx);
  op.reduce = kind;
  op.body = f(idx, ridx);
  ops_.push_back(op);
  return Tensor(name, shape);
}

ComputeDAG DagBuilder::build(std::vector<std::string> outputs) const {
  // Each tensor fits alone (checkShape); a task's measurement holds them all.
  double bytes = 0;
  const Op* largest = nullptr;
  for (const Op& op : ops_) {
    bytes += 4.0 * double(op.numElements());
    if (!largest || op.numElements() > largest->numElements()) largest = &op;
  }
  const int64_t memory = support::physicalMemoryBytes();
  if (largest && memory > 0 && bytes > double(memory))
    throw support::LimitError("the task's " + std::to_string(ops_.size()) + " tensors need " +
                              support::bytesText(bytes) + " together (the largest, '" + largest->name + "' " +
                              support::shapeText(largest->shape) + "), more than this machine's memory (" +
                              support::bytesText(double(memory)) + ")");
  return ComputeDAG(ops_, std::move(outputs));
}

}  // namespace tessel::te
