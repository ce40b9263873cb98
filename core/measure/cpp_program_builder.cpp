#include "measure/cpp_program_builder.h"

#include <stdexcept>

#include "lower/layout_rewrite.h"
#include "support/cancellation.h"

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

CppProgramBuilder::CppProgramBuilder(const task::SearchTask& task, codegen::CppOptions cpp, codegen::BuildOptions build,
                                     bool keepFiles)
    : task_(task), cpp_(std::move(cpp)), dir_(build.workDir, "tessel-build", keepFiles), build_(std::move(build)) {
  build_.workDir = dir_.path();
}

KernelRef CppProgramBuilder::buildReference() {
  // Plain loops, no layout rewriting, built with the reference flags: the
  // naive program as the user wrote it.
  codegen::BuildOptions o = build_;
  o.flags = codegen::referenceCompilerFlags();
  codegen::CppOptions plain;
  plain.layoutRewrite = false;
  const std::string src = programSource(task_.dag, {}, "tessel_reference", plain);
  // Three tries: a compiler that was killed (out of memory, a user's kill) must
  // not end the whole tuning, and plain loops that truly do not compile fail
  // the same way every time.
  std::string why;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto out = codegen::buildCandidates({{src, "tessel_reference"}}, o);
    if (!out[0].library.empty()) return {out[0].library, "tessel_reference", "", {}};
    why = out[0].message;
    if (support::isCancelled(o.cancel)) break;
  }
  throw std::runtime_error("cannot build the reference program of " + task_.key + ": " + why);
}

std::vector<BuiltProgram> CppProgramBuilder::build(const std::vector<std::vector<schedule::Step>>& programs) {
  std::vector<BuiltProgram> results(programs.size());
  std::vector<codegen::BuildCandidate> cands;
  std::vector<size_t> owner;  // per candidate, its program
  ++batch_;
  for (size_t i = 0; i < programs.size(); ++i) {
    const std::string symbol = "tessel_b" + std::to_string(batch_) + "_" + std::to_string(i);
    try {
      ProgramCode code = programCode(task_.dag, programs[i], symbol, cpp_);
      results[i].source = code.source;
      results[i].kernel = {"", symbol, code.packSymbol, code.packedSizes};
      cands.push_back({results[i].source, symbol});
      owner.push_back(i);
    } catch (const std::exception& e) {
      results[i].error = ErrorCode::Instantiation;
      results[i].message = e.what();
    }
  }
  const std::vector<codegen::BuildOutput> built = codegen::buildCandidates(cands, build_);
  for (size_t c = 0; c < cands.size(); ++c) {
    BuiltProgram& r = results[owner[c]];
    r.seconds = built[c].seconds;
    if (built[c].error != ErrorCode::None) {
      r.error = built[c].error;
      r.message = built[c].message;
      continue;
    }
    r.kernel.library = built[c].library;
  }
  return results;
}

std::string CppProgramBuilder::source(const std::vector<schedule::Step>& program) const {
  return programSource(task_.dag, program, "tessel_b0_0", cpp_);
}

}  // namespace tessel::measure
