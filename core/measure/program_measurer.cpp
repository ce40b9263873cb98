#include "measure/program_measurer.h"

#include <stdexcept>

#include "lower/loop_nest.h"
#include "support/tolerances.h"

namespace tessel::measure {

MeasurerOptions measurerOptionsFor(const target::Target& target) {
  MeasurerOptions o;
  o.cpp = codegen::CppOptions(target);
  o.build.flags = codegen::withoutWarnings(codegen::kernelCompilerFlags(target));
  o.run.threads = target.threads;
  return o;
}

RunTask makeRunTask(const task::SearchTask& task, ProgramBuilder& builder) {
  // The buffers of the naive program are every program's arguments.
  const lower::LoweredFunc f = lower::lowerState(schedule::State(task.dag));
  RunTask rt;
  rt.key = task.key;
  for (const lower::Buffer& b : f.args)
    rt.bufferSizes.push_back(b.size);
  rt.numInputs = f.numInputs;
  for (size_t i = 0; i < f.numInputs; ++i)
    if (f.args[i].layoutFree) rt.constantInputs.push_back(i);
  rt.tolerance = support::kernelTolerance(task.dag.maxReductionLength());
  rt.reference = builder.buildReference();
  return rt;
}

ProgramMeasurer::ProgramMeasurer(const task::SearchTask& task, const MeasurerOptions& options)
    : ProgramMeasurer(task, makeBuilder(task, options), makeRunner(task, options)) {}

ProgramMeasurer::ProgramMeasurer(const task::SearchTask& task, std::unique_ptr<ProgramBuilder> builder,
                                 std::unique_ptr<ProgramRunner> runner)
    : builder_(std::move(builder)), runner_(std::move(runner)), runTask_(makeRunTask(task, *builder_)) {}

ProgramMeasurer::~ProgramMeasurer() {
  runner_.reset();  // its workers go before the builder removes their libraries
}

std::vector<ProgramResult> ProgramMeasurer::measure(const std::vector<std::vector<schedule::Step>>& programs) {
  const std::vector<BuiltProgram> built = builder_->build(programs);
  std::vector<ProgramResult> results(programs.size());
  std::vector<KernelRef> kernels;
  std::vector<size_t> owner;  // per kernel, its program
  for (size_t i = 0; i < built.size(); ++i) {
    ProgramResult& r = results[i];
    r.source = built[i].source;
    r.result.buildSeconds = built[i].seconds;
    if (built[i].error != ErrorCode::None) {
      r.result.error = built[i].error;
      r.result.message = built[i].message;
      continue;
    }
    kernels.push_back(built[i].kernel);
    owner.push_back(i);
  }
  // Measured after the whole batch is built: no compiler shares the cores.
  const std::vector<MeasureResult> ran = runner_->run(runTask_, kernels);
  for (size_t k = 0; k < ran.size(); ++k) {
    MeasureResult& r = results[owner[k]].result;
    const double buildSeconds = r.buildSeconds;
    r = ran[k];
    r.buildSeconds = buildSeconds;
  }
  return results;
}

}  // namespace tessel::measure
