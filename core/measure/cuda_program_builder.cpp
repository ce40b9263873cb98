#include "measure/cuda_program_builder.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "codegen/cuda_codegen.h"
#include "codegen/nvrtc_compiler.h"
#include "lower/loop_nest.h"
#include "measure/cpp_program_builder.h"
#include "measure/cuda_manifest.h"

namespace tessel::measure {

namespace {

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

codegen::CudaProgram cudaProgramOf(const task::SearchTask& task, const std::vector<schedule::Step>& steps,
                                   const std::string& name) {
  return codegen::emitCudaProgram(lower::lowerState(schedule::replay(task.dag, steps)), name);
}

}  // namespace

CudaProgramBuilder::CudaProgramBuilder(const task::SearchTask& task, const target::Target& target,
                                       codegen::BuildOptions build, bool keepFiles)
    : task_(task), target_(target), dir_(build.workDir, "tessel-cuda", keepFiles), build_(std::move(build)) {
  if (target_.isCpu()) throw std::invalid_argument("CudaProgramBuilder needs a cuda target, not " + target_.str());
  build_.workDir = dir_.path();
}

KernelRef CudaProgramBuilder::buildReference() {
  // The naive program on the host CPU, with the reference flags, as the CPU
  // backend builds it: the worker computes the expected outputs with it.
  CppProgramBuilder host(task_, codegen::CppOptions(), build_, true);
  return host.buildReference();
}

std::vector<BuiltProgram> CudaProgramBuilder::build(const std::vector<std::vector<schedule::Step>>& programs) {
  std::vector<BuiltProgram> results(programs.size());
  std::vector<codegen::CudaProgram> emitted;
  std::vector<std::string> sources;
  std::vector<size_t> owner;  // per source, its program
  ++batch_;
  for (size_t i = 0; i < programs.size(); ++i) {
    const std::string name = "tessel_b" + std::to_string(batch_) + "_" + std::to_string(i);
    try {
      emitted.push_back(cudaProgramOf(task_, programs[i], name));
      results[i].source = emitted.back().source;
      sources.push_back(emitted.back().deviceSource);
      owner.push_back(i);
    } catch (const std::exception& e) {
      results[i].error = ErrorCode::Instantiation;
      results[i].message = e.what();
    }
  }
  codegen::CudaCompileOptions o;
  o.arch = target_.arch;
  o.jobs = build_.jobs;
  o.cancel = build_.cancel;
  const std::vector<codegen::CudaCompileOutput> built = codegen::compileCuda(sources, o);
  for (size_t c = 0; c < built.size(); ++c) {
    BuiltProgram& r = results[owner[c]];
    const codegen::CudaProgram& p = emitted[c];
    r.seconds = built[c].seconds;
    if (built[c].error != ErrorCode::None) {
      r.error = built[c].error;
      r.message = built[c].message;
      continue;
    }
    CudaManifest manifest;
    manifest.arch = target_.arch;
    manifest.cubin = p.name + ".cubin";
    for (const codegen::CudaKernel& k : p.kernels) {
      const auto res = std::find_if(built[c].kernels.begin(), built[c].kernels.end(),
                                    [&](const codegen::CudaKernelResources& x) { return x.name == k.name; });
      codegen::CudaKernelResources used = res != built[c].kernels.end() ? *res : codegen::CudaKernelResources{};
      used.name = k.name;
      if (const std::string why = codegen::cudaLimitViolation(used, k.block.count(), target_); !why.empty()) {
        r.error = ErrorCode::CompileDevice;
        r.message = "over the target's limits: " + why;
        break;
      }
      manifest.kernels.push_back({k.name,
                                  {k.grid.x, k.grid.y, k.grid.z},
                                  {k.block.x, k.block.y, k.block.z},
                                  k.sharedBytes,
                                  k.params,
                                  used.registers,
                                  used.spillStoreBytes + used.spillLoadBytes});
    }
    if (r.error != ErrorCode::None) continue;
    for (const lower::Buffer& b : p.buffers)
      manifest.buffers.push_back({b.name, b.size});
    const std::string base = build_.workDir + "/" + p.name;
    writeBytes(base + ".cubin", built[c].cubin);
    writeCudaManifest(base + ".json", manifest);
    r.kernel = {base + ".json", p.name, "", {}};
  }
  return results;
}

std::string CudaProgramBuilder::source(const std::vector<schedule::Step>& program) const {
  return cudaProgramOf(task_, program, "tessel_b0_0").source;
}

}  // namespace tessel::measure
