// tessel tune MODEL: every task of a model under Ansor's task scheduler.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "args.h"
#include "commands.h"
#include "fusion/fusion_plan.h"
#include "fusion/task_extraction.h"
#include "measure/cache_state.h"
#include "model_loader.h"
#include "search/task_scheduler.h"
#include "store/tuning_recorder.h"

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel tune MODEL [options]\n"
    "\n"
    "Tunes every task of a model (a zoo name, .onnx or .pt file), sharing the trials\n"
    "between tasks with Ansor's gradient task scheduler, and reports per task the\n"
    "trials, best latency and share of the estimated end-to-end latency\n"
    "(sum of weight x best latency).\n"
    "\n"
    "options:\n"
    "  --trials N          programs to measure for the whole model (default 1000)\n"
    "  --target cpu        target (cuda comes with its issue)\n"
    "  --fusion rule|dp|none  (default dp)\n"
    "  --search evolutionary|random|anneal, --cost-model xgb|random\n"
    "  --batch N           programs per round (default 64)\n"
    "  --population N      evolutionary population (default 2048)\n"
    "  --seed S            (default 1)\n"
    "  --timeout SECONDS   per-program run time limit (default 10)\n"
    "  --cache-flush model|on|off  where a kernel's data is at each timed call:\n"
    "                      model (default): as inside the model, weights in memory,\n"
    "                      activations in the shared cache; on: every buffer in\n"
    "                      memory (Ansor's flush); off: warm-cache loops\n"
    "  --db FILE           the tuning database (default $TESSEL_DB, else ~/.local/share/tessel/tessel.db)\n"
    "  --resume            continue the model's last session (interrupted, or finished\n"
    "                      with fewer trials) until it has --trials\n"
    "  --no-db             keep nothing\n"
    "  --json              one JSON object on stdout\n"
    "  --input-shapes A,B;C,D  shapes of a TorchScript model's inputs\n";

}  // namespace

