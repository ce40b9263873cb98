// The build-and-measure pipeline for one task: programs (step lists) are
// replayed, lowered, emitted, compiled in batches and measured in workers
// against the task's naive program.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "measure/runner.h"
#include "schedule/steps.h"
#include "search/search_task.h"

namespace tessel::measure {

struct MeasurerOptions {
  RunOptions run;
  codegen::CppOptions cpp;      // how the programs become C++ (register tiles on by default)
  codegen::BuildOptions build;  // workDir is made if empty
  bool keepFiles = false;
};

struct ProgramResult {
  MeasureResult result;
  std::string source;  // the kernel's C++ (empty if it could not be instantiated)
};

class ProgramMeasurer {
 public:
  ProgramMeasurer(const search::SearchTask& task, MeasurerOptions options);
  ~ProgramMeasurer();
  ProgramMeasurer(const ProgramMeasurer&) = delete;
  ProgramMeasurer& operator=(const ProgramMeasurer&) = delete;

  std::vector<ProgramResult> measure(const std::vector<std::vector<schedule::Step>>& programs);
  // Tolerance of the correctness check for this task.
  double tolerance() const { return runTask_.tolerance; }
  const std::string& workDir() const { return options_.build.workDir; }

 private:
  void buildReference();
  const search::SearchTask& task_;
  MeasurerOptions options_;
  bool ownsWorkDir_ = false;
  RunTask runTask_;
  std::unique_ptr<Runner> runner_;
  int batch_ = 0;
};

// The kernel of one program as C++ (throws schedule::ScheduleError).
std::string programSource(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps,
                          const std::string& symbol, const codegen::CppOptions& cpp = codegen::CppOptions());

}  // namespace tessel::measure
