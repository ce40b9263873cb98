// The seam between the tuner and a target's code: a builder turns a task's
// programs (step lists) into kernels a runner can load, and a runner measures
// them against the task's naive program (as TVM's ProgramBuilder and
// ProgramRunner). ProgramMeasurer drives one of each; makeBuilder and
// makeRunner pick them by the task's target kind, so the tuner never knows
// which backend it drives. The CPU's: C++ through the host compiler
// (CppProgramBuilder) and isolated worker processes (Runner). CUDA's: CUDA C
// through NVRTC (CudaProgramBuilder), measured by the same worker processes on
// the GPU (cuda_worker.h).
#pragma once

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

// What a builder made of one program: a kernel, or why not.
struct BuiltProgram {
  KernelRef kernel;    // kernel.library empty: not built (see error)
  std::string source;  // the generated code; empty if the program could not be instantiated
  ErrorCode error = ErrorCode::None;
  std::string message;
  double seconds = 0;  // building it (its share of a compiler run)
};

class ProgramBuilder {
 public:
  virtual ~ProgramBuilder() = default;
  // The task's naive program, built as its reference: what every program's
  // outputs are checked against. Throws std::runtime_error if it cannot be.
  virtual KernelRef buildReference() = 0;
  // One result per program, in order; a program that cannot be replayed,
  // generated or compiled is an error result, never an exception.
  virtual std::vector<BuiltProgram> build(const std::vector<std::vector<schedule::Step>>& programs) = 0;
  // One program's code, as build() would generate it (for showing and storing
  // the best). Throws schedule::ScheduleError for a program that does not replay.
  virtual std::string source(const std::vector<schedule::Step>& program) const = 0;
  // Where its sources and kernels are (for --keep-files).
  virtual std::string workDir() const = 0;
};

class ProgramRunner {
 public:
  virtual ~ProgramRunner() = default;
  // Measures the kernels one after another, checked against task.reference.
  virtual std::vector<MeasureResult> run(const RunTask& task, const std::vector<KernelRef>& kernels) = 0;
};

// The builder and runner of the task's target. makeRunner throws
// std::runtime_error for a CUDA target on a machine without a working NVIDIA
// driver, naming why.
std::unique_ptr<ProgramBuilder> makeBuilder(const task::SearchTask& task, const MeasurerOptions& options);
std::unique_ptr<ProgramRunner> makeRunner(const task::SearchTask& task, const MeasurerOptions& options);

}  // namespace tessel::measure
