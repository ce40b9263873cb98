#include "export/cuda_kernel_export.h"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "codegen/cuda_codegen.h"
#include "export/export_common.h"
#include "schedule/steps.h"
#include "store/record_store.h"
#include "store/task_rows.h"
#include "support/subprocess.h"
#include "support/version.h"
#include "target/target.h"

namespace tessel::exporter {

namespace {

namespace fs = std::filesystem;
using namespace detail;

struct Best {
  store::RecordRow record;
  task::SearchTask task;
  codegen::CudaProgram program;
  std::vector<Argument> args;  // the program's first buffers
  int64_t damagedSkipped = 0;  // better records whose steps do not replay
};

Best bestProgram(const store::Database& db, const store::TaskRow& row, const KernelExportOptions& options,
                 const std::string& name) {
  TunedProgram tuned = bestTunedProgram(db, row, options);
  Best b{std::move(tuned.record), std::move(tuned.task), {}, {}, tuned.damagedSkipped};
  const lower::LoweredFunc f = lower::lowerState(tuned.state);
  b.program = codegen::emitCudaProgram(f, name);
  b.args = argumentsOf(b.task.dag, f);
  return b;
}

std::string nvccPath(const KernelExportOptions& options) {
  if (!options.cudaCompiler.empty()) return options.cudaCompiler;
  if (const char* env = std::getenv("TESSEL_NVCC"); env && *env) return env;
  if (fs::exists("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "nvcc";
}

// The typed entry point: device pointers in, the temporaries one kernel
// hands the next allocated for the call, the launcher's status out.
std::string entryPoint(const std::string& prototype, const codegen::CudaProgram& p, const std::vector<Argument>& args) {
  std::ostringstream os;
  os << "extern \"C\" " << prototype << " {\n  float* buffers[" << p.buffers.size() << "] = {";
  for (size_t i = 0; i < args.size(); ++i)
    os << (i ? ", " : "") << (args[i].input ? "const_cast<float*>(" + args[i].name + ")" : args[i].name);
  os << "};\n  int rc = 0;\n";
  for (size_t t = args.size(); t < p.buffers.size(); ++t)
    os << "  if (!rc) rc = int(cudaMalloc(reinterpret_cast<void**>(&buffers[" << t << "]), " << p.buffers[t].size
       << " * sizeof(float)));  // " << p.buffers[t].name << "\n";
  os << "  if (!rc) rc = " << p.name << "(buffers);\n";
  for (size_t t = args.size(); t < p.buffers.size(); ++t)
    os << "  if (buffers[" << t << "]) cudaFree(buffers[" << t << "]);\n";
  os << "  return rc;\n}\n";
  return os.str();
}

nlohmann::json launchesOf(const codegen::CudaProgram& p) {
  nlohmann::json out = nlohmann::json::array();
  for (const codegen::CudaKernel& k : p.kernels)
    out.push_back({{"name", k.name},
                   {"grid", {k.grid.x, k.grid.y, k.grid.z}},
                   {"block", {k.block.x, k.block.y, k.block.z}},
                   {"shared_bytes", k.sharedBytes}});
  return out;
}

void compile(const fs::path& root, const std::vector<std::string>& sources, const target::Target& target,
             const KernelExportOptions& options) {
  fs::create_directories(root / "lib");
  std::vector<std::string> argv = {nvccPath(options)};
  for (const std::string& flag : target.compilerFlags())
    argv.push_back(flag);
  argv.insert(argv.end(), {"-shared", "-Xcompiler", "-fPIC", "-I" + (root / "include").string()});
  for (const std::string& s : sources)
    argv.push_back((root / s).string());
  argv.insert(argv.end(), {"-o", (root / "lib/libtessel_kernels.so").string()});
  const support::ProcessResult r = support::runProcess(argv, 600);
  if (!r.ok())
    throw std::runtime_error("compiling the exported CUDA kernels with " + argv[0] +
                             " failed (set TESSEL_NVCC, or export without compiling):\n" + r.output);
}

}  // namespace

std::string bestCudaKernelSource(const store::Database& db, const store::TaskRow& row,
                                 const KernelExportOptions& options) {
  const Best b = bestProgram(db, row, options, "tessel_" + lower::cIdent(row.key) + "_launch");
  return "// " + row.op + " " + shapeText(row.shape) + ", task " + row.key + ", record " + std::to_string(b.record.id) +
         ", target " + row.target + ".\n// Schedule: " + b.record.steps + "\n" + b.program.source;
}

ExportResult exportCudaKernels(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                               const std::string& outDir, const KernelExportOptions& options) {
  if (tasks.empty()) throw std::runtime_error("nothing to export: no task");
  const target::Target target = store::targetOf(tasks.front());
  if (target.isCpu() || target.arch == "native")
    throw std::runtime_error("a CUDA export needs a cuda target with its arch, not " + target.str());
  const fs::path root(outDir);
  ExportResult result;
  result.header = "include/tessel_kernels.h";
  std::ostringstream header;
  header << "// CUDA kernels tuned by Tessel for " << target.str() << ", exported " << isoNow() << ".\n"
         << "// Each function takes device pointers (cudaMalloc) to its inputs then its\n"
         << "// outputs: dense float32 arrays, row-major in the shapes given. It launches its\n"
         << "// kernels on the default stream, allocating for the call the temporaries one\n"
         << "// kernel hands the next, and returns the CUDA error code (0: launched).\n"
         << "#pragma once\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  nlohmann::json manifest = {{"tessel_version", support::version()},
                             {"created", isoNow()},
                             {"header", result.header},
                             {"target", target.str()},
                             {"arch", target.arch},
                             {"kernels", nlohmann::json::array()}};
  std::vector<std::string> sources;
  for (const store::TaskRow& row : tasks) {
    if (store::targetOf(row) != target)
      throw std::runtime_error("the tasks are for different targets (" + target.str() + ", " + row.target +
                               "): export one target's at a time (tessel export --target T)");
    ExportedKernel k;
    k.taskKey = row.key;
    k.function = "tessel_" + lower::cIdent(row.key);
    k.source = "src/" + k.function + ".cu";
    const Best b = bestProgram(db, row, options, k.function + "_launch");
    result.damagedRecordsSkipped += b.damagedSkipped;
    k.latencyMs = b.record.medianCost() * 1e3;
    k.gflops = row.flops / b.record.medianCost() / 1e9;
    const std::vector<Argument>& args = b.args;
    std::string params;
    nlohmann::json jargs = nlohmann::json::array();
    header << "// " << row.op << " " << shapeText(row.shape) << ", task " << row.key << ": " << number(k.latencyMs)
           << " ms, " << number(k.gflops) << " GFLOP/s when tuned\n";
    for (size_t i = 0; i < args.size(); ++i) {
      const Argument& a = args[i];
      params += (i ? ", " : "") + std::string(a.input ? "const float* " : "float* ") + a.name;
      header << "//   " << (a.input ? "in  " : "out ") << a.name << "[" << shapeText(a.shape) << "]\n";
      jargs.push_back(
          {{"name", a.name}, {"shape", a.shape}, {"role", a.input ? "input" : "output"}, {"dtype", "float32"}});
    }
    const std::string prototype = "int " + k.function + "(" + params + ")";
    header << prototype << ";\n\n";
    writeFile(root / k.source, "// " + row.op + " " + shapeText(row.shape) + ", tuned by Tessel for " + row.target +
                                   " (task " + row.key + ", record " + std::to_string(b.record.id) +
                                   ").\n// Schedule: " + b.record.steps + "\n#include \"tessel_kernels.h\"\n" +
                                   b.program.source + "\n" + entryPoint(prototype, b.program, args));
    sources.push_back(k.source);
    manifest["kernels"].push_back({{"task", row.key},
                                   {"op", row.op},
                                   {"shape", row.shape},
                                   {"target", row.target},
                                   {"function", k.function},
                                   {"source", k.source},
                                   {"arguments", jargs},
                                   {"launches", launchesOf(b.program)},
                                   {"latency_ms", k.latencyMs},
                                   {"gflops", k.gflops},
                                   {"flops", row.flops},
                                   {"record_id", b.record.id},
                                   {"steps", nlohmann::json::parse(b.record.steps)}});
    result.kernels.push_back(std::move(k));
  }
  header << "#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n";
  writeFile(root / result.header, header.str());

  std::ostringstream cmake;
  cmake << "# Builds the CUDA kernels Tessel exported into one library: tessel_kernels.\n"
        << "cmake_minimum_required(VERSION 3.18)\n"
        << "project(tessel_kernels CUDA)\n"
        << "add_library(tessel_kernels SHARED";
  for (const std::string& s : sources)
    cmake << "\n  " << s;
  cmake << ")\n"
        << "target_include_directories(tessel_kernels PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)\n"
        << "# The schedules were tuned for this GPU architecture: build for it, as Tessel did.\n"
        << "set_target_properties(tessel_kernels PROPERTIES CUDA_ARCHITECTURES " << target.arch.substr(3)
        << " POSITION_INDEPENDENT_CODE ON)\n";
  writeFile(root / "CMakeLists.txt", cmake.str());
  if (options.compile) {
    compile(root, sources, target, options);
    result.library = "lib/libtessel_kernels.so";
    manifest["library"] = result.library;
  }
  writeFile(root / "manifest.json", manifest.dump(2) + "\n");
  return result;
}

}  // namespace tessel::exporter
