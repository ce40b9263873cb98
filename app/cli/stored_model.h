// A model's fused tasks rebuilt for what the database stored of them: the
// definitions export and `db show --code` need for tasks that are not
// library operators, prepared the way the model was tuned (its sessions'
// fusion and target).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "store/database.h"
#include "store/record_store.h"
#include "te/compute_dag.h"

namespace tessel::cli {

// Workload key -> definition, for every task of `model` as Tessel prepares it now.
std::map<std::string, te::ComputeDAG> storedModelDefinitions(const store::Database& db, const std::string& model);
// A model of the database that has the task (none for a tune-op task).
std::optional<std::string> modelOfTask(const store::Database& db, const std::string& key);

// Definitions of stored tasks as Tessel rebuilds them now, to replay their
// records on: a library operator's from its op and shape, a model's fused
// subgraph from the model (prepared once per model, on first use).
class StoredDefinitions {
 public:
  explicit StoredDefinitions(const store::Database& db);
  // Null when the task cannot be rebuilt (its model file is gone, or its
  // definition changed since it was tuned).
  const te::ComputeDAG* of(const store::TaskRow& task);

 private:
  const store::Database& db_;
  std::map<std::string, std::string> modelOfKey_;
  std::set<std::string> preparedModels_;
  std::map<std::string, std::optional<te::ComputeDAG>> byKey_;
};

// The task's best record that replays on its definition where it can be
// rebuilt (better ones that do not are skipped and counted in *skipped),
// else its best valid record as stored.
std::optional<store::BestRow> bestCheckedRecord(const store::Database& db, StoredDefinitions& definitions,
                                                const store::TaskRow& task, int64_t* skipped);

}  // namespace tessel::cli
