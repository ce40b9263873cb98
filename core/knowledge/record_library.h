// A record library: for each stored task, its fastest measured programs with
// their steps and annotation decisions, and its compute definition so that a
// new task can find the stored tasks of the same structure and nearest
// extents. The knowledge base that ships with Tessel holds one
// (knowledge_base_file.h); a user's tuning database gives another
// (database_library.h).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "knowledge/task_structure.h"
#include "target/target.h"

namespace tessel::knowledge {

struct LibraryProgram {
  std::string steps;      // serialised schedule steps (schedule/steps.h)
  std::string decisions;  // serialised annotation decisions; "" if unknown (it replays on its own task only)
  double seconds = 0;     // median measured time on the library's target
};

struct LibraryTask {
  std::string key;                                 // workload key
  target::Target target = target::Target::host();  // what it was measured for
  std::string op;                                  // operator or fused subgraph name
  std::string compute;                             // its compute definition as text (te::ComputeDAG::toString)
  double flops = 0;                                // per evaluation
  std::vector<std::string> models;                 // the models it is a task of, where known
  std::vector<LibraryProgram> programs;            // fastest first
  TaskStructure structure;                         // of `compute`, filled by RecordLibrary::add
};

// A stored task near a new one: how far (structureDistance) and which.
struct SimilarTask {
  const LibraryTask* task = nullptr;
  double distance = 0;
};

class RecordLibrary {
 public:
  // A task of the same key and target as one held already adds the programs
  // it does not have (the list stays fastest first).
  void add(LibraryTask task);
  const std::vector<LibraryTask>& tasks() const { return tasks_; }
  size_t programs() const;
  bool empty() const { return tasks_.empty(); }
  // The task of this workload key measured for this target, if held.
  const LibraryTask* find(const std::string& key, const target::Target& target) const;
  // The held tasks of the same pattern, nearest first (ties: the one added
  // first), at most `n`; a task of `key` on `target` itself is left out.
  std::vector<SimilarTask> similar(const TaskStructure& structure, const std::string& key, const target::Target& target,
                                   size_t n) const;

 private:
  std::vector<LibraryTask> tasks_;
};

}  // namespace tessel::knowledge
