#include "store/database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "schedule/steps.h"
#include "support/input_file.h"

namespace tessel::store {

namespace {

namespace fs = std::filesystem;

// "TSL1": marks a file as Tessel's (PRAGMA application_id).
constexpr int64_t kApplicationId = 0x54534c31;

const char* kNow = "strftime('%Y-%m-%dT%H:%M:%fZ','now')";

const char* kInterrupted = "its process ended before the session did (killed, crashed or the machine stopped)";

// Migrations: entry v-1 takes the schema from version v-1 to v.
const char* kMigrations[] = {
    R"sql(
CREATE TABLE targets(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  device TEXT NOT NULL DEFAULT '',
  UNIQUE(name, device));
CREATE TABLE models(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  source TEXT NOT NULL DEFAULT '',
  created TEXT NOT NULL);
CREATE TABLE tasks(
  id INTEGER PRIMARY KEY,
  workload_key TEXT NOT NULL,
  target_id INTEGER NOT NULL REFERENCES targets(id),
  op TEXT NOT NULL,
  shape TEXT NOT NULL,
  layout TEXT NOT NULL DEFAULT '',
  compute TEXT NOT NULL,
  flops REAL NOT NULL,
  UNIQUE(workload_key, target_id));
CREATE TABLE model_tasks(
  model_id INTEGER NOT NULL REFERENCES models(id),
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  weight REAL NOT NULL,
  PRIMARY KEY(model_id, task_id));
CREATE TABLE sessions(
  id INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK(kind IN ('task', 'model')),
  task_id INTEGER REFERENCES tasks(id),
  model_id INTEGER REFERENCES models(id),
  config TEXT NOT NULL,
  status TEXT NOT NULL,
  trials_target INTEGER NOT NULL,
  started TEXT NOT NULL,
  ended TEXT);
CREATE TABLE records(
  id INTEGER PRIMARY KEY,
  task_id INTEGER NOT NULL REFERENCES tasks(id),
  session_id INTEGER NOT NULL REFERENCES sessions(id),
  steps TEXT NOT NULL,
  decisions TEXT NOT NULL DEFAULT '',
  costs TEXT NOT NULL,
  cost REAL,
  error_code INTEGER NOT NULL,
  error_msg TEXT NOT NULL DEFAULT '',
  predicted REAL,
  cost_model TEXT NOT NULL DEFAULT '',
  build_s REAL NOT NULL DEFAULT 0,
  run_s REAL NOT NULL DEFAULT 0,
  max_abs_err REAL NOT NULL DEFAULT 0,
  created TEXT NOT NULL);
CREATE TABLE cost_models(
  id INTEGER PRIMARY KEY,
  task_id INTEGER REFERENCES tasks(id),
  session_id INTEGER REFERENCES sessions(id),
  name TEXT NOT NULL,
  trained_on INTEGER NOT NULL,
  model BLOB NOT NULL,
  created TEXT NOT NULL);
CREATE INDEX records_by_task_cost ON records(task_id, cost);
CREATE INDEX records_by_task_steps ON records(task_id, steps);
CREATE INDEX records_by_session ON records(session_id, id);
CREATE INDEX sessions_by_task ON sessions(task_id, id);
CREATE INDEX sessions_by_model ON sessions(model_id, id);
)sql",
    // 2: why a session failed or was interrupted.
    R"sql(
ALTER TABLE sessions ADD COLUMN message TEXT NOT NULL DEFAULT '';
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

using TableColumns = std::map<std::string, std::vector<std::string>>;

// Every table of a database with its columns, in order.
TableColumns tableColumns(Connection& c) {
  TableColumns out;
  std::vector<std::string> tables;
  {
    Statement st = c.prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
    while (st.step())
      tables.push_back(st.getText(0));
  }
  for (const std::string& t : tables) {
    Statement st = c.prepare("SELECT name FROM pragma_table_info(?)");
    st.bind(1, t);
    while (st.step())
      out[t].push_back(st.getText(0));
  }
  return out;
}

// The schema this Tessel writes, read back from the migrations run on an
// in-memory database: the reference a file is verified against.
const TableColumns& expectedSchema() {
  static const TableColumns schema = [] {
    Connection mem(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    for (const char* m : kMigrations)
      mem.exec(m);
    return tableColumns(mem);
  }();
  return schema;
}

// A database of this schema version has every table and column of it; the
// first one missing is named. (Extra tables or columns are left alone.)
void verifySchema(Connection& c, const std::string& path) {
  const TableColumns actual = tableColumns(c);
  for (const auto& [table, columns] : expectedSchema()) {
    auto it = actual.find(table);
    if (it == actual.end())
      throw StoreError(path + " is damaged: its table '" + table + "' is missing (nothing was changed in it)");
    for (const std::string& column : columns)
      if (std::find(it->second.begin(), it->second.end(), column) == it->second.end())
        throw StoreError(path + " is damaged: its table '" + table + "' has no column '" + column +
                         "' (nothing was changed in it)");
  }
}

int64_t pragmaInt(Connection& c, const char* name) {
  Statement st = c.prepare(std::string("PRAGMA ") + name);
  return st.step() ? st.getInt(0) : 0;
}

// Rejects what is not an SQLite file by its header, before SQLite touches it.
void checkHeader(const std::string& path, OpenMode mode) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (mode == OpenMode::ReadOnly) throw StoreError("no such database: " + path);
    return;
  }
  if (fs::is_directory(path, ec)) throw StoreError(path + " is a directory, not a database");
  // A FIFO or a device would block or never end: only regular files are databases.
  if (const std::string kind = support::notARegularFile(path); !kind.empty())
    throw StoreError(path + " " + kind + ": not a database");
  uintmax_t size = fs::file_size(path, ec);
  if (ec) throw StoreError("cannot read " + path + ": " + ec.message());
  if (size == 0) {
    if (mode == OpenMode::ReadOnly) throw StoreError(path + " is empty: not a Tessel database");
    return;  // an empty file becomes a new database
  }
  char header[16] = {};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StoreError("cannot read " + path);
  in.read(header, sizeof header);
  if (in.gcount() < 16 || std::memcmp(header, "SQLite format 3", 16) != 0)
    throw StoreError(path + " is not an SQLite database (it has no SQLite header)");
  if (size < 512) throw StoreError(path + " is corrupt: truncated to " + std::to_string(size) + " bytes");
}

// An exclusive flock on a file beside the database, held while writing.
// (Not on the database itself: closing another descriptor of it would drop
// SQLite's own POSIX locks.) Released by the kernel if the process dies; the
// file is removed by its owner when it is done (releaseWriterLock), so a lock
// taken on a file that was removed meanwhile is taken again on the new one.
int takeWriterLock(const std::string& path) {
  const std::string lockPath = path + "-writer.lock";
  for (int attempt = 0;; ++attempt) {
    const int fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw StoreError("cannot create the lock file " + lockPath + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      // A reader asking whether a writer is alive holds it shared for an
      // instant: retry a little before calling it another writer.
      if (attempt < 20) {
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        continue;
      }
      throw StoreError(path +
                       " is being written by another Tessel process (one writer at a time; readers may follow it)");
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::stat(lockPath.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      return fd;
    ::close(fd);  // its owner removed it as we took it: take the new one
  }
}

void releaseWriterLock(const std::string& path, int fd) {
  if (fd < 0) return;
  ::unlink((path + "-writer.lock").c_str());  // while still held: see takeWriterLock
  ::close(fd);
}

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
// A cost the readers use: positive and finite (9e999 is infinity to SQLite;
// NULL, an error record's cost, fails both tests). A file edited by hand or
// damaged may hold anything.
#define USABLE_COST "(cost > 0 AND cost < 9e999)"
#define KEEP_COST "CASE WHEN " USABLE_COST " THEN cost END"

const char* kTaskColumns =
    "tasks.id, tasks.workload_key, targets.name, tasks.op, tasks.shape, tasks.layout, tasks.compute, tasks.flops, "
    "targets.device FROM tasks JOIN targets ON targets.id = tasks.target_id";

const char* kRecordColumns =
    "records.id, records.task_id, records.session_id, records.steps, records.decisions, records.costs, "
    "records.error_code, records.error_msg, records.predicted, records.cost_model, records.build_s, records.run_s, "
    "records.max_abs_err, records.created FROM records";

RecordRow readRecord(Statement& st, int from = 0) {
  RecordRow r;
  r.id = st.getInt(from + 0);
  r.taskId = st.getInt(from + 1);
  r.sessionId = st.getInt(from + 2);
  r.steps = st.getText(from + 3);
  r.decisions = st.getText(from + 4);
  r.costs = costsFromJson(st.getText(from + 5));
  r.errorCode = int(st.getInt(from + 6));
  r.errorMessage = st.getText(from + 7);
  r.predicted = st.getDouble(from + 8);
  r.costModel = st.getText(from + 9);
  r.buildSeconds = st.getDouble(from + 10);
  r.runSeconds = st.getDouble(from + 11);
  r.maxAbsError = st.getDouble(from + 12);
  r.created = st.getText(from + 13);
  return r;
}

}  // namespace

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

std::string hostDevice() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  unsigned cores = std::thread::hardware_concurrency();
  return model + ", " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
}

namespace {

// Tessel's own data folder: the one folder it creates for a database.
std::string builtInDatabasePath() {
  fs::path dir;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg)
    dir = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    dir = fs::path(home) / ".local" / "share";
  else
    dir = ".";
  return (dir / "tessel" / "tessel.db").string();
}

}  // namespace

