// The CUDA target's builder (measure/backend.h): programs become CUDA C
// (codegen/cuda_codegen.h), compiled to CUBIN by NVRTC for the target's arch
// (codegen/nvrtc_compiler.h), many at once. A kernel over the target's limits
// (threads, shared memory, registers) is a compile error (code 3) before
// anything runs. Each built program is a folder entry of two files: its
// CUBIN and a launch manifest (measure/cuda_manifest.h) that the GPU runner
// reads; KernelRef::library is the manifest's path. The reference is the
// task's naive program built for the host CPU: a GPU's outputs are checked
// against the CPU's.
#pragma once

#include <string>
#include <vector>

#include "codegen/cpp_builder.h"
#include "measure/backend.h"
#include "support/scratch_dir.h"
#include "target/target.h"
#include "task/search_task.h"

namespace tessel::measure {

class CudaProgramBuilder final : public ProgramBuilder {
 public:
  // build.workDir: as CppProgramBuilder (made, and removed unless keepFiles,
  // when empty); build.jobs: sources compiled at once; build.cancel honoured.
  CudaProgramBuilder(const task::SearchTask& task, const target::Target& target, codegen::BuildOptions build,
                     bool keepFiles);
  CudaProgramBuilder(const CudaProgramBuilder&) = delete;
  CudaProgramBuilder& operator=(const CudaProgramBuilder&) = delete;

  KernelRef buildReference() override;
  std::vector<BuiltProgram> build(const std::vector<std::vector<schedule::Step>>& programs) override;
  std::string source(const std::vector<schedule::Step>& program) const override;
  std::string workDir() const override { return dir_.path(); }

 private:
  const task::SearchTask& task_;
  target::Target target_;
  support::ScratchDir dir_;  // before build_: build_.workDir is its path
  codegen::BuildOptions build_;
  int batch_ = 0;
};

}  // namespace tessel::measure
