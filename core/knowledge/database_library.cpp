#include "knowledge/database_library.h"

#include <map>

#include "store/record_store.h"

namespace tessel::knowledge {

RecordLibrary libraryOfDatabase(const store::Database& db, const target::Target& target, size_t perTask) {
  std::map<int64_t, std::vector<std::string>> modelsOf;
  for (const std::string& model : db.modelNames())
    for (const auto& [task, weight] : db.modelTasks(model))
      modelsOf[task.id].push_back(model);
  RecordLibrary lib;
  for (const store::TaskRow& row : db.tasks()) {
    if (row.target != target.str()) continue;  // the database keeps canonical strings
    LibraryTask t;
    t.key = row.key;
    t.target = target;
    t.op = row.op;
    t.compute = row.compute;
    t.flops = row.flops;
    t.models = modelsOf[row.id];
    for (const store::RecordRow& r : db.records().fastest(row.id, perTask))
      t.programs.push_back({r.steps, r.decisions, r.medianCost()});
    if (!t.programs.empty()) lib.add(std::move(t));
  }
  return lib;
}

}  // namespace tessel::knowledge
