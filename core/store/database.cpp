// The database's own queries: tasks, models, statistics, integrity. Opening
// the file (header, lock, schema) is in database_file.cpp; sessions, records,
// cost models and runs are stores of their own (store/*_store.cpp).
#include "store/database.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "schedule/steps.h"
#include "store/store_sql.h"
#include "support/cpu_info.h"

namespace tessel::store {

namespace {

std::string shapeText(const std::vector<int64_t>& s) {
  return nlohmann::json(s).dump();
}

// A task's shape as stored: a list of non-negative dimensions, or an error
// naming the task (an edited or damaged file, not a JSON parser's message).
std::vector<int64_t> shapeFromJson(const std::string& text, const TaskRow& t) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  auto dimension = [](const nlohmann::json& d) { return d.is_number_integer() && d.get<int64_t>() >= 0; };
  // [] is a scalar output.
  if (j.is_array() && std::all_of(j.begin(), j.end(), dimension)) return j.get<std::vector<int64_t>>();
  throw StoreError("task " + std::to_string(t.id) + " (" + t.key + ") is damaged: its shape '" + text.substr(0, 80) +
                   "' is not a list of dimensions");
}

TaskRow readTask(Statement& st) {
  // columns: id, workload_key, target name, op, shape, layout, compute, flops
  TaskRow t;
  t.id = st.getInt(0);
  t.key = st.getText(1);
  t.target = st.getText(2);
  t.op = st.getText(3);
  t.shape = shapeFromJson(st.getText(4), t);
  t.layout = st.getText(5);
  t.compute = st.getText(6);
  t.flops = st.getDouble(7);
  t.device = st.getText(8);
  return t;
}

const char* kTaskColumns =
    "tasks.id, tasks.workload_key, targets.name, tasks.op, tasks.shape, tasks.layout, tasks.compute, tasks.flops, "
    "targets.device FROM tasks JOIN targets ON targets.id = tasks.target_id";

}  // namespace

std::string hostDevice() {
  const support::CpuInfo cpu = support::hostCpu();
  return cpu.model + ", " + std::to_string(cpu.threads) + (cpu.threads == 1 ? " core" : " cores");
}

int64_t Database::ensureTask(const TaskRow& t) {
  Transaction tx(*conn_);
  conn_->prepare("INSERT OR IGNORE INTO targets(name, device) VALUES (?, ?)").bind(1, t.target).bind(2, t.device).run();
  int64_t targetId = 0;
  {
    Statement st = conn_->prepare("SELECT id FROM targets WHERE name = ? AND device = ?");
    st.bind(1, t.target).bind(2, t.device);
    if (st.step()) targetId = st.getInt(0);
  }
  Statement find = conn_->prepare("SELECT id FROM tasks WHERE workload_key = ? AND target_id = ?");
  find.bind(1, t.key).bind(2, targetId);
  int64_t id = 0;
  if (find.step()) {
    id = find.getInt(0);
  } else {
    conn_
        ->prepare(
            "INSERT INTO tasks(workload_key, target_id, op, shape, layout, compute, flops) VALUES (?,?,?,?,?,?,?)")
        .bind(1, t.key)
        .bind(2, targetId)
        .bind(3, t.op)
        .bind(4, shapeText(t.shape))
        .bind(5, t.layout)
        .bind(6, t.compute)
        .bind(7, t.flops)
        .run();
    id = conn_->lastInsertId();
  }
  tx.commit();
  return id;
}

std::optional<TaskRow> Database::taskByKey(const std::string& key, const std::string& target) const {
  Statement st = conn_->prepare(std::string("SELECT ") + kTaskColumns +
                                " WHERE tasks.workload_key = ? AND (? = '' OR targets.name = ?) ORDER BY tasks.id");
  st.bind(1, key).bind(2, target).bind(3, target);
  if (st.step()) return readTask(st);
  return std::nullopt;
}

std::optional<TaskRow> Database::taskById(int64_t id) const {
  Statement st = conn_->prepare(std::string("SELECT ") + kTaskColumns + " WHERE tasks.id = ?");
  st.bind(1, id);
  if (st.step()) return readTask(st);
  return std::nullopt;
}

std::vector<TaskRow> Database::tasks() const {
  Statement st = conn_->prepare(std::string("SELECT ") + kTaskColumns + " ORDER BY tasks.id");
  std::vector<TaskRow> out;
  while (st.step())
    out.push_back(readTask(st));
  return out;
}

int64_t Database::ensureModel(const std::string& name, const std::string& source) {
  Statement ins =
      conn_->prepare(std::string("INSERT OR IGNORE INTO models(name, source, created) VALUES (?, ?, ") + kNow + ")");
  ins.bind(1, name).bind(2, source).run();
  Statement st = conn_->prepare("SELECT id FROM models WHERE name = ?");
  st.bind(1, name);
  return st.step() ? st.getInt(0) : 0;
}

void Database::setModelTask(int64_t modelId, int64_t taskId, double weight) {
  conn_->prepare("INSERT OR REPLACE INTO model_tasks(model_id, task_id, weight) VALUES (?, ?, ?)")
      .bind(1, modelId)
      .bind(2, taskId)
      .bind(3, weight)
      .run();
}

std::vector<std::pair<TaskRow, double>> Database::modelTasks(const std::string& model) const {
  Statement st = conn_->prepare(
      "SELECT tasks.id, tasks.workload_key, targets.name, tasks.op, tasks.shape, tasks.layout, tasks.compute, "
      "tasks.flops, targets.device, model_tasks.weight FROM tasks JOIN targets ON targets.id = tasks.target_id "
      "JOIN model_tasks ON model_tasks.task_id = tasks.id JOIN models ON models.id = model_tasks.model_id "
      "WHERE models.name = ? ORDER BY tasks.id");
  st.bind(1, model);
  std::vector<std::pair<TaskRow, double>> out;
  while (st.step())
    out.push_back({readTask(st), st.getDouble(9)});
  return out;
}

std::vector<std::string> Database::modelNames() const {
  Statement st = conn_->prepare("SELECT name FROM models ORDER BY id");
  std::vector<std::string> out;
  while (st.step())
    out.push_back(st.getText(0));
  return out;
}

Stats Database::stats() const {
  Stats s;
  auto count = [&](const char* sql) {
    Statement st = conn_->prepare(sql);
    return st.step() ? st.getInt(0) : int64_t(0);
  };
  s.records = count("SELECT count(*) FROM records");
  s.validRecords = count("SELECT count(*) FROM records WHERE " TESSEL_USABLE_COST);
  s.distinctPrograms = count("SELECT count(*) FROM (SELECT DISTINCT task_id, steps FROM records)");
  s.sessions = count("SELECT count(*) FROM sessions");
  s.tasks = count("SELECT count(*) FROM tasks");
  s.models = count("SELECT count(*) FROM models");
  s.costModels = count("SELECT count(*) FROM cost_models");
  s.schemaVersion = int(pragmaInt(*conn_, "user_version"));
  Statement st = conn_->prepare("SELECT steps FROM records");
  while (st.step()) {
    try {
      schedule::deserializeSteps(st.getText(0));
    } catch (const std::exception&) {
      ++s.damagedRecords;
    }
  }
  return s;
}

std::string Database::integrityCheck() const {
  Statement st = conn_->prepare("PRAGMA integrity_check");
  std::string out;
  while (st.step())
    out += (out.empty() ? "" : "; ") + st.getText(0);
  return out;
}

}  // namespace tessel::store
