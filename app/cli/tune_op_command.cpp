#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "baseline/baselines.h"
#include "baseline/cuda_baselines.h"
#include "commands.h"
#include "interrupt.h"
#include "measure/cache_state.h"
#include "measure_option.h"
#include "progress_bar.h"
#include "search/tuner.h"
#include "tuning/tuning_recorder.h"
#include "target/target.h"
#include "te/operators.h"
#include "tuning/tuning_config.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

std::string help() {
  return "usage: tessel tune-op OP --shape A,B,C[,...] [options]\n"
         "\n"
         "Tunes one operator and prints the best program found.\n"
         "\n"
         "options:\n"
         "  --shape A,B,...     the operator's shape (see the list below)\n" +
         targetHelp() +
         "  --layout nchw|nhwc  storage of image ops (convolutions, pools); shapes stay\n"
         "                      N,C,H,W either way (default: nhwc)\n"
         "  --trials N          programs to measure (default 64)\n" +
         searchHelp() + costModelHelp() +
         "  --seed S            random seed (default 1)\n"
         "  --batch N           programs built and measured per round (default 64)\n"
         "  --population N      evolutionary population (default 2048)\n"
         "  --timeout SECONDS   per-program run time limit (default 10)\n" +
         cacheFlushHelp(measure::CacheState::Warm) +
         "  --jobs N            parallel compiler processes (default: cores)\n" + measureHelp() +
         "  --db FILE           keep every record in this SQLite database (default:\n"
         "                      $TESSEL_DB, else ~/.local/share/tessel/tessel.db)\n"
         "  --resume            continue the task's last session (interrupted, or finished\n"
         "                      with fewer trials) until it has --trials records; stored\n"
         "                      programs are never measured again\n"
         "  --no-db             keep nothing\n"
         "  --compare           also time oneDNN, OpenBLAS and LibTorch on the op, in this process\n"
         "                      (cuBLAS and cuDNN for a cuda target)\n"
         "  --show-code         print the best program's C++\n"
         "  --json              print one JSON object on stdout (progress stays on stderr)\n"
         "  --quiet             no progress on stderr\n"
         "\n"
         "Ctrl-C or SIGTERM drops the round in flight, marks the session stopped and\n"
         "exits 130 or 143; --resume continues it.\n"
         "\n"
         "example:\n"
         "  tessel tune-op matmul --shape 512,512,512 --trials 200 --compare\n"
         "  tessel tune-op matmul --shape 256,256,256 --target \"cpu -arch=x86-64-v2 -threads=1\"\n"
         "\n"
         "ops and their shapes:\n";
}

}  // namespace

std::string executableFolder() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

std::string siblingExecutable(const std::string& name) {
  if (const char* env = std::getenv("TESSEL_WORKER"); env && *env && name == "tessel-worker") return env;
  if (const std::string folder = executableFolder(); !folder.empty()) {
    std::filesystem::path p = std::filesystem::path(folder) / name;
    if (std::filesystem::exists(p)) return p.string();
  }
  return name;  // from PATH
}

OptionSpec tuneOpOptions() {
  return {{"shape", "target", "arch", "layout", "trials", "search", "cost-model", "cost-model-file", "seed", "batch",
           "timeout", "jobs", "db", "population", "cache-flush", "measure"},
          {"json", "help", "compare", "show-code", "resume", "no-db", "quiet"}};
}

std::string tuneOpHelp() {
  std::string text = help();
  char line[256];
  for (const auto& op : te::tunableOps()) {
    std::snprintf(line, sizeof line, "  %-18s %s\n", op.name.c_str(), op.shapeHelp.c_str());
    text += line;
  }
  return text;
}

