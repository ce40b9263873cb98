#include "stored_model.h"

#include <nlohmann/json.hpp>
#include <set>

#include "frontend/model_loader.h"

namespace tessel::cli {

std::map<std::string, te::ComputeDAG> storedModelDefinitions(const store::Database& db, const std::string& model) {
  std::string fusion = "dp", target = "cpu";
  for (const store::SessionRow& s : db.sessions())
    if (s.kind == "model" && s.subject == model) {
      const nlohmann::json config = nlohmann::json::parse(s.config, nullptr, false);
      if (config.is_object()) {
        fusion = config.value("fusion", fusion);
        target = config.value("target", target);
      }
    }
  std::map<std::string, te::ComputeDAG> definitions;
  for (const fusion::GraphTask& t : frontend::prepareModel(model, "", fusion, target).tasks)
    definitions[t.key] = t.dag;
  return definitions;
}

std::optional<std::string> modelOfTask(const store::Database& db, const std::string& key) {
  std::set<std::string> models;  // a model's many sessions: its tasks read once
  for (const store::SessionRow& s : db.sessions())
    if (s.kind == "model" && models.insert(s.subject).second)
      for (const auto& [task, weight] : db.modelTasks(s.subject))
        if (task.key == key) return s.subject;
  return std::nullopt;
}

}  // namespace tessel::cli
