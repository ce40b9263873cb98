#include "store/record_store.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "store/store_sql.h"

namespace tessel::store {

namespace {

const char* kRecordColumns =
    "records.id, records.task_id, records.session_id, records.steps, records.decisions, records.costs, "
    "records.error_code, records.error_msg, records.predicted, records.cost_model, records.build_s, records.run_s, "
    "records.max_abs_err, records.created, ";

RecordRow readRecord(Statement& st) {
  RecordRow r;
  r.id = st.getInt(0);
  r.taskId = st.getInt(1);
  r.sessionId = st.getInt(2);
  r.steps = st.getText(3);
  r.decisions = st.getText(4);
  r.costs = costsFromJson(st.getText(5));
  r.errorCode = int(st.getInt(6));
  r.errorMessage = st.getText(7);
  r.predicted = st.getDouble(8);
  r.costModel = st.getText(9);
  r.buildSeconds = st.getDouble(10);
  r.runSeconds = st.getDouble(11);
  r.maxAbsError = st.getDouble(12);
  r.created = st.getText(13);
  const double trainedOn = st.getDouble(14);  // NULL: NaN
  r.modelTrainedOn = std::isfinite(trainedOn) ? int64_t(trainedOn) : -1;
  r.modelPretrained = st.getInt(15) != 0;
  return r;
}

// Every record a query selects (its columns: RecordReader::columns()).
std::vector<RecordRow> readRecords(Statement& st) {
  std::vector<RecordRow> out;
  while (st.step())
    out.push_back(readRecord(st));
  return out;
}

}  // namespace

RecordStore Database::records() {
  return RecordStore(*this);
}

RecordReader Database::records() const {
  return RecordReader(*this, *conn_);
}

double RecordRow::medianCost() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  std::vector<double> c = costs;
  std::sort(c.begin(), c.end());
  size_t n = c.size();
  return n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
}

bool usableCost(double seconds) {
  return std::isfinite(seconds) && seconds > 0;
}

std::string costsToJson(const std::vector<double>& costs) {
  return nlohmann::json(costs).dump();
}

std::vector<double> costsFromJson(const std::string& text) {
  if (text.empty()) return {};
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return {};
  std::vector<double> out;
  for (const auto& v : j)
    if (v.is_number() && usableCost(v.get<double>())) out.push_back(v.get<double>());
  return out;
}

void RecordStore::add(const std::vector<RecordRow>& records) {
  if (records.empty()) return;
  // A measured time that is not positive and finite is a measurement bug:
  // refused before anything is written.
  for (const RecordRow& r : records)
    for (double c : r.errorCode == 0 ? r.costs : std::vector<double>{})
      if (!usableCost(c))
        throw StoreError("a record of task " + std::to_string(r.taskId) + " has the cost " + std::to_string(c) +
                         " s, not a positive, finite time; nothing of its batch was written");
  Transaction tx(conn_);
  Statement st = conn_.prepare(
      std::string("INSERT INTO records(task_id, session_id, steps, decisions, costs, cost, error_code, error_msg, "
                  "predicted, cost_model, build_s, run_s, max_abs_err, model_trained_on, model_pretrained, created) "
                  "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,") +
      kNow + ")");
  for (const RecordRow& r : records) {
    st.reset();
    double cost = r.ok() ? r.medianCost() : std::numeric_limits<double>::quiet_NaN();
    st.bind(1, r.taskId)
        .bind(2, r.sessionId)
        .bind(3, r.steps)
        .bind(4, r.decisions)
        .bind(5, costsToJson(r.costs))
        .bind(6, cost)
        .bind(7, r.errorCode)
        .bind(8, r.errorMessage)
        .bind(9, r.predicted)
        .bind(10, r.costModel)
        .bind(11, r.buildSeconds)
        .bind(12, r.runSeconds)
        .bind(13, r.maxAbsError);
    if (r.modelTrainedOn >= 0)
      st.bind(14, r.modelTrainedOn);
    else
      st.bindNull(14);
    st.bind(15, int(r.modelPretrained));
    st.run();
  }
  tx.commit();
}

std::string RecordReader::columns() const {
  // A file of schema 3 or older, read as it is, has no model_trained_on.
  return std::string(kRecordColumns) +
         (db_.schemaVersion() >= 4 ? "records.model_trained_on, records.model_pretrained" : "NULL, 0") +
         " FROM records";
}

std::vector<RecordRow> RecordReader::ofTask(int64_t taskId, std::optional<int64_t> sessionId) const {
  Statement st = conn_.prepare("SELECT " + columns() + " WHERE task_id = ? AND (? < 0 OR session_id = ?) ORDER BY id");
  st.bind(1, taskId).bind(2, sessionId.value_or(-1)).bind(3, sessionId.value_or(-1));
  return readRecords(st);
}

std::vector<RecordRow> RecordReader::ofSession(int64_t sessionId) const {
  Statement st = conn_.prepare("SELECT " + columns() + " WHERE session_id = ? ORDER BY id");
  st.bind(1, sessionId);
  return readRecords(st);
}

std::vector<RecordRow> RecordReader::all() const {
  Statement st = conn_.prepare("SELECT " + columns() + " ORDER BY id");
  return readRecords(st);
}

std::vector<RecordRow> RecordReader::fastest(int64_t taskId, size_t n) const {
  Statement st =
      conn_.prepare("SELECT " + columns() + " WHERE task_id = ? AND " TESSEL_USABLE_COST " ORDER BY cost, id LIMIT ?");
  st.bind(1, taskId).bind(2, int64_t(n));
  return readRecords(st);
}

std::optional<BestRow> RecordReader::bestUsable(int64_t taskId, const std::function<bool(const RecordRow&)>& usable,
                                                int64_t* rejected) const {
  // In cost order, read one at a time: usually the first is taken.
  Statement st =
      conn_.prepare("SELECT " + columns() + " WHERE task_id = ? AND " TESSEL_USABLE_COST " ORDER BY cost, id");
  st.bind(1, taskId);
  if (rejected) *rejected = 0;
  while (st.step()) {
    RecordRow r = readRecord(st);
    if (!usable(r)) {
      if (rejected) ++*rejected;
      continue;
    }
    BestRow b;
    b.record = std::move(r);
    if (auto t = db_.taskById(taskId)) b.task = *t;
    return b;
  }
  return std::nullopt;
}

std::vector<BestRow> RecordReader::best(std::optional<int64_t> taskId) const {
  // The lowest cost per task; the index on (task_id, cost) answers it.
  Statement st = conn_.prepare("SELECT " + columns() +
                               " WHERE records.id IN (SELECT (SELECT r.id FROM records r WHERE r.task_id = tasks.id "
                               "AND " TESSEL_USABLE_COST
                               " ORDER BY r.cost, r.id LIMIT 1) FROM tasks WHERE ? < 0 OR "
                               "tasks.id = ?) ORDER BY records.task_id");
  st.bind(1, taskId.value_or(-1)).bind(2, taskId.value_or(-1));
  std::vector<BestRow> out;
  for (RecordRow& r : readRecords(st)) {
    BestRow b;
    b.record = std::move(r);
    out.push_back(std::move(b));
  }
  for (BestRow& b : out)
    if (auto t = db_.taskById(b.record.taskId)) b.task = *t;
  return out;
}

}  // namespace tessel::store