namespace {

// The peers' times as the report shows them, whichever backend's they are.
struct PeerReport {
  struct Row {
    std::string name;  // as printed: "oneDNN"
    std::string key;   // as in notes and JSON: "onednn"
    std::optional<double> seconds;
  };
  std::vector<Row> rows;
  std::map<std::string, std::string> notes, disturbed;
};

// The target's peers on the op, timed with the rule of Tessel's worker: the
// same cache state, and on the CPU the target's pinned OpenMP threads.
PeerReport measurePeers(const std::string& op, const std::vector<int64_t>& shape, const target::Target& target,
                        measure::CacheState cacheState) {
  if (!target.isCpu()) {
    baseline::CudaBaselineResult g = baseline::measureCudaBaselines(op, shape, cacheState);
    return {{{"cuBLAS", "cublas", g.cublasSeconds}, {"cuDNN", "cudnn", g.cudnnSeconds}}, g.notes, g.disturbed};
  }
  baseline::BaselineResult b = baseline::measureBaselines(op, shape, target.effectiveThreads(), cacheState);
  return {{{"oneDNN", "onednn", b.onednnSeconds},
           {"OpenBLAS", "openblas", b.openblasSeconds},
           {"LibTorch", "libtorch", b.libtorchSeconds}},
          b.notes,
          b.disturbed};
}

}  // namespace

