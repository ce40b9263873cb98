// The tuning database: one SQLite file (WAL) holding targets, models, tasks,
// tuning sessions, every measured record, saved cost models and runs (SPEC
// "Store"). Opening checks the file before anything is written: a missing
// file (read-only), a file that is not SQLite, a corrupt one or one of a
// newer schema is a StoreError naming the problem, and the file is left as
// it was. Many readers may follow one writer; a second writer is refused.
//
// Database is the file (open, the writer lock, the schema, integrity,
// statistics) and what the rest is keyed by: tasks and models. Sessions,
// records, saved cost models and runs are stores of their own over its one
// connection, reached through it: db.sessions(), db.records(),
// db.costModels(), db.runs() (store/session_store.h, record_store.h,
// cost_model_store.h, run_store.h). Each is a view bound to the Database, to
// use while it is open; a const Database gives only their reading half.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/sqlite.h"

namespace tessel::store {

// 2: sessions.message; 3: runs (store/run_store.h); 4: records.model_trained_on and model_pretrained.
inline constexpr int kSchemaVersion = 4;

enum class OpenMode {
  ReadOnly,   // the file must exist
  ReadWrite,  // created if missing (its folder must exist); takes the writer lock
};

struct TaskRow {
  int64_t id = 0;
  std::string key;  // workload key
  std::string target = "cpu";
  std::string device;  // the machine measured on (hostDevice() for the CPU)
  std::string op;
  std::vector<int64_t> shape;
  std::string layout;   // "" for ops without images
  std::string compute;  // the compute definition, as text
  double flops = 0;     // floating-point operations of one run of the task
};

struct Stats {
  int64_t records = 0, validRecords = 0, distinctPrograms = 0, sessions = 0, tasks = 0, models = 0, costModels = 0;
  // Records whose steps do not parse as schedule steps (a damaged or edited
  // file): the tuner skips them, they are never measured or learned from.
  int64_t damagedRecords = 0;
  int schemaVersion = 0;
};

class SessionReader;
class SessionStore;
class RecordReader;
class RecordStore;
class CostModelReader;
class CostModelStore;
class RunReader;
class RunStore;

class Database {
 public:
  // Throws StoreError naming the problem (see above).
  static std::unique_ptr<Database> open(const std::string& path, OpenMode mode);
  ~Database();

  const std::string& path() const { return conn_->path(); }
  OpenMode mode() const { return mode_; }
  Connection& connection() { return *conn_; }

  int64_t ensureTask(const TaskRow& task);  // by (key, target); returns its id
  std::optional<TaskRow> taskByKey(const std::string& key, const std::string& target = "") const;
  std::optional<TaskRow> taskById(int64_t id) const;
  std::vector<TaskRow> tasks() const;

  int64_t ensureModel(const std::string& name, const std::string& source);
  void setModelTask(int64_t modelId, int64_t taskId, double weight);
  // The tasks of a model with their weights.
  std::vector<std::pair<TaskRow, double>> modelTasks(const std::string& model) const;
  // The names of the models the database knows, in the order they came.
  std::vector<std::string> modelNames() const;

  // The stores over this file's connection (see above). Each is defined in
  // its own file and needs its header where it is used.
  SessionStore sessions();
  SessionReader sessions() const;
  RecordStore records();
  RecordReader records() const;
  CostModelStore costModels();
  CostModelReader costModels() const;
  RunStore runs();
  RunReader runs() const;

  Stats stats() const;
  // The file's schema (kSchemaVersion once opened for writing; an older
  // file read as it is lacks what later versions added).
  int64_t schemaVersion() const { return schemaVersion_; }
  // PRAGMA integrity_check: "ok" or the first problems found.
  std::string integrityCheck() const;

 private:
  // A session read by a reader is `running` only while a writer is alive,
  // and has a message only from schema 2 on.
  friend class SessionReader;

  Database(std::unique_ptr<Connection> c, OpenMode mode, int lockFd);
  void createOrMigrate();
  // Whether a process holds the writer lock (for a reader: is `running` true?).
  bool writerAlive() const;
  static int64_t pragmaInt(Connection& c, const char* name);  // PRAGMA name's integer (0 if none)

  std::unique_ptr<Connection> conn_;
  OpenMode mode_;
  int lockFd_ = -1;
  int64_t schemaVersion_ = kSchemaVersion;
};

// Where tune-op and tune keep results without --db: $TESSEL_DB, else
// $XDG_DATA_HOME/tessel/tessel.db, else ~/.local/share/tessel/tessel.db.
std::string defaultDatabasePath();

// This machine as a device name: the CPU model and its core count.
std::string hostDevice();

}  // namespace tessel::store
