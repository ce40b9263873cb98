// tessel tune MODEL: every task of a model under Ansor's task scheduler.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "interrupt.h"
#include "knowledge/knowledge_base.h"
#include "measure_option.h"
#include "progress_bar.h"
#include "support/input_file.h"
#include "target/target.h"
#include "tuning/model_tuning.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

std::string help() {
  return "usage: tessel tune MODEL [options]\n"
         "\n"
         "Tunes every task of a model (a zoo name, .onnx or .pt file), sharing the trials\n"
         "between tasks with Ansor's gradient task scheduler, and reports per task the\n"
         "trials, best latency and share of the estimated end-to-end latency\n"
         "(sum of weight x best latency).\n"
         "\n"
         "options:\n"
         "  --trials N          programs to measure for the whole model (default 1000;\n"
         "                      0: each task's first round only, of --transfer programs)\n"
         "  --minutes M         a wall-clock budget (decimals allowed): no round starts\n"
         "                      after it; with --trials, whichever ends first\n"
         "  --cold              start from nothing: no knowledge base, no transfer from\n"
         "                      the database's other tasks (for comparisons)\n"
         "  --knowledge FILE    the knowledge base to start from (default: the one\n"
         "                      shipped for the target's class, e.g. cpu-avx512.tkb);\n"
         "                      without --cost-model, its pre-trained model guides the search\n"
         "  --transfer N        transferred programs each task's first round measures\n"
         "                      (default 8)\n" +
         targetHelp() + "  --fusion dp|rule|none  operator fusion: AutoGTCO's DP (default), TVM's rules, none\n" +
         searchHelp() + costModelHelp() +
         "  --batch N           programs per round (default 64)\n"
         "  --population N      evolutionary population (default 2048)\n"
         "  --seed S            random seed (default 1)\n"
         "  --timeout SECONDS   per-program run time limit (default 10)\n"
         "  --jobs N            parallel compiler processes (default: cores)\n" +
         cacheFlushHelp(measure::CacheState::Model) + measureHelp() +
         "  --db FILE           the tuning database (default $TESSEL_DB, else\n"
         "                      ~/.local/share/tessel/tessel.db)\n"
         "  --resume            continue the model's last session (interrupted, or finished\n"
         "                      with fewer trials) until it has --trials\n"
         "  --no-db             keep nothing\n"
         "  --json              one JSON object on stdout (progress stays on stderr)\n"
         "  --quiet             no progress on stderr\n"
         "  --input-shapes A,B;C,D  the shapes of the model's inputs: needed for a\n"
         "                      TorchScript model, and to size an ONNX model's symbolic\n"
         "                      dimensions\n"
         "\n"
         "Ctrl-C or SIGTERM drops the round in flight, marks the session stopped and\n"
         "exits 130 or 143; --resume continues it. On a terminal a progress bar shows\n"
         "trials, elapsed time, trials/s, ETA and the best end-to-end estimate.\n"
         "\n"
         "example:\n"
         "  tessel tune resnet18 --trials 2000 --db resnet18.db\n";
}

std::string formatMs(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f ms", seconds * 1e3);
  return text;
}

