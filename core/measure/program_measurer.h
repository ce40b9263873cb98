// The build-and-measure pipeline for one task: its target's builder turns
// programs (step lists) into kernels, its runner measures them against the
// task's naive program (measure/backend.h). The tuner drives this and knows no
// backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "measure/backend.h"
#include "measure/cpp_program_builder.h"
#include "measure/measurer.h"
#include "measure/runner.h"
#include "schedule/steps.h"
#include "task/search_task.h"

namespace tessel::measure {

struct MeasurerOptions {
  RunOptions run;
  codegen::CppOptions cpp;      // how the programs become C++ (register tiles on by default)
  codegen::BuildOptions build;  // workDir is made if empty
  bool keepFiles = false;
};

// The defaults for kernels of `target`: its vector width, its compiler flags
// and its thread count (run.threads). The defaults above are the target "cpu".
MeasurerOptions measurerOptionsFor(const target::Target& target);

// What the task's programs are measured against: its buffers (the naive
// program's arguments), its tolerance and its reference built by `builder`.
RunTask makeRunTask(const task::SearchTask& task, ProgramBuilder& builder);

// Builds and measures on this machine (the measurer a tuner uses unless told
// otherwise).
class ProgramMeasurer final : public Measurer {
 public:
  // The backend of the task's target (makeBuilder, makeRunner).
  ProgramMeasurer(const task::SearchTask& task, const MeasurerOptions& options);
  // These builder and runner.
  ProgramMeasurer(const task::SearchTask& task, std::unique_ptr<ProgramBuilder> builder,
                  std::unique_ptr<ProgramRunner> runner);
  ~ProgramMeasurer() override;
  ProgramMeasurer(const ProgramMeasurer&) = delete;
  ProgramMeasurer& operator=(const ProgramMeasurer&) = delete;

  std::vector<ProgramResult> measure(const std::vector<std::vector<schedule::Step>>& programs) override;
  std::string source(const std::vector<schedule::Step>& program) const override { return builder_->source(program); }
  // Tolerance of the correctness check for this task.
  double tolerance() const { return runTask_.tolerance; }
  std::string workDir() const { return builder_->workDir(); }

 private:
  std::unique_ptr<ProgramBuilder> builder_;
  std::unique_ptr<ProgramRunner> runner_;
  RunTask runTask_;
};

}  // namespace tessel::measure
