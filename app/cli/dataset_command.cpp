// tessel dataset collect|export|remeasure: measured programs of several
// models for training cost models, the same as JSON lines, and those lines
// measured again here.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "interrupt.h"
#include "measure_option.h"
#include "tuning/dataset.h"
#include "tuning/dataset_collection.h"
#include "tuning/dataset_remeasure.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

// Where and how collect and remeasure measure: target, fusion, seed, batch,
// timeout, jobs, cache state, the worker and the fleet's measurers.
tuning::TuningConfig measuringConfig(const Args& args) {
  tuning::TuningConfig t;
  const MeasureChoice measured = measureOption(args, args.has("quiet") || args.has("json"));
  t.measure = measured.where;
  t.makeMeasurer = measured.factory;
  t.target = targetOption(args, true, measured.local());
  t.fusion = args.getChoice("fusion", "dp", {"dp", "rule", "none"});
  t.seed = uint64_t(args.getInt("seed", 1, 0, tuning::kMaxSeed));
  t.batch = int(args.getInt("batch", 32, 1, tuning::kMaxBatch));
  t.timeoutSeconds = double(args.getInt("timeout", tuning::kDefaultTimeoutSeconds, 1, tuning::kMaxTimeoutSeconds));
  t.jobs = int(args.getInt("jobs", 0, 1, tuning::kMaxJobs));
  t.cacheState = cacheFlushOption(args, measure::CacheState::Model);
  t.workerPath = siblingExecutable("tessel-worker");
  return t;
}

int collect(const Args& args) {
  if (!args.has("models")) throw UsageError("collect needs --models A,B,... (try --help)");
  if (!args.has("db")) throw UsageError("collect needs --db FILE: the dataset is a tuning database");
  tuning::DatasetConfig c;
  c.models = parseList(args.get("models"));
  if (c.models.empty()) throw UsageError("--models names no model");
  c.programsPerTask = int(args.getInt("programs-per-task", 64, 1, 1000000));
  c.randomShare = double(args.getInt("random-percent", 50, 0, 100)) / 100.0;
  c.tuning = measuringConfig(args);
  c.tuning.population = int(args.getInt("population", 512, tuning::kMinPopulation, tuning::kMaxPopulation));
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
  const std::optional<target::Target> target = targetFilter(args);  // none: every target's records
  auto db = store::Database::open(args.get("db"), store::OpenMode::ReadOnly);
  const auto records = tuning::datasetFromDatabase(*db, parseList(args.get("models")), target);
  tuning::writeDataset(args.get("out"), records);
  size_t valid = 0;
  for (const auto& r : records)
    valid += std::isfinite(r.cost);
  std::printf("%zu records (%zu valid) written to %s\n", records.size(), valid, args.get("out").c_str());
  return 0;
}

int remeasure(const Args& args) {
  if (!args.has("data")) throw UsageError("remeasure needs --data FILE.jsonl[.gz]: the dataset to measure again");
  if (!args.has("out")) throw UsageError("remeasure needs --out FILE.jsonl[.gz]");
  if (args.get("out") == args.get("data"))
    throw UsageError("--out must not be --data: the input is read, not replaced");
  tuning::RemeasureConfig c;
  c.models = parseList(args.get("models"));
  c.repeats = int(args.getInt("repeat", 3, 1, 15));
  c.tuning = measuringConfig(args);
  const bool quiet = args.has("quiet") || args.has("json");
  const std::vector<tuning::DatasetRecord> in = tuning::readDataset(args.get("data"));
  InterruptGuard interrupt;
  tuning::RemeasureEvents events;
  events.cancel = interrupt.flag();
  events.onTask = [&](const tuning::RemeasureProgress& p) {
    if (!quiet)
      std::fprintf(stderr, "  task %zu/%zu: %s of %s, %d programs\n", p.taskIndex + 1, p.tasks, p.task.c_str(),
                   p.model.c_str(), p.programs);
  };
  tuning::RemeasureSummary s;
  try {
    s = tuning::remeasureDataset(in, c, args.get("out"), events);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (args.has("json"))
    std::puts(nlohmann::json{
        {"tasks", s.tasks}, {"kept", s.kept}, {"programs", s.programs}, {"valid", s.valid}, {"stopped", s.stopped}}
                  .dump()
                  .c_str());
  else
    std::printf("%zu programs of %zu tasks measured %d times (%zu valid), %zu tasks kept from %s%s\n", s.programs,
                s.tasks, c.repeats, s.valid, s.kept, args.get("out").c_str(),
                s.stopped ? " (stopped: run again to go on)" : "");
  return s.stopped ? interrupt.exitCode() : 0;
}

}  // namespace

OptionSpec datasetOptions() {
  return {{"models", "programs-per-task", "random-percent", "db", "out", "data", "repeat", "target", "arch", "fusion",
           "seed", "batch", "population", "timeout", "jobs", "cache-flush", "measure"},
          {"json", "quiet", "help"}};
}

std::string datasetHelp() {
  return "usage: tessel dataset collect --models A,B,... --db FILE [options]\n"
         "       tessel dataset export --db FILE --out FILE.jsonl[.gz] [--models A,B,...] [--target T]\n"
         "       tessel dataset remeasure --data FILE --out FILE.jsonl[.gz] [--repeat N] [options]\n"
         "\n"
         "collect measures programs of every task of the models (zoo names or model\n"
         "files) into a tuning database, for training cost models: each batch is part\n"
         "random programs, part programs evolved by a cost model. It is resumable:\n"
         "what the database holds already counts, and a run measures only what is\n"
         "missing. export writes the records as JSON lines (model, task, weight,\n"
         "target, steps, cost in seconds or null), gzip-compressed for a name ending\n"
         "in .gz; features are recomputed from the steps by whoever reads them.\n"
         "remeasure measures every program of a dataset again, N times each (one pass\n"
         "over a task per time), and writes it labelled with the median: a program\n"
         "that fails in more than half of the runs is written as failed. It relabels\n"
         "a set collected on another machine or by an older Tessel; the output is\n"
         "written after every task, and a run that stops goes on where it stopped.\n"
         "\n"
         "options:\n"
         "  --models A,B,...    the models (export, remeasure: default all)\n"
         "  --programs-per-task N  programs each task should have (default 64)\n"
         "  --random-percent P  share of each batch that is random (default 50)\n"
         "  --db FILE           the tuning database holding the dataset\n"
         "  --out FILE          export, remeasure: where to write\n"
         "  --data FILE         remeasure: the dataset to measure again (JSON lines)\n"
         "  --repeat N          remeasure: measurements per program (default 3)\n"
         "  --target T          collect: what to measure for, a target string (default cpu:\n"
         "                      this machine), e.g. \"cpu -arch=x86-64-v2 -threads=1\" or\n"
         "                      cuda (this machine's GPU); --arch A sets its -arch;\n"
         "                      export: only that target's records (default: every target's;\n"
         "                      the same workload on two targets stays two tasks)\n"
         "  --fusion dp|rule|none  operator fusion (default dp)\n"
         "  --batch N           programs per round, or per build (default 32)\n"
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
         "  tessel dataset export --db set.db --out set.jsonl.gz\n"
         "  tessel dataset remeasure --data set.jsonl.gz --models resnet18 --out here.jsonl.gz\n";
}

int datasetCommand(const std::vector<std::string>& argv) {
  Args args(argv, datasetOptions());
  const std::string what = actionOf(args, "dataset", {"collect", "export", "remeasure"});
  if (what == "collect") return collect(args);
  return what == "export" ? exportSet(args) : remeasure(args);
}

}  // namespace tessel::cli
