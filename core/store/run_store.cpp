#include "store/run_store.h"

#include <nlohmann/json.hpp>

namespace tessel::store {

namespace {

const char* kRunColumns = "id, session_id, model, target, fusion, created, result FROM runs";

RunRow readRun(Statement& st) {
  RunRow r;
  r.id = st.getInt(0);
  r.sessionId = st.isNull(1) ? 0 : st.getInt(1);
  r.model = st.getText(2);
  r.target = st.getText(3);
  r.fusion = st.getText(4);
  r.created = st.getText(5);
  r.result = st.getText(6);
  return r;
}

}  // namespace

bool RunStore::hasTable() const {
  Statement st = db_.connection().prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'");
  return st.step();
}

int64_t RunStore::add(const RunRow& run) {
  if (!nlohmann::json::parse(run.result, nullptr, false).is_object())
    throw StoreError("a run's result must be a JSON object (tessel run --json), got '" + run.result.substr(0, 80) +
                     "'");
  Connection& c = db_.connection();
  Statement st = c.prepare(
      "INSERT INTO runs(session_id, model, target, fusion, created, result) VALUES "
      "(?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'), ?)");
  run.sessionId ? st.bind(1, run.sessionId) : st.bindNull(1);
  st.bind(2, run.model).bind(3, run.target).bind(4, run.fusion).bind(5, run.result).run();
  return c.lastInsertId();
}

std::vector<RunRow> RunStore::runs() const {
  std::vector<RunRow> out;
  if (!hasTable()) return out;
  Statement st = db_.connection().prepare(std::string("SELECT ") + kRunColumns + " ORDER BY id");
  while (st.step())
    out.push_back(readRun(st));
  return out;
}

std::optional<RunRow> RunStore::latestOfSession(int64_t sessionId) const {
  if (!hasTable()) return std::nullopt;
  Statement st =
      db_.connection().prepare(std::string("SELECT ") + kRunColumns + " WHERE session_id = ? ORDER BY id DESC LIMIT 1");
  st.bind(1, sessionId);
  if (st.step()) return readRun(st);
  return std::nullopt;
}

}  // namespace tessel::store
