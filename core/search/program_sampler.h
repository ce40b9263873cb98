// A task's space as the searches draw from it: its sketches, random
// annotations of them, and decisions made into programs again, with the one
// random stream the search's choices also come from (a seed fixes them all).
#pragma once

#include <random>
#include <vector>

#include "schedule/sketch.h"
#include "task/search_task.h"

namespace tessel::search {

using Program = std::vector<schedule::Step>;

class ProgramSampler {
 public:
  // Throws std::runtime_error for a task with no sketch.
  ProgramSampler(const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed);

  // One random program (and its decisions), or false if annotation kept failing.
  bool sample(Program* out, schedule::ProgramDecisions* decisions = nullptr);
  // The program `decisions` stand for (exact; values out of range are clamped
  // and written back), or false where it breaks a limit.
  bool materialize(schedule::ProgramDecisions& decisions, Program* out) const;

  const task::SearchTask& task() const { return task_; }
  size_t sketchCount() const { return sketches_.size(); }
  std::mt19937_64& rng() { return rng_; }
  // Invalid annotations seen (rejected before building).
  int rejected() const { return rejected_; }

 private:
  // Rejects GPU programs over the shared-memory limit (throws ScheduleError).
  void checkGpuLimits(const Program& p) const;

  const task::SearchTask& task_;
  schedule::HardwareParams hw_;
  std::vector<schedule::Sketch> sketches_;
  std::mt19937_64 rng_;
  int rejected_ = 0;
};

}  // namespace tessel::search
