// tessel db stats|best|sessions: what a tuning database holds.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "store/database.h"

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel db stats|best|sessions [--db FILE] [--json]\n"
    "\n"
    "Reads a tuning database (never writes it; a tuning may be running).\n"
    "\n"
    "  stats      counts of records, valid records, distinct programs, sessions, tasks\n"
    "  best       the best program of each task, with its latency and GFLOP/s\n"
    "  sessions   the tuning sessions with their status and progress\n"
    "\n"
    "options:\n"
    "  --db FILE  the database (default: $TESSEL_DB, else ~/.local/share/tessel/tessel.db)\n"
    "  --json     print one JSON object on stdout\n";

nlohmann::json msOrNull(double seconds) {
  return std::isfinite(seconds) ? nlohmann::json(seconds * 1e3) : nlohmann::json();
}

}  // namespace

int dbCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"db"}, {"json", "help"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty()
                         ? "missing what to show: stats, best or sessions (try --help)"
                         : "expected one of stats, best, sessions; got '" + args.positional()[1] + "' too");
  const std::string what = args.positional()[0];
  if (what != "stats" && what != "best" && what != "sessions")
    throw UsageError("unknown 'db " + what + "' (available: stats, best, sessions)");
  auto db = store::Database::open(args.get("db", store::defaultDatabasePath()), store::OpenMode::ReadOnly);
  const bool json = args.has("json");
  nlohmann::json j;
  j["db"] = db->path();

  if (what == "stats") {
    store::Stats s = db->stats();
    j["records"] = s.records;
    j["valid_records"] = s.validRecords;
    j["distinct_programs"] = s.distinctPrograms;
    j["sessions"] = s.sessions;
    j["tasks"] = s.tasks;
    j["models"] = s.models;
    j["cost_models"] = s.costModels;
    j["schema_version"] = s.schemaVersion;
    if (!json)
      std::printf(
          "%s (schema %d)\n  records            %lld\n  valid records      %lld\n  distinct programs  %lld\n"
          "  sessions           %lld\n  tasks              %lld\n  models             %lld\n"
          "  saved cost models  %lld\n",
          db->path().c_str(), s.schemaVersion, (long long)s.records, (long long)s.validRecords,
          (long long)s.distinctPrograms, (long long)s.sessions, (long long)s.tasks, (long long)s.models,
          (long long)s.costModels);
  } else if (what == "best") {
    nlohmann::json rows = nlohmann::json::array();
    if (!json) std::printf("%-44s %-10s %12s %10s %8s\n", "task", "target", "latency ms", "GFLOP/s", "record");
    for (const store::BestRow& b : db->best()) {
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
                      {"steps", nlohmann::json::parse(b.record.steps, nullptr, false)}});
      if (!json)
        std::printf("%-44s %-10s %12.4f %10.2f %8lld\n", b.task.key.c_str(), b.task.target.c_str(), cost * 1e3, gflops,
                    (long long)b.record.id);
    }
    j["best"] = rows;
  } else {
    nlohmann::json rows = nlohmann::json::array();
    if (!json)
      std::printf("%5s %-9s %-44s %13s %12s  %s\n", "id", "status", "task or model", "records/goal", "best ms",
                  "started");
    for (const store::SessionRow& s : db->sessions()) {
      rows.push_back({{"id", s.id},
                      {"kind", s.kind},
                      {"subject", s.subject},
                      {"status", s.status},
                      {"records", s.records},
                      {"valid_records", s.validRecords},
                      {"trials_target", s.trialsTarget},
                      {"best_ms", msOrNull(s.bestCost)},
                      {"started", s.started},
                      {"ended", s.ended.empty() ? nlohmann::json() : nlohmann::json(s.ended)},
                      {"config", nlohmann::json::parse(s.config, nullptr, false)}});
      if (!json)
        std::printf("%5lld %-9s %-44s %13s %12s  %s\n", (long long)s.id, s.status.c_str(), s.subject.c_str(),
                    (std::to_string(s.records) + "/" + std::to_string(s.trialsTarget)).c_str(),
                    std::isfinite(s.bestCost) ? std::to_string(s.bestCost * 1e3).c_str() : "-", s.started.c_str());
    }
    j["sessions"] = rows;
  }
  if (json) std::puts(j.dump().c_str());
  return 0;
}

}  // namespace tessel::cli
