// Schedule transfer: the programs of stored tasks adapted to a task, as
// AutoTVM transfers across workloads and as the knowledge base's warm start
// needs. A stored program of the same workload (an exact match) replays as it
// is; one of a task of the same structure (task_structure.h) keeps its
// annotation decisions: tile lengths re-fitted to the new extents
// (schedule::refitTileLengths), the rest as they were, materialised on the
// task's own sketch that takes exactly those decisions. Nothing here measures:
// every program returned is verified and timed like any other by the tuner.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "knowledge/record_library.h"
#include "schedule/sketch.h"
#include "task/search_task.h"

namespace tessel::knowledge {

struct TransferredProgram {
  std::vector<schedule::Step> steps;
  schedule::ProgramDecisions decisions;  // on the task's own sketches, if hasDecisions
  bool hasDecisions = false;             // false: an exact match stored without decisions
  std::string sourceTask;                // the workload key it comes from
  double sourceSeconds = 0;              // what it measured there
  double distance = 0;                   // structureDistance from its task (0: the same numbers)
  bool exact = false;                    // the same workload key and target
};

struct TransferOptions {
  size_t sourceTasks = 4;       // the nearest stored tasks of the same structure, per library
  size_t programsPerTask = 16;  // the fastest programs taken of each
  size_t maxPrograms = 64;      // in all
};

struct TransferResult {
  // Exact matches first, then the similar tasks' programs by rank (every
  // task's fastest, nearest task first, then every task's second...); no
  // program twice.
  std::vector<TransferredProgram> programs;
  std::vector<const LibraryTask*> sources;  // the stored tasks looked at (an exact match first)
  size_t sourcePrograms = 0;                // the programs those tasks hold
  size_t rejected = 0;                      // taken programs that fit none of the task's sketches
};

// `sketches` are the task's (schedule::generateSketches on `hw`).
TransferResult transferPrograms(const task::SearchTask& task, const std::vector<schedule::Sketch>& sketches,
                                const schedule::HardwareParams& hw, const std::vector<const RecordLibrary*>& libraries,
                                const TransferOptions& options = {});

// One stored program's decisions on the task's sketches: tried on the sketch
// they were taken on first, then on the others; a sketch fits when it splits
// the same loops into as many tile levels (its other decisions may be fewer
// or more: a decision it does not take is dropped, one it takes anew starts
// at its lowest value). The program and the decisions that give it (their
// `sketch` the one that fits), or false.
bool adaptDecisions(const std::vector<schedule::Sketch>& sketches, const schedule::HardwareParams& hw,
                    schedule::ProgramDecisions& decisions, std::vector<schedule::Step>* steps);

}  // namespace tessel::knowledge
