// tessel db stats|best|sessions|runs|show: what a tuning database holds.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "export/kernel_export.h"
#include "schedule/steps.h"
#include "store/database.h"
#include "store/record_store.h"
#include "store/run_store.h"
#include "store/session_store.h"
#include "store/task_rows.h"
#include "stored_model.h"

namespace tessel::cli {

namespace {

// A JSON text from the database as JSON, or as the text itself where it does
// not parse (an edited file): --json output stays valid JSON.
nlohmann::json storedJson(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json(text) : j;
}

const char* kHelp =
    "usage: tessel db stats|best|sessions|runs [--db FILE] [--json]\n"
    "       tessel db show --task KEY [--code] [--db FILE] [--json]\n"
    "\n"
    "Reads a tuning database (never writes it; a tuning may be running).\n"
    "\n"
    "  stats      counts of records, valid records, distinct programs, sessions, tasks\n"
    "  best       the best program of each task, with its latency and GFLOP/s\n"
    "  sessions   the tuning sessions with their status and progress; a model\n"
    "             session's end-to-end estimate (sum of weight x best), a task\n"
    "             session's best latency\n"
    "  runs       the model runs against LibTorch the studio stored (its Run view):\n"
    "             when, the session whose kernels ran, Tessel's and LibTorch's medians,\n"
    "             the speed-up, correct or WRONG, disturbed; --json gives each run's\n"
    "             full tessel run --json result (partitions included)\n"
    "  show       one task: its best program (latency, record, schedule steps)\n"
    "\n"
    "options:\n"
    "  --db FILE   the database (default: $TESSEL_DB, else ~/.local/share/tessel/tessel.db)\n"
    "  --task KEY  the task to show (a workload key, as db best lists them)\n"
    "  --code      with show: also the C++ of the best program\n"
    "  --json      print one JSON object on stdout\n"
    "\n"
    "examples:\n"
    "  tessel db sessions --db r18.db\n"
    "  tessel db runs --db r18.db --json\n"
    "  tessel db show --task matmul_512_512_512_132fa37f --code\n";

nlohmann::json msOrNull(double seconds) {
  return std::isfinite(seconds) ? nlohmann::json(seconds * 1e3) : nlohmann::json();
}

struct DamageCount {
  int64_t unreplayable = 0;  // steps that parse but do not replay on their task
  int64_t unverified = 0;    // records of tasks that cannot be rebuilt here
};

// Replays every record on its task's definition (each model prepared once).
DamageCount countDamagedRecords(const store::Database& db) {
  DamageCount c;
  StoredDefinitions definitions(db);
  for (const store::TaskRow& task : db.tasks()) {
    const te::ComputeDAG* dag = definitions.of(task);
    for (const store::RecordRow& r : db.records().ofTask(task.id)) {
      std::vector<schedule::Step> steps;
      try {
        steps = schedule::deserializeSteps(r.steps);
      } catch (const std::exception&) {
        continue;  // counted by the store's own stats
      }
      if (!dag) {
        ++c.unverified;
        continue;
      }
      try {
        schedule::replay(*dag, steps);
      } catch (const std::exception&) {
        ++c.unreplayable;  // any exception: damaged steps must not end the count
      }
    }
  }
  return c;
}

// db show: a task, its best record, and its code with --code.
nlohmann::json showTask(const store::Database& db, const std::string& key, bool code, bool json) {
  const std::optional<store::TaskRow> task = db.taskByKey(key);
  if (!task) throw std::runtime_error("no task '" + key + "' in " + db.path() + " (see tessel db best)");
  const std::optional<std::string> model = modelOfTask(db, key);
  const std::vector<store::RecordRow> records = db.records().ofTask(task->id);
  size_t valid = 0;
  for (const store::RecordRow& r : records)
    valid += r.ok();
  nlohmann::json j = {{"key", task->key},       {"op", task->op},
                      {"shape", task->shape},   {"layout", task->layout},
                      {"target", task->target}, {"device", task->device},
                      {"flops", task->flops},   {"records", records.size()},
                      {"valid_records", valid}, {"model", model ? nlohmann::json(*model) : nlohmann::json()}};
  std::string shape;
  for (int64_t d : task->shape) {
    if (!shape.empty()) shape += ',';
    shape += std::to_string(d);
  }
  if (!json) {
    std::printf("task     %s\n", task->key.c_str());
    std::printf("op       %s %s%s on %s%s\n", task->op.c_str(), shape.c_str(),
                task->layout.empty() ? "" : (" (" + task->layout + ")").c_str(), task->target.c_str(),
                model ? (", a task of " + *model).c_str() : "");
    std::printf("records  %zu, %zu valid\n", records.size(), valid);
  }
  StoredDefinitions definitions(db);
  int64_t skipped = 0;
  const std::optional<store::BestRow> best = bestCheckedRecord(db, definitions, *task, &skipped);
  j["damaged_records_skipped"] = skipped;
  if (skipped && !json)
    std::printf("skipped  %lld better records whose steps do not replay on this task\n", (long long)skipped);
  if (!best) {
    if (!json) std::printf("best     none yet\n");
    return j;
  }
  const store::RecordRow& r = best->record;
  const double cost = r.medianCost();
  j["best"] = {{"record", r.id},
               {"session", r.sessionId},
               {"latency_ms", cost * 1e3},
               {"gflops", task->flops / cost / 1e9},
               {"steps", storedJson(r.steps)},
               {"created", r.created}};
  if (!json)
    std::printf("best     %.4f ms, %.2f GFLOP/s (record %lld of session %lld, %s)\nsteps    %s\n", cost * 1e3,
                task->flops / cost / 1e9, (long long)r.id, (long long)r.sessionId, r.created.c_str(), r.steps.c_str());
  if (code) {
    exporter::KernelExportOptions options;
    // The model was prepared above, to check the records: reuse its definition.
    if (const te::ComputeDAG* dag = definitions.of(*task)) {
      options.definitions.emplace(task->key, *dag);
    } else if (model) {
      options.definitions = storedModelDefinitions(db, *model);  // throws why the model cannot be prepared
    }
    const std::string source = exporter::bestKernelSource(db, *task, options);
    j["code"] = source;
    if (!json) std::printf("\n%s", source.c_str());
  }
  return j;
}

// db runs: the stored runs, one line each (or their JSON).
nlohmann::json listRuns(store::Database& db, bool json) {
  nlohmann::json rows = nlohmann::json::array();
  if (!json)
    std::printf("%5s %7s %-24s %-10s %-6s %11s %11s %11s %8s %-8s  %s\n", "id", "session", "model", "target", "fusion",
                "tessel ms", "libtorch ms", "onednn ms", "speedup", "result", "created");
  for (const store::RunRow& r : db.runs().all()) {
    const nlohmann::json result = storedJson(r.result);
    rows.push_back({{"id", r.id},
                    {"session", r.sessionId ? nlohmann::json(r.sessionId) : nlohmann::json()},
                    {"model", r.model},
                    {"target", r.target},
                    {"fusion", r.fusion},
                    {"created", r.created},
                    {"result", result}});
    if (json) continue;
    // An edited file may hold anything: what is not there (or not its type) shows as nothing.
    auto has = [&](const char* key) { return result.is_object() && result.contains(key); };
    auto number = [&](const char* key) {
      return has(key) && result[key].is_number() ? result[key].get<double>() : NAN;
    };
    auto flag = [&](const char* key) { return has(key) && result[key].is_boolean() && result[key].get<bool>(); };
    const bool correct = flag("correct"), disturbed = flag("disturbed");
    const std::string session = r.sessionId ? std::to_string(r.sessionId) : "-";
    // oneDNN's median where the run compared with it (--compare onednn), else "-".
    char onednn[32] = "-";
    if (const double ms = number("onednn_ms"); !std::isnan(ms)) std::snprintf(onednn, sizeof onednn, "%.3f", ms);
    std::printf("%5lld %7s %-24s %-10s %-6s %11.3f %11.3f %11s %7.2fx %-8s  %s\n", (long long)r.id, session.c_str(),
                r.model.c_str(), r.target.c_str(), r.fusion.c_str(), number("tessel_ms"), number("libtorch_ms"), onednn,
                number("speedup"), correct ? "correct" : "WRONG", r.created.c_str());
    if (disturbed)  // its ratio is not a speed-up: say why under it
      std::printf("%5s disturbed: %s\n", "",
                  has("disturbance") && result["disturbance"].is_string()
                      ? result["disturbance"].get<std::string>().c_str()
                      : "(no reason given)");
  }
  return rows;
}

}  // namespace

OptionSpec dbOptions() {
  return {{"db", "task"}, {"json", "help", "code"}};
}

std::string dbHelp() {
  return kHelp;
}

namespace {

// db stats: counts of what the file holds, and of its damaged records.
void addStats(store::Database& db, bool json, nlohmann::json& out) {
  store::Stats s = db.stats();
  out["records"] = s.records;
  out["valid_records"] = s.validRecords;
  out["distinct_programs"] = s.distinctPrograms;
  out["sessions"] = s.sessions;
  out["tasks"] = s.tasks;
  out["models"] = s.models;
  out["cost_models"] = s.costModels;
  out["schema_version"] = s.schemaVersion;
  const DamageCount damage = countDamagedRecords(db);
  out["damaged_records"] = s.damagedRecords + damage.unreplayable;
  out["unverified_records"] = damage.unverified;
  if (!json)
    std::printf(
        "%s (schema %d)\n  records            %lld\n  valid records      %lld\n  distinct programs  %lld\n"
        "  sessions           %lld\n  tasks              %lld\n  models             %lld\n"
        "  saved cost models  %lld\n",
        db.path().c_str(), s.schemaVersion, (long long)s.records, (long long)s.validRecords,
        (long long)s.distinctPrograms, (long long)s.sessions, (long long)s.tasks, (long long)s.models,
        (long long)s.costModels);
  if (!json && s.damagedRecords + damage.unreplayable)
    std::printf(
        "  damaged records    %lld (steps that do not parse or do not replay on their task: skipped by the "
        "tuner, export, run and db show)\n",
        (long long)(s.damagedRecords + damage.unreplayable));
  if (!json && damage.unverified)
    std::printf("  unverified records %lld (of tasks that cannot be rebuilt here: their steps were not replayed)\n",
                (long long)damage.unverified);
}

// db best: each task's best record that replays on it.
nlohmann::json listBest(store::Database& db, bool json) {
  nlohmann::json rows = nlohmann::json::array();
  if (!json) std::printf("%-44s %-10s %12s %10s %8s\n", "task", "target", "latency ms", "GFLOP/s", "record");
  StoredDefinitions definitions(db);
  for (store::BestRow b : db.records().best()) {
    // A damaged best record is skipped: the next best that replays stands.
    const te::ComputeDAG* dag = definitions.of(b.task);
    if (dag && !schedule::replayableSteps(*dag, b.record.steps)) {
      std::optional<store::BestRow> checked = store::bestReplayable(db, b.task.id, *dag);
      if (!checked) continue;
      b = std::move(*checked);
    }
    double cost = b.record.medianCost();
    double gflops = b.task.flops / cost / 1e9;
    rows.push_back({{"task", b.task.key},
                    {"op", b.task.op},
                    {"shape", b.task.shape},
                    {"layout", b.task.layout},
                    {"target", b.task.target},
                    {"device", b.task.device},
                    {"latency_ms", cost * 1e3},
                    {"gflops", gflops},
                    {"record", b.record.id},
                    {"session", b.record.sessionId},
                    {"steps", storedJson(b.record.steps)}});
    if (!json)
      std::printf("%-44s %-10s %12.4f %10.2f %8lld\n", b.task.key.c_str(), b.task.target.c_str(), cost * 1e3, gflops,
                  (long long)b.record.id);
  }
  return rows;
}

// db sessions: every session, a model's with its end-to-end estimate.
nlohmann::json listSessions(store::Database& db, bool json) {
  nlohmann::json rows = nlohmann::json::array();
  if (!json)
    std::printf("%5s %-11s %-44s %13s %12s  %s\n", "id", "status", "task or model", "records/goal", "ms", "started");
  for (const store::SessionRow& s : db.sessions().all()) {
    rows.push_back({{"id", s.id},
                    {"kind", s.kind},
                    {"subject", s.subject},
                    {"status", s.status},
                    {"message", s.message},
                    {"records", s.records},
                    {"valid_records", s.validRecords},
                    {"trials_target", s.trialsTarget},
                    {"best_ms", msOrNull(s.bestCost)},
                    {"estimated_ms", msOrNull(s.estimateSeconds)},
                    {"started", s.started},
                    {"ended", s.ended.empty() ? nlohmann::json() : nlohmann::json(s.ended)},
                    {"config", storedJson(s.config)}});
    // A model's figure is its end-to-end estimate; a task's, its best.
    const double seconds = s.kind == "model" ? s.estimateSeconds : s.bestCost;
    char ms[32] = "-";
    if (std::isfinite(seconds)) std::snprintf(ms, sizeof ms, "%.4f%s", seconds * 1e3, s.kind == "model" ? " e2e" : "");
    if (!json)
      std::printf("%5lld %-11s %-44s %13s %12s  %s\n", (long long)s.id, s.status.c_str(), s.subject.c_str(),
                  (std::to_string(s.records) + "/" + std::to_string(s.trialsTarget)).c_str(), ms, s.started.c_str());
    if (!json && !s.message.empty()) std::printf("%5s %s\n", "", s.message.c_str());  // why it failed
  }
  return rows;
}

}  // namespace

int dbCommand(const std::vector<std::string>& argv) {
  Args args(argv, dbOptions());
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty()
                         ? "missing what to show: stats, best, sessions, runs or show (try --help)"
                         : "expected one of stats, best, sessions, runs, show; got '" + args.positional()[1] + "' too");
  const std::string what = args.positional()[0];
  if (what != "stats" && what != "best" && what != "sessions" && what != "runs" && what != "show")
    throw UsageError("unknown 'db " + what + "' (available: stats, best, sessions, runs, show)");
  if (what == "show" && !args.has("task")) throw UsageError("db show needs --task KEY (tessel db best lists them)");
  if (what != "show" && (args.has("task") || args.has("code"))) throw UsageError("--task and --code go with 'db show'");
  auto db = store::Database::open(args.get("db", store::defaultDatabasePath()), store::OpenMode::ReadOnly);
  const bool json = args.has("json");
  nlohmann::json j;
  j["db"] = db->path();

  if (what == "stats")
    addStats(*db, json, j);
  else if (what == "best")
    j["best"] = listBest(*db, json);
  else if (what == "show")
    j["task"] = showTask(*db, args.get("task"), args.has("code"), json);
  else if (what == "runs")
    j["runs"] = listRuns(*db, json);
  else
    j["sessions"] = listSessions(*db, json);
  if (json) std::puts(j.dump().c_str());
  return 0;
}

}  // namespace tessel::cli
