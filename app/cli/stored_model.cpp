#include "stored_model.h"

#include <nlohmann/json.hpp>
#include <set>

#include "frontend/model_loader.h"
#include "store/session_store.h"
#include "store/task_rows.h"

namespace tessel::cli {

std::map<std::string, te::ComputeDAG> storedModelDefinitions(const store::Database& db, const std::string& model) {
  std::string fusion = "dp", target = target::Target::host().str();
  for (const store::SessionRow& s : db.sessions().all())
    if (s.kind == "model" && s.subject == model) {
      const nlohmann::json config = nlohmann::json::parse(s.config, nullptr, false);
      if (config.is_object()) {
        fusion = config.value("fusion", fusion);
        target = config.value("target", target);
      }
    }
  std::map<std::string, te::ComputeDAG> definitions;
  // The session's config keeps the target's canonical string.
  for (const fusion::GraphTask& t : frontend::prepareModel(model, "", fusion, target::parseTarget(target)).tasks)
    definitions[t.key] = t.dag;
  return definitions;
}

std::optional<std::string> modelOfTask(const store::Database& db, const std::string& key) {
  std::set<std::string> models;  // a model's many sessions: its tasks read once
  for (const store::SessionRow& s : db.sessions().all())
    if (s.kind == "model" && models.insert(s.subject).second)
      for (const auto& [task, weight] : db.modelTasks(s.subject))
        if (task.key == key) return s.subject;
  return std::nullopt;
}

StoredDefinitions::StoredDefinitions(const store::Database& db) : db_(db) {
  std::set<std::string> models;
  for (const store::SessionRow& s : db.sessions().all())
    if (s.kind == "model" && models.insert(s.subject).second)
      for (const auto& [task, weight] : db.modelTasks(s.subject))
        modelOfKey_.emplace(task.key, s.subject);
}

const te::ComputeDAG* StoredDefinitions::of(const store::TaskRow& task) {
  if (auto it = byKey_.find(task.key); it != byKey_.end()) return it->second ? &*it->second : nullptr;
  if (auto m = modelOfKey_.find(task.key); m != modelOfKey_.end()) {
    if (preparedModels_.insert(m->second).second) {
      try {
        for (auto& [key, dag] : storedModelDefinitions(db_, m->second))
          byKey_.emplace(key, std::move(dag));
      } catch (const std::exception&) {
        // The model cannot be prepared here (its file moved): its tasks stay unchecked.
      }
    }
    auto [it, inserted] = byKey_.try_emplace(task.key, std::nullopt);
    return it->second ? &*it->second : nullptr;
  }
  std::optional<te::ComputeDAG> dag;
  try {
    dag = store::operatorTaskOf(task).dag;
  } catch (const std::exception&) {
    // Not an operator Tessel knows now, or its definition changed: unchecked.
  }
  auto [it, inserted] = byKey_.emplace(task.key, std::move(dag));
  return it->second ? &*it->second : nullptr;
}

std::optional<store::BestRow> bestCheckedRecord(const store::Database& db, StoredDefinitions& definitions,
                                                const store::TaskRow& task, int64_t* skipped) {
  if (skipped) *skipped = 0;
  if (const te::ComputeDAG* dag = definitions.of(task)) return store::bestReplayable(db, task.id, *dag, skipped);
  std::vector<store::BestRow> best = db.records().best(task.id);
  if (best.empty()) return std::nullopt;
  return std::move(best.front());
}

}  // namespace tessel::cli
