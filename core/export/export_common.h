// What the CPU and CUDA kernel exports share (internal to export/): files
// written with their folders, timestamps, shapes and numbers as the exports
// print them, a kernel's typed arguments, and the task a stored row was tuned
// as.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "export/kernel_export.h"
#include "lower/loop_nest.h"
#include "schedule/state.h"
#include "store/record_store.h"
#include "task/search_task.h"

namespace tessel::exporter::detail {

// Writes `text` to `p`, making its folders; throws naming the file.
void writeFile(const std::filesystem::path& p, const std::string& text);
// Now, as 2026-11-26T14:00:00Z.
std::string isoNow();
// 24x40x16 ("scalar" for none).
std::string shapeText(const std::vector<int64_t>& s);
// Nine significant digits; "" for a value that is not finite.
std::string number(double v);

struct Argument {
  std::string name;  // the kernel's C identifier
  std::vector<int64_t> shape;
  bool input = true;
};
// The kernel's arguments (inputs, then outputs) with their tensor shapes.
std::vector<Argument> argumentsOf(const te::ComputeDAG& dag, const lower::LoweredFunc& f);

// The task as it was tuned: its definition from the options, or rebuilt
// from its op and shape (throws naming the problem).
task::SearchTask rebuildTask(const store::TaskRow& row, const KernelExportOptions& options);

// A task's best program as export and `db show --code` take it: the lowest-
// cost valid record whose steps replay on the rebuilt task (better ones that
// do not are skipped and counted). Throws when the task has none.
struct TunedProgram {
  store::RecordRow record;
  task::SearchTask task;
  schedule::State state;  // the record's steps replayed
  int64_t damagedSkipped = 0;
};
TunedProgram bestTunedProgram(const store::Database& db, const store::TaskRow& row, const KernelExportOptions& options);

}  // namespace tessel::exporter::detail
