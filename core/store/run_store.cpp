#include "store/run_store.h"

#include <nlohmann/json.hpp>

#include "store/store_sql.h"

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

RunStore Database::runs() {
  return RunStore(*this);
}

RunReader Database::runs() const {
  return RunReader(*conn_);
}

bool RunReader::hasTable() const {
  Statement st = conn_.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'");
  return st.step();
}

int64_t RunStore::add(const RunRow& run) {
  if (!nlohmann::json::parse(run.result, nullptr, false).is_object())
    throw StoreError("a run's result must be a JSON object (tessel run --json), got '" + run.result.substr(0, 80) +
                     "'");
  Statement st = conn_.prepare(
      std::string("INSERT INTO runs(session_id, model, target, fusion, created, result) VALUES (?, ?, ?, ?, ") + kNow +
      ", ?)");
  run.sessionId ? st.bind(1, run.sessionId) : st.bindNull(1);
  st.bind(2, run.model).bind(3, run.target).bind(4, run.fusion).bind(5, run.result).run();
  return conn_.lastInsertId();
}

std::vector<RunRow> RunReader::all() const {
  std::vector<RunRow> out;
  if (!hasTable()) return out;
  Statement st = conn_.prepare(std::string("SELECT ") + kRunColumns + " ORDER BY id");
  while (st.step())
    out.push_back(readRun(st));
  return out;
}

std::optional<RunRow> RunReader::latestOfSession(int64_t sessionId) const {
  if (!hasTable()) return std::nullopt;
  Statement st = conn_.prepare(std::string("SELECT ") + kRunColumns + " WHERE session_id = ? ORDER BY id DESC LIMIT 1");
  st.bind(1, sessionId);
  if (st.step()) return readRun(st);
  return std::nullopt;
}

}  // namespace tessel::store
