#include "measure/backend.h"

#include <stdexcept>

#include "measure/cpp_program_builder.h"
#include "measure/program_measurer.h"
#include "measure/runner.h"
#include "target/target.h"
#include "task/search_task.h"

namespace tessel::measure {

namespace {

target::Target cpuTargetOf(const task::SearchTask& task) {
  const target::Target t = target::parseTarget(task.target);
  if (!t.isCpu())
    throw std::invalid_argument("no backend builds and measures programs for target '" + task.target +
                                "' in this build (the CUDA backend is not implemented yet)");
  return t;
}

}  // namespace

std::unique_ptr<ProgramBuilder> makeBuilder(const task::SearchTask& task, const MeasurerOptions& options) {
  cpuTargetOf(task);
  return std::make_unique<CppProgramBuilder>(task, options.cpp, options.build, options.keepFiles);
}

std::unique_ptr<ProgramRunner> makeRunner(const task::SearchTask& task, const MeasurerOptions& options) {
  cpuTargetOf(task);
  return std::make_unique<Runner>(options.run);
}

}  // namespace tessel::measure
