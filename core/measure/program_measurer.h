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

struct ProgramResult {
  MeasureResult result;
  std::string source;  // the kernel's C++ (empty if it could not be instantiated)
};

class ProgramMeasurer {
 public:
  ProgramMeasurer(const task::SearchTask& task, MeasurerOptions options);
  ~ProgramMeasurer();
  ProgramMeasurer(const ProgramMeasurer&) = delete;
  ProgramMeasurer& operator=(const ProgramMeasurer&) = delete;

  std::vector<ProgramResult> measure(const std::vector<std::vector<schedule::Step>>& programs);
  // Tolerance of the correctness check for this task.
  double tolerance() const { return runTask_.tolerance; }
  const std::string& workDir() const { return options_.build.workDir; }

 private:
  void buildReference();
  const task::SearchTask& task_;
  MeasurerOptions options_;
  bool ownsWorkDir_ = false;
  RunTask runTask_;
  std::unique_ptr<Runner> runner_;
  int batch_ = 0;
};

// One program as C++: its kernel, and the packing function of the constant
// inputs it reads in a layout of its own (lower/layout_rewrite.h).
struct ProgramCode {
  std::string source;
  std::string packSymbol;            // empty: every input is passed plain
  std::vector<int64_t> packedSizes;  // per input, 0: plain
};
// Throws schedule::ScheduleError.
ProgramCode programCode(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps, const std::string& symbol,
                        const codegen::CppOptions& cpp = codegen::CppOptions());
// Its source only.
std::string programSource(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps,
                          const std::string& symbol, const codegen::CppOptions& cpp = codegen::CppOptions());

}  // namespace tessel::measure
