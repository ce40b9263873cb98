// tessel export: the tuned kernels of a task or model as a library, or the
// records as CSV / JSON lines.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "args.h"
#include "commands.h"
#include "export/kernel_export.h"
#include "export/staged_folder.h"
#include "store/database.h"
#include "stored_model.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel export [--db FILE] (--task KEY | --model MODEL | --all) --out DIR\n"
    "                     [--format kernels|csv|jsonl] [--force] [--json]\n"
    "\n"
    "kernels (default): per task the best kernel's source, one compiled library\n"
    "(lib/libtessel_kernels.so), include/tessel_kernels.h with typed entry points\n"
    "and argument shapes, manifest.json and a CMakeLists.txt that builds them.\n"
    "For a cuda target: CUDA sources built by nvcc ($TESSEL_NVCC, else\n"
    "/usr/local/cuda/bin/nvcc) for its architecture, entry points taking device\n"
    "pointers, and each kernel's launch dimensions in manifest.json.\n"
    "csv, jsonl: every record of the tasks as records.csv / records.jsonl.\n"
    "\n"
    "options:\n"
    "  --db FILE     the database (default: $TESSEL_DB, else ~/.local/share/tessel/tessel.db)\n"
    "  --task KEY    a workload key (tessel db best lists them)\n"
    "  --model NAME  every task of a tuned model\n"
    "  --all         every task in the database\n"
    "  --target T    only the tasks tuned for this target string (default: every\n"
    "                target's; one library holds one target's kernels)\n"
    "  --out DIR     where to write: a new or empty folder (its parent must exist)\n"
    "  --force       replace DIR if it holds files (the whole folder is replaced)\n"
    "  --no-compile  write the sources without building the library\n"
    "  --format F    kernels (default), csv or jsonl\n"
    "  --json        print one JSON object on stdout\n"
    "\n"
    "examples:\n"
    "  tessel export --model resnet18 --db r18.db --out r18-kernels\n"
    "  tessel export --all --format csv --out records\n";

}  // namespace

OptionSpec exportOptions() {
  return {{"db", "task", "model", "out", "format", "target"}, {"json", "help", "all", "no-compile", "force"}};
}

std::string exportHelp() {
  return kHelp;
}

namespace {

// The tasks --task, --model or --all name, of the --target given (if any).
std::vector<store::TaskRow> chosenTasks(const Args& args, store::Database& db,
                                        const std::optional<target::Target>& target) {
  std::vector<store::TaskRow> tasks;
  if (args.has("task")) {
    auto t = db.taskByKey(args.get("task"), target ? target->str() : "");
    if (!t) throw std::runtime_error("no task '" + args.get("task") + "' in " + db.path() + " (see tessel db best)");
    tasks.push_back(*t);
  } else if (args.has("model")) {
    for (auto& [t, weight] : db.modelTasks(args.get("model")))
      tasks.push_back(t);
    if (tasks.empty()) throw std::runtime_error("no model '" + args.get("model") + "' in " + db.path());
  } else {
    tasks = db.tasks();
    if (tasks.empty()) throw std::runtime_error(db.path() + " has no task");
  }
  if (target) {  // the database keeps canonical strings
    std::erase_if(tasks, [&](const store::TaskRow& t) { return t.target != target->str(); });
    if (tasks.empty()) throw std::runtime_error("none of those tasks was tuned for " + target->str());
  }
  return tasks;
}

}  // namespace

int exportCommand(const std::vector<std::string>& argv) {
  Args args(argv, exportOptions());
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  int chosen = int(args.has("task")) + int(args.has("model")) + int(args.has("all"));
  if (chosen != 1) throw UsageError("give exactly one of --task KEY, --model MODEL, --all");
  if (!args.has("out")) throw UsageError("missing --out DIR");
  const std::string format = args.get("format", "kernels");
  if (format != "kernels" && format != "csv" && format != "jsonl")
    throw UsageError("unknown --format " + format + " (available: kernels, csv, jsonl)");

  const std::optional<target::Target> target = targetFilter(args);  // none: every target's tasks
  auto db = store::Database::open(args.get("db", store::defaultDatabasePath()), store::OpenMode::ReadOnly);
  std::vector<store::TaskRow> tasks = chosenTasks(args, *db, target);

  const std::string out = args.get("out");
  // Written beside --out and renamed into place: a failed or interrupted
  // export leaves the folder as it was.
  exporter::StagedFolder staged(out, args.has("force"), "give --force to replace it, or another --out");
  nlohmann::json j;
  j["out"] = out;
  j["format"] = format;
  if (format == "kernels") {
    exporter::KernelExportOptions options;
    options.compile = !args.has("no-compile");
    if (args.has("model")) {
      // A model's tasks are fused subgraphs: rebuild them the way it was tuned.
      options.definitions = storedModelDefinitions(*db, args.get("model"));
      // Tasks tuned for an earlier form of the model (Tessel's graph passes
      // changed since) cannot be rebuilt from it: export the others.
      std::vector<store::TaskRow> current;
      for (const store::TaskRow& t : tasks)
        if (options.definitions.count(t.key))
          current.push_back(t);
        else
          std::fprintf(stderr, "skipped %s: not a task of %s as Tessel prepares it now (tune it again)\n",
                       t.key.c_str(), args.get("model").c_str());
      if (current.empty())
        throw std::runtime_error("none of the tasks stored for " + args.get("model") + " is a task of it now");
      tasks = std::move(current);
    }
    exporter::ExportResult r = exporter::exportKernels(*db, tasks, staged.path(), options);
    staged.commit();
    nlohmann::json ks = nlohmann::json::array();
    for (const auto& k : r.kernels) {
      ks.push_back({{"task", k.taskKey},
                    {"function", k.function},
                    {"source", k.source},
                    {"latency_ms", k.latencyMs},
                    {"gflops", k.gflops}});
      if (!args.has("json"))
        std::printf("%s: %s (%s), %.4f ms, %.2f GFLOP/s\n", k.taskKey.c_str(), k.function.c_str(), k.source.c_str(),
                    k.latencyMs, k.gflops);
    }
    j["kernels"] = ks;
    j["damaged_records_skipped"] = r.damagedRecordsSkipped;
    if (r.damagedRecordsSkipped)
      std::fprintf(stderr,
                   "warning: skipped %lld records whose steps do not replay on their task; took the next best\n",
                   (long long)r.damagedRecordsSkipped);
    j["library"] = r.library;
    j["header"] = r.header;
    if (!args.has("json"))
      std::printf("wrote %s/{CMakeLists.txt,manifest.json,%s%s}\n", out.c_str(), r.header.c_str(),
                  r.library.empty() ? "" : ("," + r.library).c_str());
  } else {
    exporter::ExportResult r = exporter::exportRecords(*db, tasks, staged.path(), format);
    staged.commit();
    j["records"] = r.records;
    j["file"] = out + "/records." + format;
    if (!args.has("json")) std::printf("wrote %zu records to %s/records.%s\n", r.records, out.c_str(), format.c_str());
  }
  if (args.has("json")) std::puts(j.dump().c_str());
  return 0;
}

}  // namespace tessel::cli
