// Sketch generation (Ansor's derivation rules): from the last stage to the
// first, each registered rule that applies derives new partial programs.
// A sketch fixes the loop structure; the annotation fills in tile sizes,
// compute locations, parallel, vectorize and unroll.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "schedule/hardware_params.h"
#include "schedule/steps.h"

namespace tessel::schedule {

// A tile split whose lengths copy those of another split: the consumer
// follows its producer's tiles (lengths = l1..l(level-1), product of the rest).
struct FollowSplit {
  size_t step, source;
  int level;
};

struct Sketch {
  State initial;  // the DAG's initial state
  State state;    // the sketch applied, unfilled lengths = 1
  std::vector<Step> steps;
  std::vector<size_t> tileSplits;  // split steps whose lengths annotation samples
  std::vector<FollowSplit> follows;
  std::set<std::string> tiled;     // stages given multi-level tiling
  std::set<std::string> placed;    // stages whose location the sketch fixed
  std::vector<std::string> rules;  // names of the rules applied, in order
  // GPU: the fused consumer's loops come in groups of this many per tile
  // level (block, vthread, thread, inner); shared-memory caches; stages
  // whose reduction is split for a cross-thread reduction.
  std::map<std::string, int> threadGroups;
  std::set<std::string> sharedCaches;
  std::set<std::string> crossThread;
  // CPU: stages whose parallel loop stops at their first loop with stages
  // computed at it (those compute a whole tile, e.g. softmax rows, and would
  // be recomputed per inner tile if the loops under it were fused in).
  std::set<std::string> parallelStopsAtAttach;
};

// A derivation rule. check() says whether it applies to stage `stage`;
// apply() returns the derived sketches with the next stage to visit.
class SketchRule {
 public:
  enum class Condition { Pass, Apply, ApplyAndSkipRest };
  virtual ~SketchRule() = default;
  virtual std::string name() const = 0;
  virtual Condition check(const Sketch& s, int stage, const HardwareParams& hw) const = 0;
  virtual std::vector<std::pair<Sketch, int>> apply(const Sketch& s, int stage, const HardwareParams& hw) const = 0;
};

// Rules in the order they are tried, per kind of target. New rules join with
// registerSketchRule (before `before`, or at the end when empty).
const std::vector<std::shared_ptr<SketchRule>>& sketchRules(target::Target::Kind kind);
void registerSketchRule(target::Target::Kind kind, std::shared_ptr<SketchRule> rule, const std::string& before = "");
// Takes rule `name` out of the kind's rules (for comparisons: the same
// search with and without it); returns it, or null if it was not there.
std::shared_ptr<SketchRule> removeSketchRule(target::Target::Kind kind, const std::string& name);

std::vector<Sketch> generateSketches(const te::ComputeDAG& dag, const HardwareParams& hw);

// Applies a step to a sketch's state and records it; returns its index.
size_t addStep(Sketch& s, Step step);

// Analyses the rules use.
bool needsMultiLevelTiling(const State& s, int stage);
bool isStrictlyInlinable(const State& s, int stage);
// Calls (exp, sqrt, erf, ...) or float divisions: costly to recompute.
bool hasExpensiveOp(const te::Expr& e);
// The one element-wise consumer that reads this stage at its own indices, or -1.
int elementwiseMatchedConsumer(const State& s, int stage);

// Steps the rules share. multiLevelTile splits every spatial iterator of a
// stage into as many levels as `structure` has 'S' and every reduce iterator
// into as many as it has 'R', then orders them by it ("SSRSRS": level 0 of
// every spatial axis, level 1, the outer reduce level, ...); the splits'
// lengths are left to the annotation. tileStructure: the target's structure.
void multiLevelTile(Sketch& sk, int stage, const std::string& structure);
std::string tileStructure(const HardwareParams& hw);
// GPU: every input of stage `name` but those in `skip` is staged through
// shared memory, loaded once per outer reduction step.
void addSharedCacheReads(Sketch& sk, const std::string name, const std::set<std::string>& skip = {});

// One decision the annotation takes: tile lengths of a split (`tile`, with the
// extent split and the innermost limit), or an integer in [lo, hi] (compute
// location spot, fused loops to parallelise or vectorise, unroll step).
struct Choice {
  std::vector<int64_t> value;
  int64_t lo = 0, hi = 0;
  bool tile = false;
  int64_t extent = 0, maxInnermost = 0;
};
// All decisions that complete a sketch into a program, keyed by what they
// decide ("tile:3", "at:pad", "parallel:C", "vectorize:C", "unroll:C").
struct ProgramDecisions {
  size_t sketch = 0;
  std::map<std::string, Choice> choices;
};
// As JSON text (stored with each record, so a resumed search can evolve
// from measured programs); parsing throws ScheduleError on malformed text.
std::string serializeDecisions(const ProgramDecisions& d);
ProgramDecisions deserializeDecisions(const std::string& text);

// Random annotation of a sketch: the steps of one complete program, and the
// decisions taken if `decisions` is given. Throws ScheduleError if the
// result is invalid for the target.
std::vector<Step> annotateSketch(const Sketch& sketch, const HardwareParams& hw, std::mt19937_64& rng,
                                 ProgramDecisions* decisions = nullptr);
// The program of given decisions (deterministic). Values out of what the
// program allows are clamped, and written back clamped; decisions missing
// are taken at their lowest value; tile lengths decided for another extent
// (a program of another task) are re-fitted (refitTileLengths). With
// `visited`, the key of every decision taken, in the order it was taken.
std::vector<Step> materialize(const Sketch& sketch, ProgramDecisions& decisions, const HardwareParams& hw,
                              std::vector<std::string>* visited = nullptr);
// Tile lengths (inner levels, the outer one implied) chosen for one extent,
// fitted to `extent`: innermost first, each the divisor of what is left
// nearest in ratio to its old length (the innermost at most maxInnermost),
// so their product divides `extent`.
std::vector<int64_t> refitTileLengths(const std::vector<int64_t>& lengths, int64_t extent, int64_t maxInnermost);
// Random lengths of `n` tile levels whose product divides `extent`, the
// innermost at most `maxInnermost`.
std::vector<int64_t> sampleTileLengths(int64_t extent, size_t n, int64_t maxInnermost, std::mt19937_64& rng);
// The divisors of n, ascending.
std::vector<int64_t> divisors(int64_t n);
// Checks target limits (threads, shared memory, vector width) of a program.
void validateProgram(const State& s, const HardwareParams& hw);

}  // namespace tessel::schedule
