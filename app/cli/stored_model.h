// A model's fused tasks rebuilt for what the database stored of them: the
// definitions export and `db show --code` need for tasks that are not
// library operators, prepared the way the model was tuned (its sessions'
// fusion and target).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "store/database.h"
#include "te/compute_dag.h"

namespace tessel::cli {

// Workload key -> definition, for every task of `model` as Tessel prepares it now.
std::map<std::string, te::ComputeDAG> storedModelDefinitions(const store::Database& db, const std::string& model);
// A model of the database that has the task (none for a tune-op task).
std::optional<std::string> modelOfTask(const store::Database& db, const std::string& key);

}  // namespace tessel::cli
