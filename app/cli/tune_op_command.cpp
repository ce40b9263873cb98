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
#include "target/target.h"
#include "te/operators.h"
#include "tuning/operator_tuning.h"
#include "tuning/tuning_config.h"
#include "tuning/tuning_recorder.h"
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

namespace {

// What the command line asks, as the tuning service takes it.
tuning::OperatorTuningConfig tuneOpConfig(const Args& args, const MeasureChoice& measured) {
  tuning::OperatorTuningConfig c;
  c.op = args.positional()[0];
  c.shape = parseShape(args.get("shape"));
  c.target = targetOption(args, true, measured.local());
  c.layout = args.get("layout", "");
  search::TuneOptions& o = c.options;
  o = search::tuneOptionsFor(c.target);
  o.search = searchOption(args);
  o.costModel = costModelOption(args);
  o.sharedCostModel = costModelFileOption(args, &o.costModel);
  o.trials = int(args.getInt("trials", 64, 1, tuning::kMaxTrials));
  o.batchSize = int(args.getInt("batch", tuning::kDefaultBatch, 1, tuning::kMaxBatch));
  o.seed = uint64_t(args.getInt("seed", 1, 0, tuning::kMaxSeed));
  o.evolution.population =
      int(args.getInt("population", tuning::kDefaultPopulation, tuning::kMinPopulation, tuning::kMaxPopulation));
  o.measurer.run.workerPath = siblingExecutable("tessel-worker");
  o.measurer.run.timeoutSeconds =
      double(args.getInt("timeout", tuning::kDefaultTimeoutSeconds, 1, tuning::kMaxTimeoutSeconds));
  o.measurer.run.seed = unsigned(o.seed);
  o.measurer.run.cacheState = cacheFlushOption(args, measure::CacheState::Warm);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  o.measurer.build.jobs = int(args.getInt("jobs", cores, 1, tuning::kMaxJobs));
  o.makeMeasurer = measured.factory;
  if (!measured.local()) c.measuredOn = measured.where;
  if (!args.has("no-db")) c.database = args.get("db", store::defaultDatabasePath());
  c.resume = args.has("resume");
  return c;
}

// What the session starts from, on stderr: its stored records, and whether
// it resumes one.
void describeSession(const tuning::OperatorTuning& t, int trials, bool resumeAsked, bool quiet, bool lines) {
  const tuning::TuningRecorder* rec = t.recorder();
  if (!rec) return;
  if (rec->damagedRecords() && !quiet)
    std::fprintf(stderr,
                 "warning: skipped %zu stored records of this task whose steps do not replay on it (damaged, or "
                 "of another definition): they are not learned from\n",
                 rec->damagedRecords());
  if (rec->resumed() && rec->previousTrials() >= size_t(trials) && !quiet)
    std::fprintf(stderr,
                 "session %lld already has %zu trials of the %d asked: nothing left to tune (give a larger --trials "
                 "to go on)\n",
                 (long long)rec->sessionId(), rec->previousTrials(), trials);
  if (!lines) return;
  const char* path = t.database()->path().c_str();
  if (rec->resumed())
    std::fprintf(stderr, "resuming session %lld in %s: %zu trials done\n", (long long)rec->sessionId(), path,
                 rec->previousTrials());
  else
    std::fprintf(stderr, "%ssession %lld in %s\n", resumeAsked ? "no earlier session: new " : "",
                 (long long)rec->sessionId(), path);
  if (rec->knownRecords()) std::fprintf(stderr, "learning from %zu stored records of this task\n", rec->knownRecords());
}

// A signal ended the tuning: what was kept, and how to go on.
int reportInterrupted(const tuning::OperatorTuning& t, const search::TuneResult& r, const Args& args,
                      const target::Target& target, const InterruptGuard& interrupt) {
  const tuning::TuningRecorder* rec = t.recorder();
  std::fprintf(stderr, "interrupted by %s: the round in flight was dropped; %d trials kept", interrupt.signalName(),
               std::max(r.trials, int(rec ? rec->previousTrials() : 0)));
  if (rec)
    std::fprintf(stderr,
                 " in session %lld of %s (marked stopped)\ncontinue with: tessel tune-op %s --shape %s%s --resume "
                 "--db %s --trials %d\n",
                 (long long)rec->sessionId(), t.database()->path().c_str(), t.task().op.c_str(),
                 args.get("shape").c_str(), targetArgument(target).c_str(), t.database()->path().c_str(),
                 int(args.getInt("trials", 64, 1, tuning::kMaxTrials)));
  else
    std::fprintf(stderr, " (--no-db: nothing stored)\n");
  return interrupt.exitCode();
}

// Who was disturbed while timing: the peers, and the best program where its
// repeats spread wide (a busy machine during the tuning).
std::map<std::string, std::string> disturbances(const search::TuneResult& r, const std::optional<PeerReport>& peers) {
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
  return disturbed;
}

// What a finished tuning reports: the one JSON object of --json, or the text.
struct TuneOpReport {
  const tuning::OperatorTuning& tuning;
  const tuning::OperatorTuningConfig& config;
  const search::TuneResult& result;
  const std::optional<PeerReport>& peers;
  std::map<std::string, std::string> disturbed;
  std::map<std::string, int> errors;  // by error name
  std::string shapeText;
};

void printJson(const TuneOpReport& rep, const MeasureChoice& measured) {
  const task::SearchTask& task = rep.tuning.task();
  const search::TuneResult& r = rep.result;
  const search::TuneOptions& o = rep.config.options;
  nlohmann::json j;
  j["op"] = task.op;
  j["shape"] = rep.config.shape;
  j["target"] = rep.config.target.str();
  if (!task.layout.empty()) j["layout"] = task.layout;
  j["workload_key"] = task.key;
  if (const tuning::TuningRecorder* rec = rep.tuning.recorder()) {
    j["db"] = rep.tuning.database()->path();
    j["session"] = rec->sessionId();
    j["resumed"] = rec->resumed();
  }
  j["flops"] = task.flops;
  j["trials"] = r.trials;
  j["valid_trials"] = r.validTrials;
  j["exhausted"] = r.exhausted;
  j["best_ms"] = r.bestSeconds * 1e3;
  j["best_gflops"] = r.bestSeconds > 0 ? task.flops / r.bestSeconds / 1e9 : 0;
  j["correct"] = r.validTrials > 0;
  j["search"] = o.search;
  j["cost_model"] = o.search == "random" ? "none" : o.costModel;
  j["search_seconds"] = r.searchSeconds;
  j["predictions"] = r.predictions;
  j["seconds"] = r.wallSeconds;
  j["errors"] = rep.errors;
  if (measured.fleetStats) {
    j["measure"] = measured.where;
    j["fleet"] = measured.fleetStats();
  }
  j["best_steps"] = nlohmann::json::parse(schedule::serializeSteps(r.bestSteps));
  if (rep.peers) {
    nlohmann::json b = nlohmann::json::object();
    for (const PeerReport::Row& row : rep.peers->rows)
      if (row.seconds) b[row.key + "_ms"] = *row.seconds * 1e3;
    if (!rep.peers->notes.empty()) b["notes"] = rep.peers->notes;
    j["baselines"] = b;
    j["cache_flush"] = measure::cacheStateName(o.measurer.run.cacheState);
    j["disturbed"] = !rep.disturbed.empty();
    if (!rep.disturbed.empty()) j["disturbance"] = rep.disturbed;
  }
  nlohmann::json curve = nlohmann::json::array();
  for (auto [t, s] : r.curve)
    curve.push_back({t, s * 1e3});
  j["curve"] = curve;
  std::puts(j.dump().c_str());
}

void printText(const TuneOpReport& rep, bool showCode) {
  const task::SearchTask& task = rep.tuning.task();
  const search::TuneResult& r = rep.result;
  std::printf("%s %s on %s: %d trials, %d valid, %.1f s\n", task.op.c_str(), rep.shapeText.c_str(),
              rep.config.target.str().c_str(), r.trials, r.validTrials, r.wallSeconds);
  for (const auto& [what, n] : rep.errors)
    std::printf("  %d x %s\n", n, what.c_str());
  if (r.exhausted) std::printf("search space exhausted: every program it holds was measured\n");
  if (!r.validTrials) {
    std::printf("no valid program found\n");
    return;
  }
  std::printf("best: %.4f ms, %.2f GFLOP/s (checked against the naive program)\n", r.bestSeconds * 1e3,
              task.flops / r.bestSeconds / 1e9);
  std::printf("steps: %s\n", schedule::serializeSteps(r.bestSteps).c_str());
  if (rep.peers) {
    for (const PeerReport::Row& row : rep.peers->rows) {
      const char* name = row.name.c_str();
      if (row.seconds)
        std::printf("  %-9s %.4f ms, %.2f GFLOP/s (tessel's speed / %s's: %.2f)\n", name, *row.seconds * 1e3,
                    task.flops / *row.seconds / 1e9, name, *row.seconds / r.bestSeconds);
      else
        std::printf("  %-9s -- %s\n", name,
                    rep.peers->notes.count(row.key) ? rep.peers->notes.at(row.key).c_str() : "");
    }
    for (const auto& [who, why] : rep.disturbed)
      std::printf("  disturbed (%s): %s; the ratios are not speed-ups: compare again on a quiet machine\n", who.c_str(),
                  why.c_str());
  }
  if (showCode) std::printf("\n%s", r.bestSource.c_str());
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
  const bool json = args.has("json"), quiet = args.has("quiet");
  const bool lines = !json && !quiet;  // plain progress lines where no bar is drawn
  const MeasureChoice measured = measureOption(args, quiet);
  tuning::OperatorTuningConfig config = tuneOpConfig(args, measured);
  InterruptGuard interrupt;
  config.options.cancel = interrupt.flag();
  const int trials = config.options.trials;
  // Progress after each round, on the bar drawn once the session is described.
  ProgressBar* bar = nullptr;
  double flops = 0;
  config.options.onBatch = [&](int done, double best) {
    char text[96] = "";
    if (best > 0) std::snprintf(text, sizeof text, "%.4f ms (%.2f GFLOP/s)", best * 1e3, flops / best / 1e9);
    if (bar && bar->shown())
      bar->update(done, text);
    else if (lines)
      std::fprintf(stderr, "  %5d trials  best %s\n", done, best > 0 ? text : "-- no valid program yet");
  };
  std::unique_ptr<tuning::OperatorTuning> tuning;
  try {
    // The database is opened before any tuning: a bad file fails fast.
    tuning = std::make_unique<tuning::OperatorTuning>(config);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const task::SearchTask& task = tuning->task();
  describeSession(*tuning, trials, args.has("resume"), quiet, lines);
  if (lines)
    std::fprintf(stderr, "tuning %s (%s) %s: %.3f GFLOP, %d trials, %s search\n", task.op.c_str(),
                 args.get("shape").c_str(), config.target.str().c_str(), task.flops / 1e9, trials,
                 config.options.search.c_str());
  ProgressBar progress(trials, !quiet);
  bar = &progress;
  flops = task.flops;
  const tuning::OperatorTuningResult run = tuning->run();
  progress.finish();
  if (run.stopped) return reportInterrupted(*tuning, run.tune, args, config.target, interrupt);

  // The peers run after the tuning, in this process, with the worker's timing rule.
  std::optional<PeerReport> peers;
  if (args.has("compare"))
    peers = measurePeers(task.op, config.shape, config.target, config.options.measurer.run.cacheState);
  TuneOpReport report{*tuning, config, run.tune, peers, disturbances(run.tune, peers), {}, args.get("shape")};
  for (const auto& rec : run.tune.records)
    if (!rec.result.ok()) report.errors[measure::errorName(rec.result.error)]++;
  if (json)
    printJson(report, measured);
  else
    printText(report, args.has("show-code"));
  return run.tune.validTrials > 0 ? 0 : 1;
}

}  // namespace tessel::cli
