#include "measure/program_measurer.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "codegen/cpp_codegen.h"
#include "lower/layout_rewrite.h"
#include "support/subprocess.h"
#include "support/tolerances.h"

namespace tessel::measure {

ProgramCode programCode(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps, const std::string& symbol,
                        const codegen::CppOptions& cpp) {
  lower::LoweredFunc f = lower::lowerState(schedule::replay(dag, steps));
  if (cpp.layoutRewrite) lower::rewriteLayouts(&f);
  ProgramCode code;
  code.source = codegen::emitCppKernelAndPack(f, symbol, cpp);
  if (!f.packed.empty()) {
    code.packSymbol = codegen::packSymbol(symbol);
    code.packedSizes.assign(f.numInputs, 0);
    for (const lower::PackedLayout& p : f.packed)
      code.packedSizes[p.arg] = p.size();
  }
  return code;
}

std::string programSource(const te::ComputeDAG& dag, const std::vector<schedule::Step>& steps,
                          const std::string& symbol, const codegen::CppOptions& cpp) {
  return programCode(dag, steps, symbol, cpp).source;
}

MeasurerOptions measurerOptionsFor(const target::Target& target) {
  MeasurerOptions o;
  o.cpp = codegen::CppOptions(target);
  o.build.flags = codegen::withoutWarnings(codegen::kernelCompilerFlags(target));
  o.run.threads = target.threads;
  return o;
}

ProgramMeasurer::ProgramMeasurer(const task::SearchTask& task, MeasurerOptions options)
    : task_(task), options_(std::move(options)) {
  if (options_.build.workDir.empty()) {
    options_.build.workDir = support::makeTempDir("tessel-build");
    ownsWorkDir_ = !options_.keepFiles;
  }
  lower::LoweredFunc f = lower::lowerState(schedule::State(task.dag));
  runTask_.key = task.key;
  for (const lower::Buffer& b : f.args)
    runTask_.bufferSizes.push_back(b.size);
  runTask_.numInputs = f.numInputs;
  for (size_t i = 0; i < f.numInputs; ++i)
    if (f.args[i].layoutFree) runTask_.constantInputs.push_back(i);
  runTask_.tolerance = support::kernelTolerance(task.dag.maxReductionLength());
  buildReference();
  runner_ = std::make_unique<Runner>(options_.run);
}

ProgramMeasurer::~ProgramMeasurer() {
  runner_.reset();
  if (ownsWorkDir_) support::removeTree(options_.build.workDir);
}

void ProgramMeasurer::buildReference() {
  codegen::BuildOptions o = options_.build;
  o.flags = codegen::referenceCompilerFlags();
  codegen::CppOptions plain;
  plain.layoutRewrite = false;
  std::string src = programSource(task_.dag, {}, "tessel_reference", plain);
  auto out = codegen::buildCandidates({{src, "tessel_reference"}}, o);
  if (!out[0].library.size())
    throw std::runtime_error("cannot build the reference program of " + task_.key + ": " + out[0].message);
  runTask_.reference = {out[0].library, "tessel_reference", "", {}};
}

std::vector<ProgramResult> ProgramMeasurer::measure(const std::vector<std::vector<schedule::Step>>& programs) {
  std::vector<ProgramResult> results(programs.size());
  std::vector<codegen::BuildCandidate> cands;
  std::vector<size_t> owner;
  std::vector<std::pair<std::string, std::vector<int64_t>>> packing;  // per candidate
  ++batch_;
  for (size_t i = 0; i < programs.size(); ++i) {
    std::string symbol = "tessel_b" + std::to_string(batch_) + "_" + std::to_string(i);
    try {
      ProgramCode code = programCode(task_.dag, programs[i], symbol, options_.cpp);
      results[i].source = code.source;
      cands.push_back({results[i].source, symbol});
      owner.push_back(i);
      packing.push_back({code.packSymbol, code.packedSizes});
    } catch (const std::exception& e) {
      results[i].result.error = ErrorCode::Instantiation;
      results[i].result.message = e.what();
    }
  }
  std::vector<codegen::BuildOutput> built = codegen::buildCandidates(cands, options_.build);
  std::vector<KernelRef> kernels;
  std::vector<size_t> runOwner;
  for (size_t c = 0; c < cands.size(); ++c) {
    MeasureResult& r = results[owner[c]].result;
    r.buildSeconds = built[c].seconds;
    if (built[c].error != ErrorCode::None) {
      r.error = built[c].error;
      r.message = built[c].message;
      continue;
    }
    kernels.push_back({built[c].library, cands[c].symbol, packing[c].first, packing[c].second});
    runOwner.push_back(owner[c]);
  }
  // Measured after the whole batch is built: no compiler shares the cores.
  std::vector<MeasureResult> ran = runner_->run(runTask_, kernels);
  for (size_t k = 0; k < ran.size(); ++k) {
    double b = results[runOwner[k]].result.buildSeconds;
    results[runOwner[k]].result = ran[k];
    results[runOwner[k]].result.buildSeconds = b;
  }
  return results;
}

}  // namespace tessel::measure
