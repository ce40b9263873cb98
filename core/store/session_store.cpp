#include "store/session_store.h"

#include <nlohmann/json.hpp>

#include "store/store_sql.h"

namespace tessel::store {

SessionStore Database::sessions() {
  return SessionStore(*this);
}

SessionReader Database::sessions() const {
  return SessionReader(*this, *conn_);
}

std::optional<SessionRow> SessionReader::lastUnfinished(int64_t taskId, int64_t modelId) const {
  Statement st =
      conn_.prepare("SELECT " + sessionColumns() +
                    " WHERE status != 'finished' AND (task_id = ? OR model_id = ?) ORDER BY id DESC LIMIT 1");
  st.bind(1, taskId ? taskId : -1).bind(2, modelId ? modelId : -1);
  if (st.step()) return readSession(st);
  return std::nullopt;
}

std::optional<SessionRow> SessionReader::last(int64_t taskId, int64_t modelId) const {
  Statement st =
      conn_.prepare("SELECT " + sessionColumns() + " WHERE (task_id = ? OR model_id = ?) ORDER BY id DESC LIMIT 1");
  st.bind(1, taskId ? taskId : -1).bind(2, modelId ? modelId : -1);
  if (st.step()) return readSession(st);
  return std::nullopt;
}

std::vector<SessionRow> SessionReader::all() const {
  std::vector<SessionRow> out;
  {
    Statement st = conn_.prepare("SELECT " + sessionColumns() + " ORDER BY id");
    while (st.step())
      out.push_back(readSession(st));
  }
  for (SessionRow& s : out)
    summarize(s);
  return out;
}

std::optional<SessionRow> SessionReader::byId(int64_t id) const {
  Statement st = conn_.prepare("SELECT " + sessionColumns() + " WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  SessionRow s = readSession(st);
  summarize(s);
  return s;
}

std::string SessionReader::sessionColumns() const {
  return std::string(
             "sessions.id, sessions.kind, sessions.task_id, sessions.model_id, sessions.config, "
             "sessions.status, sessions.trials_target, sessions.started, sessions.ended, ") +
         (db_.schemaVersion_ >= 2 ? "sessions.message" : "''") + " FROM sessions";
}

SessionRow SessionReader::readSession(Statement& st) const {
  SessionRow s;
  s.id = st.getInt(0);
  s.kind = st.getText(1);
  s.taskId = st.isNull(2) ? 0 : st.getInt(2);
  s.modelId = st.isNull(3) ? 0 : st.getInt(3);
  s.config = st.getText(4);
  s.status = st.getText(5);
  s.trialsTarget = st.getInt(6);
  s.started = st.getText(7);
  s.ended = st.getText(8);
  s.message = st.getText(9);
  // A writer has marked what it found running (see markInterrupted); a
  // reader of a file no process writes sees the same at once.
  if (s.status == "running" && db_.mode() == OpenMode::ReadOnly && !db_.writerAlive()) {
    s.status = "interrupted";
    s.message = kInterrupted;
  }
  return s;
}

void SessionReader::summarize(SessionRow& s) const {
  Statement agg = conn_.prepare("SELECT count(*), count(" TESSEL_KEEP_COST "), min(" TESSEL_KEEP_COST
                                ") FROM records WHERE session_id = ?");
  agg.bind(1, s.id);
  if (agg.step()) {
    s.records = agg.getInt(0);
    s.validRecords = agg.getInt(1);
    s.bestCost = s.validRecords ? agg.getDouble(2) : std::numeric_limits<double>::quiet_NaN();
  }
  if (s.kind == "task") {
    if (auto t = db_.taskById(s.taskId)) s.subject = t->key;
  } else {
    Statement m = conn_.prepare("SELECT name FROM models WHERE id = ?");
    m.bind(1, s.modelId);
    if (m.step()) s.subject = m.getText(0);
    // The tasks as tuned: a model's task list grows with each fusion tried,
    // so the session's config says how many it had.
    const nlohmann::json config = nlohmann::json::parse(s.config, nullptr, false);
    const int64_t tasks = config.is_object() ? config.value("tasks", int64_t(0)) : 0;
    Statement e = conn_.prepare(
        "SELECT count(*), sum(model_tasks.weight * b.best) FROM (SELECT task_id, min(cost) AS best FROM records "
        "WHERE session_id = ? AND " TESSEL_USABLE_COST
        " GROUP BY task_id) b JOIN model_tasks ON model_tasks.task_id = "
        "b.task_id AND model_tasks.model_id = ?");
    e.bind(1, s.id).bind(2, s.modelId);
    if (e.step() && tasks > 0 && e.getInt(0) >= tasks) s.estimateSeconds = e.getDouble(1);
  }
}

int64_t SessionStore::start(const std::string& kind, int64_t taskId, int64_t modelId, const std::string& config,
                            int64_t trialsTarget) {
  Statement st = conn_.prepare(
      std::string("INSERT INTO sessions(kind, task_id, model_id, config, status, trials_target, started) VALUES "
                  "(?, ?, ?, ?, 'running', ?, ") +
      kNow + ")");
  st.bind(1, kind);
  taskId ? st.bind(2, taskId) : st.bindNull(2);
  modelId ? st.bind(3, modelId) : st.bindNull(3);
  st.bind(4, config).bind(5, trialsTarget).run();
  return conn_.lastInsertId();
}

void SessionStore::reopen(int64_t id, int64_t trialsTarget) {
  conn_.prepare("UPDATE sessions SET status = 'running', message = '', ended = NULL, trials_target = ? WHERE id = ?")
      .bind(1, trialsTarget)
      .bind(2, id)
      .run();
}

void SessionStore::close(int64_t id, const std::string& status, const std::string& message) {
  conn_.prepare(std::string("UPDATE sessions SET status = ?, message = ?, ended = ") + kNow + " WHERE id = ?")
      .bind(1, status)
      .bind(2, message)
      .bind(3, id)
      .run();
}

void SessionStore::fail(int64_t id, const std::string& why) noexcept {
  try {
    close(id, "failed", why);
  } catch (...) {
    // The file cannot take it (damaged, or its disk full): the error that
    // ended the session is the one to report.
  }
}

void SessionStore::markInterrupted() {
  conn_.prepare("UPDATE sessions SET status = 'interrupted', message = ? WHERE status = 'running'")
      .bind(1, std::string(kInterrupted))
      .run();
}

}  // namespace tessel::store