int tuneCommand(const std::vector<std::string>& argv) {
  Args args(argv,
            {"trials", "target", "fusion", "search", "cost-model", "batch", "population", "seed", "timeout", "db",
             "jobs", "input-shapes", "cache-flush"},
            {"json", "help", "resume", "no-db"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args.has("no-db") && (args.has("db") || args.has("resume")))
    throw UsageError("--no-db cannot be combined with --db or --resume");
  const std::string target = args.get("target", "cpu");
  if (target == "cuda")
    throw std::runtime_error("the cuda target is not available yet: CUDA code generation comes in a later issue");
  if (target != "cpu") throw UsageError("unknown --target " + target + " (available: cpu)");
  const std::string search = args.get("search", "evolutionary");
  if (search != "random" && search != "evolutionary" && search != "anneal")
    throw UsageError("unknown --search " + search + " (available: evolutionary, random, anneal)");
#ifdef TESSEL_HAVE_XGBOOST
  const std::string costModel = args.get("cost-model", "xgb");
#else
  const std::string costModel = args.get("cost-model", "random");
#endif
  if (costModel != "xgb" && costModel != "random")
    throw UsageError("unknown --cost-model " + costModel + " (available: xgb, random)");

  PreparedModel prepared = prepareModel(args, target);
  const std::string& model = prepared.name;
  const std::string& fusionName = prepared.fusion;
  const std::vector<fusion::GraphTask>& graphTasks = prepared.tasks;
  std::vector<search::ModelTask> tasks;
  for (const auto& t : graphTasks)
    tasks.push_back({fusion::toSearchTask(t, target), double(t.weight), t.name});

  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  search::ModelTuneOptions o;
  o.trials = int(args.getInt("trials", 1000, 1, 100000000));
  search::TuneOptions& to = o.perTask;
  to.batchSize = int(args.getInt("batch", 64, 1, 4096));
  to.search = search;
  to.costModel = costModel;
  to.seed = uint64_t(args.getInt("seed", 1, 0, (1ll << 62)));
  to.evolution.population = int(args.getInt("population", 2048, 16, 1 << 20));
  to.hardware.cores = cores;
  to.measurer.run.workerPath = siblingExecutable("tessel-worker");
  to.measurer.run.timeoutSeconds = double(args.getInt("timeout", 10, 1, 3600));
  to.measurer.run.seed = unsigned(to.seed);
  // Timed as inside the model: weights from memory, activations from the
  // shared cache (measure/cache_state.h).
  to.measurer.run.cacheState =
      *measure::parseCacheState(args.getChoice("cache-flush", "model", {"model", "on", "off"}));
  to.measurer.build.jobs = int(args.getInt("jobs", cores, 1, 256));
  const bool json = args.has("json");
  // Checked before anything is written: a new session must give every task a program.
  if (!args.has("resume") && o.trials < int(tasks.size()))
    throw UsageError(search::budgetMessage(o.trials, 0, int(tasks.size()), to.batchSize));

  std::unique_ptr<store::Database> db;
  int64_t sessionId = 0;
  bool resumed = false;
  std::vector<std::unique_ptr<store::TuningRecorder>> recorders(tasks.size());
  if (!args.has("no-db")) {
    db = store::Database::open(args.get("db", store::defaultDatabasePath()), store::OpenMode::ReadWrite);
    int64_t modelId = db->ensureModel(model, model);
    for (size_t i = 0; i < tasks.size(); ++i)
      db->setModelTask(modelId, db->ensureTask(store::taskRowOf(tasks[i].task)), tasks[i].weight);
    if (args.has("resume"))
      if (auto s = db->lastSession(0, modelId)) {
        sessionId = s->id;
        resumed = true;
        db->reopenSession(sessionId, o.trials);
      }
    if (!resumed) {
      nlohmann::json config = {{"command", "tune"},
                               {"model", model},
                               {"target", target},
                               {"fusion", fusionName},
                               {"trials", o.trials},
                               {"search", search},
                               {"cost_model", costModel},
                               {"seed", to.seed},
                               {"batch", to.batchSize},
                               {"tasks", tasks.size()},
                               {"cache_flush", measure::cacheStateName(to.measurer.run.cacheState)}};
      sessionId = db->beginSession("model", 0, modelId, config.dump(), o.trials);
    }
    o.prepareTask = [&](size_t i, search::TuneOptions& t) {
      recorders[i] = std::make_unique<store::TuningRecorder>(*db, tasks[i].task, sessionId);
      recorders[i]->attach(t);
    };
    if (!json)
      std::fprintf(stderr, "%s session %lld in %s\n", resumed ? "resuming" : "new", (long long)sessionId,
                   db->path().c_str());
  }
  if (!json) {
    std::fprintf(stderr, "tuning %s: %zu tasks (%s fusion), %d trials\n", model.c_str(), tasks.size(),
                 fusionName.c_str(), o.trials);
    o.onRound = [&](size_t i, const search::TuneResult& r, double estimate) {
      std::fprintf(stderr, "  task %2zu %-40s %5d trials  best %9.4f ms   end-to-end estimate %s\n", i,
                   tasks[i].task.op.c_str(), r.trials, r.bestSeconds * 1e3,
                   std::isfinite(estimate) ? (std::to_string(estimate * 1e3) + " ms").c_str() : "(not yet)");
    };
  }
  if (!json) {
    o.onExhausted = [&](size_t i, const search::TuneResult& r) {
      std::fprintf(stderr, "  task %2zu %-40s search space exhausted after %d programs: it takes no more rounds\n", i,
                   tasks[i].task.op.c_str(), r.trials);
    };
    if (!args.has("resume") && o.trials < int(tasks.size()) * to.batchSize)
      std::fprintf(stderr,
                   "%d trials for %zu tasks: warm-up rounds of %d programs (%d trials give each a full round of %d)\n",
                   o.trials, tasks.size(), std::min(to.batchSize, o.trials / int(tasks.size())),
                   int(tasks.size()) * to.batchSize, to.batchSize);
  }
  search::ModelTuneResult r;
  try {
    r = search::tuneModel(tasks, o);
  } catch (const std::invalid_argument& e) {
    if (db) db->endSession(sessionId, "failed");
    throw UsageError(e.what());
  } catch (...) {
    if (db) db->endSession(sessionId, "failed");
    throw;
  }
  if (db) {
    for (size_t i = 0; i < tasks.size(); ++i)
      if (recorders[i] && !r.tasks[i].costModelBlob.empty())
        db->saveCostModel(recorders[i]->taskId(), sessionId, r.tasks[i].costModelName,
                          int64_t(r.tasks[i].costModelTrainedOn), r.tasks[i].costModelBlob);
    db->endSession(sessionId, "finished");
  }

  double total = 0;
  for (size_t i = 0; i < tasks.size(); ++i)
    total += tasks[i].weight * r.tasks[i].bestSeconds;
  nlohmann::json rows = nlohmann::json::array();
  if (!json) std::printf("%-48s %6s %7s %11s %9s %7s\n", "task", "weight", "trials", "best ms", "GFLOP/s", "share");
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
    if (!json)
      std::printf("%-48s %6.0f %7d %11.4f %9.2f %6.1f%%%s\n", tasks[i].task.key.c_str(), tasks[i].weight, t.trials, ms,
                  gflops, share * 100, t.exhausted ? "  (space exhausted)" : "");
  }
  const bool complete = std::isfinite(r.estimatedSeconds);
  if (json) {
    nlohmann::json j;
    j["model"] = model;
    j["target"] = target;
    j["fusion"] = fusionName;
    j["trials"] = r.trials;
    j["warmup_batch"] = r.warmupBatch;
    j["cache_flush"] = measure::cacheStateName(to.measurer.run.cacheState);
    j["tasks"] = rows;
    j["estimated_ms"] = complete ? nlohmann::json(r.estimatedSeconds * 1e3) : nlohmann::json();
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : r.curve)
      curve.push_back(
          {p.trials, p.seconds, std::isfinite(p.estimate) ? nlohmann::json(p.estimate * 1e3) : nlohmann::json()});
    j["curve"] = curve;
    if (db) {
      j["db"] = db->path();
      j["session"] = sessionId;
      j["resumed"] = resumed;
    }
    std::puts(j.dump().c_str());
  } else if (complete) {
    std::printf("estimated end-to-end latency: %.4f ms (sum of weight x best latency), %d trials\n",
                r.estimatedSeconds * 1e3, r.trials);
  } else {
    std::printf("some tasks have no valid program yet: give more --trials\n");
  }
  return complete ? 0 : 1;
}

}  // namespace tessel::cli