// The command line as the tuning service's config.
tuning::TuningConfig configOf(const Args& args) {
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "missing MODEL (try --help)"
                                               : "expected one MODEL, got '" + args.positional()[1] + "' too");
  tuning::TuningConfig c;
  c.command = "tune";
  c.model = args.positional()[0];
  c.inputShapes = args.get("input-shapes");
  const MeasureChoice measured = measureOption(args, args.has("quiet"));
  c.measure = measured.where;
  c.makeMeasurer = measured.factory;
  c.target = targetOption(args, true, measured.local());
  c.fusion = args.getChoice("fusion", "dp", {"dp", "rule", "none"});
  c.minutes = args.getDouble("minutes", 0, 0, 7 * 24 * 60);
  // A time budget alone: as many trials as it takes.
  const int trialsDefault = args.has("minutes") ? tuning::kMaxTrials : tuning::kDefaultTrials;
  c.trials = int(args.getInt("trials", trialsDefault, 0, tuning::kMaxTrials));
  c.cold = args.has("cold");
  if (c.cold && (args.has("knowledge") || args.has("transfer")))
    throw UsageError("--cold starts from nothing: it cannot be combined with --knowledge or --transfer");
  c.transfer = int(args.getInt("transfer", tuning::kDefaultTransfer, 1, tuning::kMaxBatch));
  if (args.has("knowledge")) {
    c.knowledge = args.get("knowledge");
    if (const std::string why = support::notARegularFile(c.knowledge); !why.empty())
      throw UsageError("--knowledge " + c.knowledge + " " + why);
  } else if (!c.cold) {
    c.knowledge = knowledge::shippedKnowledgeBase(c.target, executableFolder());
  }
  c.search = searchOption(args);
  // Named or not: without --cost-model a warm tuning starts from the
  // knowledge base's pre-trained model (else the default one).
  c.costModel = args.has("cost-model") ? costModelOption(args) : "";
  if (args.has("cost-model-file")) {
    costModelFileOption(args, &c.costModel);  // checked here: a usage error, not a failure
    c.costModelFile = args.get("cost-model-file");
  }
  c.seed = uint64_t(args.getInt("seed", 1, 0, tuning::kMaxSeed));
  c.batch = int(args.getInt("batch", tuning::kDefaultBatch, 1, tuning::kMaxBatch));
  c.population =
      int(args.getInt("population", tuning::kDefaultPopulation, tuning::kMinPopulation, tuning::kMaxPopulation));
  c.timeoutSeconds = double(args.getInt("timeout", tuning::kDefaultTimeoutSeconds, 1, tuning::kMaxTimeoutSeconds));
  c.jobs = int(args.getInt("jobs", 0, 1, tuning::kMaxJobs));
  // Timed as inside the model: weights from memory, activations from the
  // shared cache (measure/cache_state.h).
  c.cacheState = cacheFlushOption(args, measure::CacheState::Model);
  c.workerPath = siblingExecutable("tessel-worker");
  return c;
}

}  // namespace

OptionSpec tuneOptions() {
  return {{"trials", "minutes", "knowledge", "transfer", "target", "arch", "fusion", "search", "cost-model",
           "cost-model-file", "batch", "population", "seed", "timeout", "db", "jobs", "input-shapes", "cache-flush",
           "measure"},
          {"json", "help", "resume", "no-db", "quiet", "cold"}};
}

std::string tuneHelp() {
  return help();
}

