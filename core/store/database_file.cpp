// Opening a database file: its header checked before SQLite reads it, one
// writer at a time (a lock file beside it), its integrity checked, its schema
// created, migrated and verified. The queries are in database.cpp and the
// stores (store/*_store.cpp).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <thread>

#include "store/database.h"
#include "store/session_store.h"
#include "support/input_file.h"

namespace tessel::store {

namespace {

namespace fs = std::filesystem;

// "TSL1": marks a file as Tessel's (PRAGMA application_id).
constexpr int64_t kApplicationId = 0x54534c31;

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
    // 3: a model's runs against LibTorch (tessel run --json), by the studio.
    // IF NOT EXISTS: a file whose version was set back by hand keeps its runs.
    R"sql(
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  session_id INTEGER REFERENCES sessions(id),
  model TEXT NOT NULL,
  target TEXT NOT NULL,
  fusion TEXT NOT NULL,
  created TEXT NOT NULL,
  result TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS runs_by_session ON runs(session_id, id);
)sql",
    // 4: the state of the cost model that scored a record: how many measured
    // programs it had learned from (NULL: not scored, or unknown) and whether
    // it was loaded trained. 0 and not pretrained: an untrained model.
    R"sql(
ALTER TABLE records ADD COLUMN model_trained_on INTEGER;
ALTER TABLE records ADD COLUMN model_pretrained INTEGER NOT NULL DEFAULT 0;
)sql",
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kSchemaVersion);

using TableColumns = std::map<std::string, std::vector<std::string>>;
TableColumns tableColumns(Connection& c);

// Runs a migration statement by statement; an ALTER TABLE ... ADD COLUMN of
// a column the table has already is skipped (a file whose version was set
// back by hand keeps its columns, as CREATE ... IF NOT EXISTS keeps tables).
// The migrations hold no ';' inside a statement.
void runMigration(Connection& c, const std::string& sql) {
  static const std::regex addColumn(R"(^\s*ALTER TABLE (\w+) ADD COLUMN (\w+))", std::regex::icase);
  size_t start = 0;
  while (start < sql.size()) {
    size_t end = sql.find(';', start);
    if (end == std::string::npos) end = sql.size();
    const std::string statement = sql.substr(start, end - start);
    start = end + 1;
    if (statement.find_first_not_of(" \n\t") == std::string::npos) continue;
    std::smatch m;
    if (std::regex_search(statement, m, addColumn)) {
      const TableColumns tables = tableColumns(c);
      auto t = tables.find(m[1].str());
      if (t != tables.end() && std::find(t->second.begin(), t->second.end(), m[2].str()) != t->second.end()) continue;
    }
    c.exec(statement);
  }
}

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
      db->sessions().markInterrupted();
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
    runMigration(*conn_, kMigrations[v]);
  conn_->exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  conn_->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
  tx.commit();
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

int64_t Database::pragmaInt(Connection& c, const char* name) {
  Statement st = c.prepare(std::string("PRAGMA ") + name);
  return st.step() ? st.getInt(0) : 0;
}

}  // namespace tessel::store