std::string defaultDatabasePath() {
  if (const char* env = std::getenv("TESSEL_DB"); env && *env) return env;
  return builtInDatabasePath();
}

std::unique_ptr<Database> Database::open(const std::string& path, OpenMode mode) {
  if (path.empty()) throw StoreError("empty database path");
  checkHeader(path, mode);
  int lockFd = -1;
  if (mode == OpenMode::ReadWrite) {
    // A user's path names a folder that exists: a typo must not become a
    // tree of new folders. Only Tessel's own data folder is made here.
    std::error_code ec;
    const fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      if (path != builtInDatabasePath())
        throw StoreError("cannot create " + path + ": " + parent.string() +
                         (fs::exists(parent, ec) ? " is not a folder" : " does not exist"));
      fs::create_directories(parent, ec);
    }
    lockFd = takeWriterLock(path);
  }
  try {
    int flags = mode == OpenMode::ReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    // A reader of a file no process has open (no -wal beside it: a writer
    // keeps one while it runs, SQLite removes it with the last connection)
    // opens it immutable: it creates no -wal or -shm beside a user's file, and
    // needs no write access to its folder. What it gives up: a writer that
    // starts while it reads is not seen, and one that checkpoints meanwhile
    // (at its end, or every 4 MB of records) changes pages under it. Such
    // reads are short (a command, one view of the studio), opened anew each time.
    std::error_code walEc;
    const bool immutable = mode == OpenMode::ReadOnly && !fs::exists(path + "-wal", walEc);
    auto conn = std::make_unique<Connection>(path, flags, immutable);
    // Read-only checks first: nothing may be written to a file we reject.
    std::string check;
    try {
      Statement st = conn->prepare("PRAGMA quick_check");
      if (st.step()) check = st.getText(0);
    } catch (const StoreError& e) {
      const std::string why = e.what();
      // SQLite must create PATH-shm beside a file a killed tuning left with its
      // -wal: in a folder this user cannot write, that is not corruption
      // (SQLite says "readonly" or "unable to open", depending on the step).
      const std::string folder = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
      const bool shmNeeded = !immutable && !fs::exists(path + "-shm", walEc) && ::access(folder.c_str(), W_OK) != 0;
      if (shmNeeded || why.find("readonly") != std::string::npos || why.find("read-only") != std::string::npos)
        throw StoreError("cannot read " + path + ": a tuning that was killed left its -wal beside it, and SQLite " +
                         "must create " + path + "-shm to read it, which " + folder +
                         " does not allow (open it once where it can be written, e.g. a copy of the folder)");
      throw StoreError(path + " is corrupt or not a database: " + why);
    }
    if (check != "ok") throw StoreError(path + " is corrupt: " + check);
    int64_t version = pragmaInt(*conn, "user_version");
    int64_t app = pragmaInt(*conn, "application_id");
    int64_t tables = 0;
    {
      Statement st = conn->prepare("SELECT count(*) FROM sqlite_master");
      if (st.step()) tables = st.getInt(0);
    }
    if (tables > 0 && app != kApplicationId)
      throw StoreError(path + " is an SQLite database but not Tessel's (it has other tables)");
    if (version > kSchemaVersion)
      throw StoreError(path + " has schema version " + std::to_string(version) + ", newer than this Tessel's (" +
                       std::to_string(kSchemaVersion) + "): use a newer Tessel");
    if (mode == OpenMode::ReadOnly && tables == 0) throw StoreError(path + " is an empty database: no Tessel tables");
    if (version == kSchemaVersion) verifySchema(*conn, path);
    std::unique_ptr<Database> db(new Database(std::move(conn), mode, lockFd));
    lockFd = -1;
    db->schemaVersion_ = version;
    if (mode == OpenMode::ReadWrite) {
      db->createOrMigrate();
      db->schemaVersion_ = kSchemaVersion;
      // This process holds the writer lock: a session still `running` was
      // left so by one that is gone.
      db->conn_->prepare("UPDATE sessions SET status = 'interrupted', message = ? WHERE status = 'running'")
          .bind(1, std::string(kInterrupted))
          .run();
    }
    return db;
  } catch (...) {
    releaseWriterLock(path, lockFd);
    throw;
  }
}

