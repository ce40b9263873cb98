#include "export/export_common.h"

#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "schedule/steps.h"
#include "store/task_rows.h"

namespace tessel::exporter::detail {

void writeFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::string isoNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out;
  for (int64_t v : s) {
    if (!out.empty()) out += 'x';
    out += std::to_string(v);
  }
  return out.empty() ? "scalar" : out;
}

std::string number(double v) {
  if (!std::isfinite(v)) return "";
  std::ostringstream os;
  os.precision(9);
  os << v;
  return os.str();
}

std::vector<Argument> argumentsOf(const te::ComputeDAG& dag, const lower::LoweredFunc& f) {
  std::vector<Argument> out;
  for (size_t i = 0; i < f.args.size(); ++i) {
    Argument a{f.args[i].name, {}, i < f.numInputs};
    for (const te::Op& op : dag.ops())
      if (lower::cIdent(op.name) == a.name) a.shape = op.shape;
    out.push_back(std::move(a));
  }
  return out;
}

task::SearchTask rebuildTask(const store::TaskRow& row, const KernelExportOptions& options) {
  if (auto d = options.definitions.find(row.key); d != options.definitions.end()) {
    task::SearchTask task;
    task.dag = d->second;
    task.key = row.key;
    return task;
  }
  return store::operatorTaskOf(row);
}

TunedProgram bestTunedProgram(const store::Database& db, const store::TaskRow& row,
                              const KernelExportOptions& options) {
  TunedProgram p;
  p.task = rebuildTask(row, options);
  std::optional<store::BestRow> best = store::bestReplayable(db, row.id, p.task.dag, &p.damagedSkipped);
  if (!best) {
    throw std::runtime_error(
        "task " + row.key + " has no valid record to export" +
        (p.damagedSkipped ? " (" + std::to_string(p.damagedSkipped) + " whose steps do not replay on it were skipped)"
                          : std::string()));
  }
  p.record = std::move(best->record);
  p.state = schedule::replay(p.task.dag, schedule::deserializeSteps(p.record.steps));
  return p;
}

}  // namespace tessel::exporter::detail