int tuneOpCommand(const std::vector<std::string>& argv) {
  Args args(argv, tuneOpOptions());
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "missing OP (try --help)"
                                               : "expected one OP, got '" + args.positional()[1] + "' too");
  if (!args.has("shape")) throw UsageError("missing --shape");
  if (args.has("no-db") && (args.has("db") || args.has("resume")))
    throw UsageError("--no-db cannot be combined with --db or --resume");
  std::string op = args.positional()[0];
  std::vector<int64_t> shape = parseShape(args.get("shape"));
  const bool quietFlag = args.has("quiet");
  const MeasureChoice measured = measureOption(args, quietFlag);
  const std::string target = targetOption(args, true, measured.local());
  const std::string search = searchOption(args);
  std::string costModel = costModelOption(args);
  const std::shared_ptr<cost::CostModel> pretrained = costModelFileOption(args, &costModel);
  task::SearchTask task;
  try {
    task = task::makeOperatorTask(op, shape, target, args.get("layout", ""));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  const target::Target parsedTarget = target::parseTarget(target);
  search::TuneOptions o = search::tuneOptionsFor(parsedTarget);
  o.trials = int(args.getInt("trials", 64, 1, tuning::kMaxTrials));
  o.batchSize = int(args.getInt("batch", tuning::kDefaultBatch, 1, tuning::kMaxBatch));
  o.costModel = costModel;
  o.sharedCostModel = pretrained;
  o.seed = uint64_t(args.getInt("seed", 1, 0, tuning::kMaxSeed));
  o.search = search;
  o.evolution.population =
      int(args.getInt("population", tuning::kDefaultPopulation, tuning::kMinPopulation, tuning::kMaxPopulation));
  o.measurer.run.workerPath = siblingExecutable("tessel-worker");
  o.measurer.run.timeoutSeconds =
      double(args.getInt("timeout", tuning::kDefaultTimeoutSeconds, 1, tuning::kMaxTimeoutSeconds));
  o.measurer.run.seed = unsigned(o.seed);
  o.measurer.run.cacheState = cacheFlushOption(args, measure::CacheState::Warm);
  o.measurer.build.jobs = int(args.getInt("jobs", cores, 1, tuning::kMaxJobs));
  o.makeMeasurer = measured.factory;
  const bool json = args.has("json"), quiet = args.has("quiet");
  const bool lines = !json && !quiet;  // plain progress lines where no bar is drawn
  InterruptGuard interrupt;
  o.cancel = interrupt.flag();

  // The database is opened before any tuning: a bad file fails fast.
  std::unique_ptr<store::Database> db;
  std::optional<tuning::TuningRecorder> recorder;
  if (!args.has("no-db")) {
    db = store::Database::open(args.get("db", store::defaultDatabasePath()), store::OpenMode::ReadWrite);
    nlohmann::json config = {{"command", "tune-op"},
                             {"op", op},
                             {"shape", shape},
                             {"target", target},
                             {"layout", task.layout},
                             {"trials", o.trials},
                             {"search", search},
                             {"cost_model", search == "random" ? "none" : costModel},
                             {"seed", o.seed},
                             {"batch", o.batchSize},
                             {"population", o.evolution.population},
                             {"cache_flush", measure::cacheStateName(o.measurer.run.cacheState)}};
    if (!measured.local()) config["measure"] = measured.where;
    recorder.emplace(*db, task, config.dump(), o.trials, args.has("resume"));
    recorder->attach(o);
    if (recorder->damagedRecords() && !quiet)
      std::fprintf(stderr,
                   "warning: skipped %zu stored records of this task whose steps do not replay on it (damaged, or "
                   "of another definition): they are not learned from\n",
                   recorder->damagedRecords());
    if (recorder->resumed() && recorder->previousTrials() >= size_t(o.trials) && !quiet)
      std::fprintf(stderr,
                   "session %lld already has %zu trials of the %d asked: nothing left to tune (give a larger --trials "
                   "to go on)\n",
                   (long long)recorder->sessionId(), recorder->previousTrials(), o.trials);
    if (lines) {
      if (recorder->resumed())
        std::fprintf(stderr, "resuming session %lld in %s: %zu trials done\n", (long long)recorder->sessionId(),
                     db->path().c_str(), recorder->previousTrials());
      else
        std::fprintf(stderr, "%ssession %lld in %s\n", args.has("resume") ? "no earlier session: new " : "",
                     (long long)recorder->sessionId(), db->path().c_str());
      if (recorder->knownRecords())
        std::fprintf(stderr, "learning from %zu stored records of this task\n", recorder->knownRecords());
    }
  }
  if (lines)
    std::fprintf(stderr, "tuning %s (%s) %s: %.3f GFLOP, %d trials, %s search\n", op.c_str(), args.get("shape").c_str(),
                 target.c_str(), task.flops / 1e9, o.trials, search.c_str());
  ProgressBar bar(o.trials, !quiet);
  o.onBatch = [&](int trials, double best) {
    char text[96] = "";
    if (best > 0) std::snprintf(text, sizeof text, "%.4f ms (%.2f GFLOP/s)", best * 1e3, task.flops / best / 1e9);
    if (bar.shown())
      bar.update(trials, text);
    else if (lines)
      std::fprintf(stderr, "  %5d trials  best %s\n", trials, best > 0 ? text : "-- no valid program yet");
  };
  search::TuneResult r;
  try {
    r = search::tuneTask(task, o);
  } catch (const std::exception& e) {
    // A signal during the first round's reference build ends it with an exception.
    if (!interrupt.signal()) {
      if (recorder) recorder->fail(e.what());
      throw;
    }
  }
  bar.finish();
  if (interrupt.signal()) {
    if (recorder) recorder->stop();
    std::fprintf(stderr, "interrupted by %s: the round in flight was dropped; %d trials kept", interrupt.signalName(),
                 std::max(r.trials, int(recorder ? recorder->previousTrials() : 0)));
    if (recorder)
      std::fprintf(stderr,
                   " in session %lld of %s (marked stopped)\ncontinue with: tessel tune-op %s --shape %s%s --resume "
                   "--db %s --trials %d\n",
                   (long long)recorder->sessionId(), db->path().c_str(), op.c_str(), args.get("shape").c_str(),
                   targetArgument(target).c_str(), db->path().c_str(), o.trials);
    else
      std::fprintf(stderr, " (--no-db: nothing stored)\n");
    return interrupt.exitCode();
  }
  if (pretrained) r.costModelBlob = pretrained->save();  // fine-tuned here: kept as a tuning's own model is
  if (recorder) recorder->finish(r);

  // The peers run after the tuning, in this process, with the worker's timing rule.
  std::optional<PeerReport> peers;
  if (args.has("compare")) peers = measurePeers(op, shape, parsedTarget, o.measurer.run.cacheState);
  // A busy machine during the tuning shows in the best program's repeats too.
  std::map<std::string, std::string> disturbed;
  if (peers) disturbed = peers->disturbed;
  for (const auto& rec : r.records)
    if (rec.result.ok() && rec.result.medianCost() == r.bestSeconds && rec.result.minCost() > 0 &&
        rec.result.medianCost() > baseline::kDisturbedSpread * rec.result.minCost()) {
      char why[160];
      std::snprintf(why, sizeof why, "the best program's repeats spread to %.2fx their fastest",
                    rec.result.medianCost() / rec.result.minCost());
      disturbed["tessel"] = why;
    }

  double bestMs = r.bestSeconds * 1e3;
  double gflops = r.bestSeconds > 0 ? task.flops / r.bestSeconds / 1e9 : 0;
  std::map<std::string, int> errors;
  for (const auto& rec : r.records)
    if (!rec.result.ok()) errors[measure::errorName(rec.result.error)]++;
  if (json) {
    nlohmann::json j;
    j["op"] = op;
    j["shape"] = shape;
    j["target"] = target;
    if (!task.layout.empty()) j["layout"] = task.layout;
    j["workload_key"] = task.key;
    if (db) {
      j["db"] = db->path();
      j["session"] = recorder->sessionId();
      j["resumed"] = recorder->resumed();
    }
    j["flops"] = task.flops;
    j["trials"] = r.trials;
    j["valid_trials"] = r.validTrials;
    j["exhausted"] = r.exhausted;
    j["best_ms"] = bestMs;
    j["best_gflops"] = gflops;
    j["correct"] = r.validTrials > 0;
    j["search"] = search;
    j["cost_model"] = search == "random" ? "none" : costModel;
    j["search_seconds"] = r.searchSeconds;
    j["predictions"] = r.predictions;
    j["seconds"] = r.wallSeconds;
    j["errors"] = errors;
    if (measured.fleetStats) {
      j["measure"] = measured.where;
      j["fleet"] = measured.fleetStats();
    }
    j["best_steps"] = nlohmann::json::parse(schedule::serializeSteps(r.bestSteps));
    if (peers) {
      nlohmann::json b = nlohmann::json::object();
      for (const PeerReport::Row& row : peers->rows)
        if (row.seconds) b[row.key + "_ms"] = *row.seconds * 1e3;
      if (!peers->notes.empty()) b["notes"] = peers->notes;
      j["baselines"] = b;
      j["cache_flush"] = measure::cacheStateName(o.measurer.run.cacheState);
      j["disturbed"] = !disturbed.empty();
      if (!disturbed.empty()) j["disturbance"] = disturbed;
    }
    nlohmann::json curve = nlohmann::json::array();
    for (auto [t, s] : r.curve)
      curve.push_back({t, s * 1e3});
    j["curve"] = curve;
    std::puts(j.dump().c_str());
  } else {
    std::printf("%s %s on %s: %d trials, %d valid, %.1f s\n", op.c_str(), args.get("shape").c_str(), target.c_str(),
                r.trials, r.validTrials, r.wallSeconds);
    for (const auto& [what, n] : errors)
      std::printf("  %d x %s\n", n, what.c_str());
    if (r.exhausted) std::printf("search space exhausted: every program it holds was measured\n");
    if (r.validTrials) {
      std::printf("best: %.4f ms, %.2f GFLOP/s (checked against the naive program)\n", bestMs, gflops);
      std::printf("steps: %s\n", schedule::serializeSteps(r.bestSteps).c_str());
      if (peers) {
        for (const PeerReport::Row& row : peers->rows) {
          const char* name = row.name.c_str();
          if (row.seconds)
            std::printf("  %-9s %.4f ms, %.2f GFLOP/s (tessel's speed / %s's: %.2f)\n", name, *row.seconds * 1e3,
                        task.flops / *row.seconds / 1e9, name, *row.seconds / r.bestSeconds);
          else
            std::printf("  %-9s -- %s\n", name, peers->notes.count(row.key) ? peers->notes.at(row.key).c_str() : "");
        }
        for (const auto& [who, why] : disturbed)
          std::printf("  disturbed (%s): %s; the ratios are not speed-ups: compare again on a quiet machine\n",
                      who.c_str(), why.c_str());
      }
      if (args.has("show-code")) std::printf("\n%s", r.bestSource.c_str());
    } else {
      std::printf("no valid program found\n");
    }
  }
  return r.validTrials > 0 ? 0 : 1;
}

}  // namespace tessel::cli
