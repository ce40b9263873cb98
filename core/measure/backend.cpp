#include "measure/backend.h"

#include <stdexcept>

#include "measure/cpp_program_builder.h"
#include "measure/cuda_driver.h"
#include "measure/cuda_program_builder.h"
#include "measure/program_measurer.h"
#include "measure/runner.h"
#include "target/target.h"
#include "task/search_task.h"

namespace tessel::measure {

namespace {

// A CUDA target's arch as NVRTC takes it: "native" is this machine's first GPU.
target::Target concreteCudaTarget(target::Target t) {
  if (t.arch != "native") return t;
  const std::string why = cuda::unavailableReason();
  if (!why.empty())
    throw std::runtime_error("target '" + t.str() + "' means this machine's GPU, and there is none here (" + why +
                             "): name the arch, e.g. cuda -arch=sm_90");
  t.arch = cuda::gpus().at(0).arch();
  return t;
}

}  // namespace

std::unique_ptr<ProgramBuilder> makeBuilder(const task::SearchTask& task, const MeasurerOptions& options) {
  const target::Target& t = task.target;
  if (t.isCpu()) return std::make_unique<CppProgramBuilder>(task, options.cpp, options.build, options.keepFiles);
  return std::make_unique<CudaProgramBuilder>(task, concreteCudaTarget(t), options.build, options.keepFiles);
}

std::unique_ptr<ProgramRunner> makeRunner(const task::SearchTask& task, const MeasurerOptions& options) {
  const target::Target& t = task.target;
  if (t.isCpu()) return std::make_unique<Runner>(options.run);
  // Measuring on a GPU needs its driver first of all.
  if (const std::string why = cuda::unavailableReason(); !why.empty())
    throw std::runtime_error("cannot measure for target '" + t.str() + "': " + why);
  RunOptions run = options.run;
  run.device = target::Target::Kind::Cuda;
  return std::make_unique<Runner>(std::move(run));
}

}  // namespace tessel::measure
