// What the tuner measures through: a task's programs in, their results out.
// ProgramMeasurer (program_measurer.h) builds and runs them on this machine;
// the fleet's measurer (fleet/fleet_measurer.h) sends them to measurement
// agents on others. A factory picks one per task, so the tuner knows neither.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "measure/measure_types.h"
#include "schedule/steps.h"

namespace tessel::task {
struct SearchTask;
}

namespace tessel::measure {

struct MeasurerOptions;

struct ProgramResult {
  MeasureResult result;
  std::string source;  // the kernel's code (empty if it could not be instantiated)
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  // One result per program, in order; a program that fails is an error
  // result, never an exception. Throws std::runtime_error only when nothing
  // can be measured at all (no reference, no way to reach the agents).
  virtual std::vector<ProgramResult> measure(const std::vector<std::vector<schedule::Step>>& programs) = 0;
  // One program's code, as measure() builds it (for showing and storing the
  // best). Throws schedule::ScheduleError for a program that does not replay.
  virtual std::string source(const std::vector<schedule::Step>& program) const = 0;
};

// Makes the measurer of one task; the tuner calls it once per task.
using MeasurerFactory =
    std::function<std::unique_ptr<Measurer>(const task::SearchTask& task, const MeasurerOptions& options)>;

}  // namespace tessel::measure
