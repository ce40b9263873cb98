// Export of tuned results: the best kernel of each task as a small C library
// (sources, a compiled .so, a header with typed entry points, manifest.json
// and a CMakeLists.txt that builds them; for a cuda target, CUDA sources
// built by nvcc: cuda_kernel_export.h), or the records as CSV / JSON lines.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/database.h"
#include "te/compute_dag.h"

namespace tessel::exporter {

struct ExportedKernel {
  std::string taskKey;
  std::string function;  // typed entry point, e.g. tessel_matmul_512_512_512_1a2b3c4d
  std::string source;    // path of its .cpp, relative to the export folder
  double latencyMs = 0;
  double gflops = 0;
};

struct ExportResult {
  std::vector<ExportedKernel> kernels;
  std::string library;  // the compiled library (relative path), "" if not compiled
  std::string header;   // relative path
  size_t records = 0;   // for csv / jsonl
  // Records better than the exported ones whose steps do not replay on their
  // task (damaged, or of another definition): skipped, the next best taken.
  int64_t damagedRecordsSkipped = 0;
};

struct KernelExportOptions {
  // Definitions of tasks that are not library operators (a model's fused
  // subgraphs), by workload key; the others are rebuilt from op and shape.
  std::map<std::string, te::ComputeDAG> definitions;
  bool compile = true;   // also build lib/libtessel_kernels.so here
  std::string compiler;  // default: $TESSEL_CXX, else c++
  // CUDA kernels' (cuda_kernel_export.h); default: $TESSEL_NVCC, else
  // /usr/local/cuda/bin/nvcc, else nvcc from PATH.
  std::string cudaCompiler;
};

// Which tasks exportKernels can export: those with a valid record whose
// definition is known (options.definitions) or can be rebuilt from op and
// shape; each other one with the reason. For a caller that exports what it
// can (the studio's dialog) rather than failing on the first (the CLI).
struct KernelExportPlan {
  std::vector<store::TaskRow> tasks;
  std::vector<std::pair<store::TaskRow, std::string>> skipped;
};
KernelExportPlan planKernelExport(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                                  const KernelExportOptions& options = {});

// The C++ of a task's best kernel as it was measured (weights packed), with
// the schedule in a comment: what `tessel db show --code` prints. Throws
// std::runtime_error naming the problem, as exportKernels does.
std::string bestKernelSource(const store::Database& db, const store::TaskRow& task,
                             const KernelExportOptions& options = {});

// Throws std::runtime_error naming the problem (a task without a valid
// record, a definition that changed since tuning, a compiler failure).
ExportResult exportKernels(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                           const std::string& outDir, const KernelExportOptions& options = {});

// All records of the tasks as `records.csv` or `records.jsonl` in outDir.
ExportResult exportRecords(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                           const std::string& outDir, const std::string& format);

}  // namespace tessel::exporter
