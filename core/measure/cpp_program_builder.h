// The CPU's builder (measure/backend.h): programs become C++ kernels
// (codegen/cpp_codegen.h), compiled in batches into shared libraries by the
// host compiler (codegen/cpp_builder.h) with the target's flags.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "measure/backend.h"
#include "support/scratch_dir.h"
#include "task/search_task.h"

namespace tessel::measure {

class CppProgramBuilder final : public ProgramBuilder {
 public:
  // Makes a work folder (removed at the end unless keepFiles) when
  // build.workDir is empty.
  CppProgramBuilder(const task::SearchTask& task, codegen::CppOptions cpp, codegen::BuildOptions build, bool keepFiles);
  CppProgramBuilder(const CppProgramBuilder&) = delete;
  CppProgramBuilder& operator=(const CppProgramBuilder&) = delete;

  KernelRef buildReference() override;
  std::vector<BuiltProgram> build(const std::vector<std::vector<schedule::Step>>& programs) override;
  std::string source(const std::vector<schedule::Step>& program) const override;
  std::string workDir() const override { return dir_.path(); }

 private:
  const task::SearchTask& task_;
  codegen::CppOptions cpp_;
  support::ScratchDir dir_;  // before build_: build_.workDir is its path
  codegen::BuildOptions build_;
  int batch_ = 0;  // batches built: symbols are unique across the task's batches
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
