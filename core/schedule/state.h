// The program state a schedule transforms: one stage per operation, each with
// its loop iterators (derived from the op's axes by splits and fuses), its
// compute location and its annotations. Stages and iterators are named, so
// attachments survive the insertion of new stages.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "te/compute_dag.h"

namespace tessel::schedule {

struct ScheduleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class IterKind : uint8_t { Spatial, Reduce };

enum class Annotation : uint8_t {
  None,
  Unroll,
  Vectorize,
  Parallel,
  VThread,
  BlockX,
  BlockY,
  BlockZ,
  ThreadX,
  ThreadY,
  ThreadZ,
};
const char* annotationName(Annotation a);
Annotation annotationFromName(const std::string& name);  // throws ScheduleError
bool isGpuBinding(Annotation a);

enum class ComputeLocation : uint8_t { Root, Inlined, At };
enum class Scope : uint8_t { Global, Local, Shared };
const char* scopeName(Scope s);

struct Iterator {
  std::string name;
  int64_t extent = 1;
  IterKind kind = IterKind::Spatial;
  Annotation annotation = Annotation::None;
};

// How iterators derive from each other: a split turns `inputs[0]` into
// `outputs` (outer first, `lengths` = extents of outputs[1..]); a fuse turns
// `inputs` (outer first) into `outputs[0]`.
struct Relation {
  enum Kind : uint8_t { Split, Fuse } kind;
  std::vector<std::string> inputs, outputs;
  std::vector<int64_t> lengths;
};

struct Stage {
  te::Op op;
  std::vector<Iterator> iters;  // leaf iterators, outermost first
  std::vector<Relation> relations;
  ComputeLocation location = ComputeLocation::Root;
  std::string attachStage, attachIter;  // with ComputeLocation::At
  Scope scope = Scope::Global;
  std::string pragmaIter;  // auto_unroll_max_step applies below this iterator
  int autoUnrollMaxStep = 0;

  int iterIndex(const std::string& name) const;  // -1 when absent
};

// Leaf loop extents and the value of every root axis in terms of the leaf
// iterators (variables named after them), for given root extents.
struct LoopStructure {
  std::vector<int64_t> extents;
  std::map<std::string, te::Expr> rootValue;
  std::vector<te::Expr> predicates;  // all must hold for an iteration to run
};
LoopStructure deriveLoops(const Stage& stage, const std::map<std::string, int64_t>& rootExtents);
// Root extents of a stage as its op defines them.
std::map<std::string, int64_t> fullExtents(const te::Op& op);

class State {
 public:
  State() = default;
  explicit State(const te::ComputeDAG& dag);

  std::vector<Stage> stages;
  std::vector<std::string> outputs;

  int stageIndex(const std::string& name) const;  // -1 when absent
  const Stage& stage(const std::string& name) const;
  bool isOutput(const std::string& name) const;
  // Names of the tensors a stage reads once inlined stages are seen through.
  std::vector<std::string> effectiveInputs(int stage) const;
  // Stages that read this stage's tensor, seeing through inlined stages.
  std::vector<int> consumers(int stage) const;
  // Stages attached (directly) to this one.
  std::vector<int> attachedTo(int stage) const;
  // A readable dump of stages and loops, for logs and tests.
  std::string toString() const;
};

// Fresh iterators of an op: one per axis, then one per reduction axis.
std::vector<Iterator> initialIterators(const te::Op& op);

}  // namespace tessel::schedule
