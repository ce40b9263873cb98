#include "search/program_sampler.h"

#include <stdexcept>

#include "lower/loop_nest.h"

namespace tessel::search {

ProgramSampler::ProgramSampler(const task::SearchTask& task, const schedule::HardwareParams& hw, uint64_t seed)
    : task_(task), hw_(hw), sketches_(schedule::generateSketches(task.dag, hw)), rng_(seed) {
  if (sketches_.empty()) throw std::runtime_error("no sketch for task " + task.key);
}

void ProgramSampler::checkGpuLimits(const Program& p) const {
  int64_t shared = lower::sharedMemoryBytes(lower::lowerState(schedule::replay(task_.dag, p)));
  if (shared > hw_.target.sharedMemoryPerBlock)
    throw schedule::ScheduleError("uses " + std::to_string(shared) + " bytes of shared memory (limit " +
                                  std::to_string(hw_.target.sharedMemoryPerBlock) + ")");
}

bool ProgramSampler::sample(Program* out, schedule::ProgramDecisions* decisions) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    size_t which = std::uniform_int_distribution<size_t>(0, sketches_.size() - 1)(rng_);
    try {
      *out = schedule::annotateSketch(sketches_[which], hw_, rng_, decisions);
      if (hw_.target.isCuda()) checkGpuLimits(*out);
      if (decisions) decisions->sketch = which;
      return true;
    } catch (const schedule::ScheduleError&) {
      ++rejected_;
    }
  }
  return false;
}

bool ProgramSampler::materialize(schedule::ProgramDecisions& decisions, Program* out) const {
  if (decisions.sketch >= sketches_.size()) return false;
  try {
    *out = schedule::materialize(sketches_[decisions.sketch], decisions, hw_);
    if (hw_.target.isCuda()) checkGpuLimits(*out);
  } catch (const schedule::ScheduleError&) {
    return false;
  }
  return true;
}

}  // namespace tessel::search