namespace {

// Opens (or resumes) the session before anything is tuned, and says which.
void openTuneSession(tuning::ModelTuning& tuning, const Args& args, bool lines, bool quiet) {
  const tuning::TuningConfig& config = tuning.config();
  try {
    tuning.openSession(args.get("db", store::defaultDatabasePath()),
                       args.has("resume") ? tuning::kLastSession : tuning::kNewSession);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (lines)
    std::fprintf(stderr, "%s session %lld in %s\n", tuning.resumed() ? "resuming" : "new",
                 (long long)tuning.sessionId(), tuning.databasePath().c_str());
  if (tuning.resumed() && tuning.earlierTrials() >= config.trials && !quiet)
    std::fprintf(stderr,
                 "session %lld already has %lld trials of the %d asked: nothing left to tune (give a larger "
                 "--trials to go on)\n",
                 (long long)tuning.sessionId(), (long long)tuning.earlierTrials(), config.trials);
}

// Progress on the bar (or in plain lines): the warm start, each round, each
// task whose space ran out.
tuning::TuningEvents progressEvents(const tuning::ModelTuning& tuning, ProgressBar& bar, bool lines, bool quiet) {
  // The events outlive this function: they hold the tuning and the bar, which outlive the run.
  tuning::TuningEvents events;
  events.onWarmStart = [&tuning, &bar, quiet](const tuning::WarmStartSummary& w) {
    if (quiet) return;
    std::string text = w.text();
    if (w.warm && w.knowledge.empty())
      text += " (no knowledge base for " + knowledge::targetClass(tuning.config().target) + " targets in " +
              knowledge::knowledgeFolder(executableFolder()) + ")";
    if (bar.shown())
      bar.note(text);
    else
      std::fprintf(stderr, "%s\n", text.c_str());
  };
  events.onRound = [&tuning, &bar, lines](size_t i, const search::TuneResult& r, double estimate,
                                          const tuning::TuningProgress& p) {
    const bool known = std::isfinite(estimate);
    if (bar.shown())
      bar.update(p.sessionTrials, known ? formatMs(estimate) + " end-to-end" : "");
    else if (lines)
      std::fprintf(stderr, "  task %2zu %-40s %5d trials  best %9.4f ms   end-to-end estimate %s\n", i,
                   tuning.tasks()[i].task.op.c_str(), r.trials, r.bestSeconds * 1e3,
                   known ? formatMs(estimate).c_str() : "(not yet)");
  };
  events.onExhausted = [&tuning, &bar, lines](size_t i, const search::TuneResult& r) {
    char text[200];
    std::snprintf(text, sizeof text, "  task %2zu %-40s search space exhausted after %d programs: no more rounds", i,
                  tuning.tasks()[i].task.op.c_str(), r.trials);
    if (bar.shown())
      bar.note(text);
    else if (lines)
      std::fprintf(stderr, "%s\n", text);
  };
  return events;
}

// A signal ended the tuning: what was kept, and how to go on.
void reportInterrupted(const tuning::ModelTuning& tuning, const search::ModelTuneResult& r,
                       const InterruptGuard& interrupt) {
  const tuning::TuningConfig& config = tuning.config();
  std::fprintf(stderr, "interrupted by %s: the round in flight was dropped; %d trials kept", interrupt.signalName(),
               r.trials);
  if (tuning.hasSession())
    std::fprintf(stderr,
                 " in session %lld of %s (marked stopped)\ncontinue with: tessel tune %s%s --resume --db %s --trials "
                 "%d\n",
                 (long long)tuning.sessionId(), tuning.databasePath().c_str(), config.model.c_str(),
                 targetArgument(config.target).c_str(), tuning.databasePath().c_str(), config.trials);
  else
    std::fprintf(stderr, " (--no-db: nothing stored)\n");
}

// Each task's best, as JSON rows (and printed as a table unless --json).
nlohmann::json taskRows(const std::vector<search::ModelTask>& tasks, const search::ModelTuneResult& r, bool print) {
  double total = 0;
  for (size_t i = 0; i < tasks.size(); ++i)
    total += tasks[i].weight * r.tasks[i].bestSeconds;
  nlohmann::json rows = nlohmann::json::array();
  if (print) std::printf("%-48s %6s %7s %11s %9s %7s\n", "task", "weight", "trials", "best ms", "GFLOP/s", "share");
  for (size_t i = 0; i < tasks.size(); ++i) {
    const search::TuneResult& t = r.tasks[i];
    double ms = t.bestSeconds * 1e3;
    double gflops = t.bestSeconds > 0 ? tasks[i].task.flops / t.bestSeconds / 1e9 : 0;
    double share = total > 0 ? tasks[i].weight * t.bestSeconds / total : 0;
    rows.push_back({{"key", tasks[i].task.key},
                    {"name", tasks[i].task.op},
                    {"weight", tasks[i].weight},
                    {"trials", t.trials},
                    {"valid_trials", t.validTrials},
                    {"best_ms", t.validTrials ? nlohmann::json(ms) : nlohmann::json()},
                    {"gflops", gflops},
                    {"share", share},
                    {"exhausted", t.exhausted}});
    if (print)
      std::printf("%-48s %6.0f %7d %11.4f %9.2f %6.1f%%%s\n", tasks[i].task.key.c_str(), tasks[i].weight, t.trials, ms,
                  gflops, share * 100, t.exhausted ? "  (space exhausted)" : "");
  }
  return rows;
}

void printJson(const tuning::ModelTuning& tuning, const search::ModelTuneResult& r, nlohmann::json rows) {
  const tuning::TuningConfig& config = tuning.config();
  nlohmann::json j;
  j["model"] = tuning.model().name;
  j["target"] = config.target.str();
  j["fusion"] = config.fusion;
  j["trials"] = r.trials;
  j["warmup_batch"] = r.warmupBatch;
  j["warm_start"] = tuning.warmStart().toJson();
  j["time_up"] = r.timeUp;
  j["cache_flush"] = measure::cacheStateName(config.cacheState);
  j["tasks"] = std::move(rows);
  j["estimated_ms"] = std::isfinite(r.estimatedSeconds) ? nlohmann::json(r.estimatedSeconds * 1e3) : nlohmann::json();
  nlohmann::json curve = nlohmann::json::array();
  for (const auto& p : r.curve)
    curve.push_back(
        {p.trials, p.seconds, std::isfinite(p.estimate) ? nlohmann::json(p.estimate * 1e3) : nlohmann::json()});
  j["curve"] = curve;
  if (tuning.hasSession()) {
    j["db"] = tuning.databasePath();
    j["session"] = tuning.sessionId();
    j["resumed"] = tuning.resumed();
  }
  std::puts(j.dump().c_str());
}

}  // namespace

int tuneCommand(const std::vector<std::string>& argv) {
  Args args(argv, tuneOptions());
  if (args.has("no-db") && (args.has("db") || args.has("resume")))
    throw UsageError("--no-db cannot be combined with --db or --resume");
  tuning::ModelTuning tuning(configOf(args));
  const tuning::TuningConfig& config = tuning.config();
  const std::vector<search::ModelTask>& tasks = tuning.tasks();
  const bool json = args.has("json"), quiet = args.has("quiet");
  // Plain progress lines where no bar is drawn (a log, CI), unless --json or --quiet.
  const bool lines = !json && !quiet;
  // Checked before anything is written: a new session must give every task a program.
  if (args.has("no-db") && config.trials > 0 && config.trials < int(tasks.size()))
    throw UsageError(search::budgetMessage(config.trials, 0, int(tasks.size()), config.batch));
  InterruptGuard interrupt;
  if (!args.has("no-db")) openTuneSession(tuning, args, lines, quiet);
  ProgressBar bar(config.trials, !quiet);
  tuning::TuningEvents events = progressEvents(tuning, bar, lines, quiet);
  events.cancel = interrupt.flag();
  if (lines)
    std::fprintf(stderr, "tuning %s: %zu tasks (%s fusion), %d trials\n", tuning.model().name.c_str(), tasks.size(),
                 config.fusion.c_str(), config.trials);
  if (lines && !tuning.resumed() && config.trials > 0 && config.trials < int(tasks.size()) * config.batch)
    std::fprintf(stderr,
                 "%d trials for %zu tasks: warm-up rounds of %d programs (%d trials give each a full round of %d)\n",
                 config.trials, tasks.size(), std::min(config.batch, config.trials / int(tasks.size())),
                 int(tasks.size()) * config.batch, config.batch);
  search::ModelTuneResult r;
  try {
    r = tuning.run(events);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  bar.finish();
  if (tuning.damagedRecords() && !quiet)
    std::fprintf(stderr,
                 "warning: skipped %zu stored records whose steps do not replay on their task (damaged, or of another "
                 "definition): they were not learned from\n",
                 tuning.damagedRecords());
  if (interrupt.signal()) reportInterrupted(tuning, r, interrupt);
  nlohmann::json rows = taskRows(tasks, r, !json);
  const bool complete = std::isfinite(r.estimatedSeconds);
  if (json)
    printJson(tuning, r, std::move(rows));
  else if (complete)
    std::printf("estimated end-to-end latency: %.4f ms (sum of weight x best latency), %d trials%s\n",
                r.estimatedSeconds * 1e3, r.trials, r.timeUp ? " (the time budget ended it)" : "");
  else
    std::printf("some tasks have no valid program yet: give more --trials\n");
  if (interrupt.signal()) return interrupt.exitCode();
  return complete ? 0 : 1;
}

}  // namespace tessel::cli
