// tessel dataset collect|export: measured programs of several models for
// training cost models, and the same as JSON lines.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "interrupt.h"
#include "measure_option.h"
#include "tuning/dataset.h"
#include "tuning/dataset_collection.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

int collect(const Args& args) {
  if (!args.has("models")) throw UsageError("collect needs --models A,B,... (try --help)");
  if (!args.has("db")) throw UsageError("collect needs --db FILE: the dataset is a tuning database");
  tuning::DatasetConfig c;
  c.models = parseList(args.get("models"));
  if (c.models.empty()) throw UsageError("--models names no model");
  c.programsPerTask = int(args.getInt("programs-per-task", 64, 1, 1000000));
  c.randomShare = double(args.getInt("random-percent", 50, 0, 100)) / 100.0;
  const MeasureChoice measured = measureOption(args, args.has("quiet") || args.has("json"));
  c.tuning.measure = measured.where;
  c.tuning.makeMeasurer = measured.factory;
  c.tuning.target = targetOption(args, true, measured.local());
  c.tuning.fusion = args.getChoice("fusion", "dp", {"dp", "rule", "none"});
  c.tuning.seed = uint64_t(args.getInt("seed", 1, 0, tuning::kMaxSeed));
  c.tuning.batch = int(args.getInt("batch", 32, 1, tuning::kMaxBatch));
  c.tuning.population = int(args.getInt("population", 512, tuning::kMinPopulation, tuning::kMaxPopulation));
  c.tuning.timeoutSeconds =
      double(args.getInt("timeout", tuning::kDefaultTimeoutSeconds, 1, tuning::kMaxTimeoutSeconds));
  c.tuning.jobs = int(args.getInt("jobs", 0, 1, tuning::kMaxJobs));
  c.tuning.cacheState = cacheFlushOption(args, measure::CacheState::Model);
  c.tuning.workerPath = siblingExecutable("tessel-worker");
  const bool quiet = args.has("quiet") || args.has("json");
  InterruptGuard interrupt;
  tuning::DatasetEvents events;
  events.cancel = interrupt.flag();
  events.onTask = [&](const tuning::DatasetProgress& p) {
    if (!quiet)
      std::fprintf(stderr, "  %s task %zu/%zu: %d programs (%d measured this run)\n", p.model.c_str(), p.task + 1,
                   p.tasks, p.taskPrograms, p.measured);
  };
  tuning::DatasetSummary s;
  try {
    s = tuning::collectDataset(c, args.get("db"), events);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (args.has("json"))
    std::puts(nlohmann::json{{"measured", s.measured},
                             {"valid", s.valid},
                             {"tasks", s.tasks},
                             {"records", s.records},
                             {"stopped", s.stopped}}
                  .dump()
                  .c_str());
  else
    std::printf("%d programs measured (%d valid); the %zu tasks hold %lld records%s\n", s.measured, s.valid, s.tasks,
                (long long)s.records, s.stopped ? " (stopped: run again to go on)" : "");
  return s.stopped ? interrupt.exitCode() : 0;
}

int exportSet(const Args& args) {
  if (!args.has("db")) throw UsageError("export needs --db FILE");
  if (!args.has("out")) throw UsageError("export needs --out FILE.jsonl[.gz]");
  const std::string target = targetFilter(args);  // empty: every target's records
  auto db = store::Database::open(args.get("db"), store::OpenMode::ReadOnly);
  const auto records = tuning::datasetFromDatabase(*db, parseList(args.get("models")), target);
  tuning::writeDataset(args.get("out"), records);
  size_t valid = 0;
  for (const auto& r : records)
    valid += std::isfinite(r.cost);
  std::printf("%zu records (%zu valid) written to %s\n", records.size(), valid, args.get("out").c_str());
  return 0;
}

}  // namespace

OptionSpec datasetOptions() {
  return {{"models", "programs-per-task", "random-percent", "db", "out", "target", "arch", "fusion", "seed", "batch",
           "population", "timeout", "jobs", "cache-flush", "measure"},
          {"json", "quiet", "help"}};
}

std::string datasetHelp() {
  return "usage: tessel dataset collect --models A,B,... --db FILE [options]\n"
         "       tessel dataset export --db FILE --out FILE.jsonl[.gz] [--models A,B,...] [--target T]\n"
         "\n"
         "collect measures programs of every task of the models (zoo names or model\n"
         "files) into a tuning database, for training cost models: each batch is part\n"
         "random programs, part programs evolved by a cost model. It is resumable:\n"
         "what the database holds already counts, and a run measures only what is\n"
         "missing. export writes the records as JSON lines (model, task, weight,\n"
         "target, steps, cost in seconds or null), gzip-compressed for a name ending\n"
         "in .gz; features are recomputed from the steps by whoever reads them.\n"
         "\n"
         "options:\n"
         "  --models A,B,...    the models (export: default all the database's)\n"
         "  --programs-per-task N  programs each task should have (default 64)\n"
         "  --random-percent P  share of each batch that is random (default 50)\n"
         "  --db FILE           the tuning database holding the dataset\n"
         "  --out FILE          export: where to write\n"
         "  --target T          collect: what to measure for, a target string (default cpu:\n"
         "                      this machine), e.g. \"cpu -arch=x86-64-v2 -threads=1\" or\n"
         "                      cuda (this machine's GPU); --arch A sets its -arch;\n"
         "                      export: only that target's records (default: every target's;\n"
         "                      the same workload on two targets stays two tasks)\n"
         "  --fusion dp|rule|none  operator fusion (default dp)\n"
         "  --batch N           programs per round (default 32)\n"
         "  --population N      evolutionary population (default 512)\n"
         "  --seed S            random seed (default 1)\n"
         "  --timeout SECONDS   per-program run time limit (default 10)\n"
         "  --jobs N            parallel compiler processes (default: cores)\n" +
         cacheFlushHelp(measure::CacheState::Model) + measureHelp() +
         "  --json              collect: one JSON object on stdout\n"
         "  --quiet             no progress on stderr\n"
         "\n"
         "Ctrl-C or SIGTERM drops the round in flight and exits 130 or 143; run the\n"
         "same command again to go on.\n"
         "\n"
         "example:\n"
         "  tessel dataset collect --models resnet18,mobilenet_v2 --programs-per-task 200 --db set.db\n"
         "  tessel dataset export --db set.db --out set.jsonl.gz\n";
}

int datasetCommand(const std::vector<std::string>& argv) {
  Args args(argv, datasetOptions());
  if (args.has("help")) {
    std::fputs(datasetHelp().c_str(), stdout);
    return 0;
  }
  const std::string what = actionOf(args, "dataset", {"collect", "export"});
  return what == "collect" ? collect(args) : exportSet(args);
}

}  // namespace tessel::cli
