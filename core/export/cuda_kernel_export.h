// The kernel export of a cuda target (kernel_export.h dispatches here): each
// task's best program as a CUDA source (its kernels, the launcher that runs
// them in order, and a typed entry point taking device pointers), a header,
// manifest.json with every kernel's launch dimensions, and a CMakeLists.txt
// (project language CUDA, the target's architecture) that builds them into
// one library; compiled here by nvcc unless options.compile is false.
#pragma once

#include <string>
#include <vector>

#include "export/kernel_export.h"

namespace tessel::exporter {

// Every task must be of one cuda target; throws std::runtime_error naming
// the problem (no valid record, another target, nvcc missing or failing).
ExportResult exportCudaKernels(const store::Database& db, const std::vector<store::TaskRow>& tasks,
                               const std::string& outDir, const KernelExportOptions& options = {});

// The CUDA C of a cuda task's best program, with its schedule in a comment
// (`tessel db show --code`).
std::string bestCudaKernelSource(const store::Database& db, const store::TaskRow& task,
                                 const KernelExportOptions& options = {});

}  // namespace tessel::exporter