Database::Database(std::unique_ptr<Connection> c, OpenMode mode, int lockFd)
    : conn_(std::move(c)), mode_(mode), lockFd_(lockFd) {
  conn_->exec("PRAGMA foreign_keys = ON");
}

Database::~Database() {
  const std::string file = path();
  conn_.reset();
  releaseWriterLock(file, lockFd_);
}

void Database::createOrMigrate() {
  // WAL: readers see committed batches while the tuner writes; NORMAL
  // synchronisation survives a killed process (not a power cut) and is fast.
  conn_->exec("PRAGMA journal_mode = WAL");
  conn_->exec("PRAGMA synchronous = NORMAL");
  int64_t version = pragmaInt(*conn_, "user_version");
  if (version == kSchemaVersion) return;
  Transaction tx(*conn_);
  for (int64_t v = version; v < kSchemaVersion; ++v)
    conn_->exec(kMigrations[v]);
  conn_->exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  conn_->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  tx.commit();
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

int64_t Database::beginSession(const std::string& kind, int64_t taskId, int64_t modelId, const std::string& config,
                               int64_t trialsTarget) {
  Statement st = conn_->prepare(
      std::string("INSERT INTO sessions(kind, task_id, model_id, config, status, trials_target, started) VALUES "
                  "(?, ?, ?, ?, 'running', ?, ") +
      kNow + ")");
  st.bind(1, kind);
  taskId ? st.bind(2, taskId) : st.bindNull(2);
  modelId ? st.bind(3, modelId) : st.bindNull(3);
  st.bind(4, config).bind(5, trialsTarget).run();
  return conn_->lastInsertId();
}

void Database::reopenSession(int64_t id, int64_t trialsTarget) {
  conn_->prepare("UPDATE sessions SET status = 'running', message = '', ended = NULL, trials_target = ? WHERE id = ?")
      .bind(1, trialsTarget)
      .bind(2, id)
      .run();
}

void Database::endSession(int64_t id, const std::string& status, const std::string& message) {
  conn_->prepare(std::string("UPDATE sessions SET status = ?, message = ?, ended = ") + kNow + " WHERE id = ?")
      .bind(1, status)
      .bind(2, message)
      .bind(3, id)
      .run();
}

void Database::failSession(int64_t id, const std::string& why) noexcept {
  try {
    endSession(id, "failed", why);
  } catch (...) {
    // The file cannot take it (damaged, or its disk full): the error that
    // ended the session is the one to report.
  }
}

std::optional<SessionRow> Database::lastUnfinishedSession(int64_t taskId, int64_t modelId) const {
  Statement st =
      conn_->prepare("SELECT " + sessionColumns() +
                     " WHERE status != 'finished' AND (task_id = ? OR model_id = ?) ORDER BY id DESC LIMIT 1");
  st.bind(1, taskId ? taskId : -1).bind(2, modelId ? modelId : -1);
  if (st.step()) return readSession(st);
  return std::nullopt;
}

std::string Database::sessionColumns() const {
  return std::string(
             "sessions.id, sessions.kind, sessions.task_id, sessions.model_id, sessions.config, "
             "sessions.status, sessions.trials_target, sessions.started, sessions.ended, ") +
         (schemaVersion_ >= 2 ? "sessions.message" : "''") + " FROM sessions";
}

SessionRow Database::readSession(Statement& st) const {
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
  // A writer has marked what it found running (see open()); a reader of a
  // file no process writes sees the same at once.
  if (s.status == "running" && mode_ == OpenMode::ReadOnly && !writerAlive()) {
    s.status = "interrupted";
    s.message = kInterrupted;
  }
  return s;
}

bool Database::writerAlive() const {
  // The writer holds an exclusive flock on the lock file while it writes; a
  // shared one taken and dropped at once tells whether it is there (a writer
  // starting in that instant retries, see takeWriterLock).
  const int fd = ::open((path() + "-writer.lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return held;
}

std::optional<SessionRow> Database::lastSession(int64_t taskId, int64_t modelId) const {
  Statement st =
      conn_->prepare("SELECT " + sessionColumns() + " WHERE (task_id = ? OR model_id = ?) ORDER BY id DESC LIMIT 1");
  st.bind(1, taskId ? taskId : -1).bind(2, modelId ? modelId : -1);
  if (st.step()) return readSession(st);
  return std::nullopt;
}

std::vector<SessionRow> Database::sessions() const {
  std::vector<SessionRow> out;
  {
    Statement st = conn_->prepare("SELECT " + sessionColumns() + " ORDER BY id");
    while (st.step())
      out.push_back(readSession(st));
  }
  for (SessionRow& s : out)
    summarize(s);
  return out;
}

std::optional<SessionRow> Database::session(int64_t id) const {
  Statement st = conn_->prepare("SELECT " + sessionColumns() + " WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  SessionRow s = readSession(st);
  summarize(s);
  return s;
}

void Database::summarize(SessionRow& s) const {
  Statement agg =
      conn_->prepare("SELECT count(*), count(" KEEP_COST "), min(" KEEP_COST ") FROM records WHERE session_id = ?");
  agg.bind(1, s.id);
  if (agg.step()) {
    s.records = agg.getInt(0);
    s.validRecords = agg.getInt(1);
    s.bestCost = s.validRecords ? agg.getDouble(2) : std::numeric_limits<double>::quiet_NaN();
  }
  if (s.kind == "task") {
    if (auto t = taskById(s.taskId)) s.subject = t->key;
  } else {
    Statement m = conn_->prepare("SELECT name FROM models WHERE id = ?");
    m.bind(1, s.modelId);
    if (m.step()) s.subject = m.getText(0);
    // The tasks as tuned: a model's task list grows with each fusion tried,
    // so the session's config says how many it had.
    const nlohmann::json config = nlohmann::json::parse(s.config, nullptr, false);
    const int64_t tasks = config.is_object() ? config.value("tasks", int64_t(0)) : 0;
    Statement e = conn_->prepare(
        "SELECT count(*), sum(model_tasks.weight * b.best) FROM (SELECT task_id, min(cost) AS best FROM records "
        "WHERE session_id = ? AND " USABLE_COST
        " GROUP BY task_id) b JOIN model_tasks ON model_tasks.task_id = "
        "b.task_id AND model_tasks.model_id = ?");
    e.bind(1, s.id).bind(2, s.modelId);
    if (e.step() && tasks > 0 && e.getInt(0) >= tasks) s.estimateSeconds = e.getDouble(1);
  }
}

void Database::addRecords(const std::vector<RecordRow>& records) {
  if (records.empty()) return;
  // A measured time that is not positive and finite is a measurement bug:
  // refused before anything is written.
  for (const RecordRow& r : records)
    for (double c : r.errorCode == 0 ? r.costs : std::vector<double>{})
      if (!usableCost(c))
        throw StoreError("a record of task " + std::to_string(r.taskId) + " has the cost " + std::to_string(c) +
                         " s, not a positive, finite time; nothing of its batch was written");
  Transaction tx(*conn_);
  Statement st = conn_->prepare(
      std::string("INSERT INTO records(task_id, session_id, steps, decisions, costs, cost, error_code, error_msg, "
                  "predicted, cost_model, build_s, run_s, max_abs_err, created) VALUES "
                  "(?,?,?,?,?,?,?,?,?,?,?,?,?,") +
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
        .bind(13, r.maxAbsError)
        .run();
  }
  tx.commit();
}

std::vector<RecordRow> Database::records(int64_t taskId, std::optional<int64_t> sessionId) const {
  Statement st = conn_->prepare(std::string("SELECT ") + kRecordColumns +
                                " WHERE task_id = ? AND (? < 0 OR session_id = ?) ORDER BY id");
  st.bind(1, taskId).bind(2, sessionId.value_or(-1)).bind(3, sessionId.value_or(-1));
  std::vector<RecordRow> out;
  while (st.step())
    out.push_back(readRecord(st));
  return out;
}

std::vector<RecordRow> Database::sessionRecords(int64_t sessionId) const {
  Statement st = conn_->prepare(std::string("SELECT ") + kRecordColumns + " WHERE session_id = ? ORDER BY id");
  st.bind(1, sessionId);
  std::vector<RecordRow> out;
  while (st.step())
    out.push_back(readRecord(st));
  return out;
}

std::vector<RecordRow> Database::allRecords() const {
  Statement st = conn_->prepare(std::string("SELECT ") + kRecordColumns + " ORDER BY id");
  std::vector<RecordRow> out;
  while (st.step())
    out.push_back(readRecord(st));
  return out;
}

void Database::saveCostModel(int64_t taskId, int64_t sessionId, const std::string& name, int64_t trainedOn,
                             const std::string& blob) {
  Statement st = conn_->prepare(
      std::string("INSERT INTO cost_models(task_id, session_id, name, trained_on, model, created) VALUES (?,?,?,?,?,") +
      kNow + ")");
  taskId ? st.bind(1, taskId) : st.bindNull(1);
  sessionId ? st.bind(2, sessionId) : st.bindNull(2);
  st.bind(3, name).bind(4, trainedOn).bindBlob(5, blob).run();
}

std::vector<std::string> Database::modelNames() const {
  Statement st = conn_->prepare("SELECT name FROM models ORDER BY id");
  std::vector<std::string> out;
  while (st.step())
    out.push_back(st.getText(0));
  return out;
}

std::vector<Database::SavedCostModel> Database::costModels(int64_t sessionId) const {
  Statement st = conn_->prepare(
      "SELECT id, task_id, session_id, name, trained_on, model FROM cost_models WHERE session_id = ? ORDER BY id");
  st.bind(1, sessionId);
  std::vector<SavedCostModel> out;
  while (st.step())
    out.push_back(
        {st.getInt(0), st.isNull(1) ? 0 : st.getInt(1), st.getInt(2), st.getText(3), st.getInt(4), st.getBlob(5)});
  return out;
}

Stats Database::stats() const {
  Stats s;
  auto count = [&](const char* sql) {
    Statement st = conn_->prepare(sql);
    return st.step() ? st.getInt(0) : int64_t(0);
  };
  s.records = count("SELECT count(*) FROM records");
  s.validRecords = count("SELECT count(*) FROM records WHERE " USABLE_COST);
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

std::optional<BestRow> Database::bestUsable(int64_t taskId, const std::function<bool(const RecordRow&)>& usable,
                                            int64_t* rejected) const {
  // In cost order, read one at a time: usually the first is taken.
  Statement st = conn_->prepare(std::string("SELECT ") + kRecordColumns +
                                " WHERE task_id = ? AND " USABLE_COST " ORDER BY cost, id");
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
    if (auto t = taskById(taskId)) b.task = *t;
    return b;
  }
  return std::nullopt;
}

std::vector<BestRow> Database::best(std::optional<int64_t> taskId) const {
  // The lowest cost per task; the index on (task_id, cost) answers it.
  Statement st = conn_->prepare(std::string("SELECT ") + kRecordColumns +
                                " WHERE records.id IN (SELECT (SELECT r.id FROM records r WHERE r.task_id = tasks.id "
                                "AND " USABLE_COST
                                " ORDER BY r.cost, r.id LIMIT 1) FROM tasks WHERE ? < 0 OR "
                                "tasks.id = ?) ORDER BY records.task_id");
  st.bind(1, taskId.value_or(-1)).bind(2, taskId.value_or(-1));
  std::vector<BestRow> out;
  while (st.step()) {
    BestRow b;
    b.record = readRecord(st);
    out.push_back(std::move(b));
  }
  for (BestRow& b : out)
    if (auto t = taskById(b.record.taskId)) b.task = *t;
  return out;
}

std::string Database::integrityCheck() const {
  Statement st = conn_->prepare("PRAGMA integrity_check");
  std::string out;
  while (st.step())
    out += (out.empty() ? "" : "; ") + st.getText(0);
  return out;
}

}  // namespace tessel::store
