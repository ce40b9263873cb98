// Operations (placeholders and compute stages) and the DAG they form: the
// compute definition of one task.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "te/expr.h"

namespace tessel::te {

struct IterVar {
  std::string name;
  int64_t extent = 1;
};

enum class ReduceKind : uint8_t { None, Sum, Max, Min };

// One tensor and how it is computed. A compute stage has one spatial axis per
// output dimension; with a reduction, `body` is the value reduced over
// `reduceAxes` with `reduce`, starting from the reduction's identity.
struct Op {
  std::string name;
  bool placeholder = false;
  // A placeholder whose value is known before the runs (weights): the kernel
  // may read it in a layout of its own, packed once (lower/layout_rewrite.h).
  // Not part of the definition's text, so workload keys do not depend on it.
  bool layoutFree = false;
  std::vector<int64_t> shape;
  std::vector<IterVar> axes;
  std::vector<IterVar> reduceAxes;
  ReduceKind reduce = ReduceKind::None;
  Expr body;

  int64_t numElements() const;
  bool hasReduce() const { return reduce != ReduceKind::None; }
  // Names of the tensors the body loads (each once, in order of appearance).
  std::vector<std::string> inputs() const;
};

// Identity element of a reduction, as an immediate.
Expr reduceInit(ReduceKind k);
// Combines an accumulator with a new value.
Expr reduceCombine(ReduceKind k, Expr acc, Expr value);

class ComputeDAG {
 public:
  ComputeDAG() = default;
  // `ops` in topological order; outputs are the computes no other op reads
  // unless listed explicitly.
  explicit ComputeDAG(std::vector<Op> ops, std::vector<std::string> outputs = {});

  const std::vector<Op>& ops() const { return ops_; }
  const Op& op(const std::string& name) const;
  int indexOf(const std::string& name) const;  // -1 when absent
  const std::vector<std::string>& inputs() const { return inputs_; }
  const std::vector<std::string>& outputs() const { return outputs_; }
  bool isOutput(const std::string& name) const;
  // Floating-point operations of one evaluation (a multiply-add counts 2).
  double flops() const;
  // Bytes one evaluation must move at least: each input read once and each
  // output written once, 4 bytes an element (the roofline's traffic).
  double compulsoryBytes() const;
  // Longest reduction that feeds an output: sets the tolerance of checks.
  int64_t maxReductionLength() const;
  // Canonical text of the definition: the basis of workload keys.
  std::string toString() const;

 private:
  std::vector<Op> ops_;
  std::vector<std::string> inputs_, outputs_;
};

// Convenience for writing operator definitions.
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::string name, std::vector<int64_t> shape) : name_(std::move(name)), shape_(std::move(shape)) {}
  const std::string& name() const { return name_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t dim(size_t i) const { return shape_.at(i); }
  size_t ndim() const { return shape_.size(); }
  Expr operator()(std::vector<Expr> idx) const { return load(name_, std::move(idx)); }

 private:
  std::string name_;
  std::vector<int64_t> shape_;
};

using Indices = std::vector<Expr>;

class DagBuilder {
 public:
  Tensor placeholder(const std::string& name, std::vector<int64_t> shape, bool layoutFree = false);
  // Element-wise / injective stage: f(spatial index) -> value.
  Tensor compute(const std::string& name, std::vector<int64_t> shape, const std::function<Expr(const Indices&)>& f);
  // Reduction stage: f(spatial index, reduce index) -> value reduced by `kind`.
  Tensor reduce(const std::string& name, std::vector<int64_t> shape, ReduceKind kind,
                std::vector<int64_t> reduceExtents, const std::function<Expr(const Indices&, const Indices&)>& f);
  ComputeDAG build(std::vector<std::string> outputs = {}) const;

 private:
  std::string uniqueName(const std::string& base) const;
  std::vector<Op> ops_;
};

}  // namespace tessel::te
