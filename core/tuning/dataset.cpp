#include "tuning/dataset.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "store/record_store.h"
#include "store/task_rows.h"
#include "support/compressed_lines.h"
#include "target/target.h"
#include "task/search_task.h"

namespace tessel::tuning {

namespace {

nlohmann::json toJson(const DatasetRecord& r) {
  return {{"model", r.model},
          {"task", r.task},
          {"weight", r.weight},
          {"target", r.target.str()},
          {"steps", nlohmann::json::parse(r.steps)},
          {"cost", std::isfinite(r.cost) ? nlohmann::json(r.cost) : nlohmann::json(nullptr)}};
}

DatasetRecord fromJson(const nlohmann::json& j) {
  DatasetRecord r;
  r.model = j.at("model").get<std::string>();
  r.task = j.at("task").get<std::string>();
  r.weight = j.value("weight", 1.0);
  r.target = target::parseTarget(j.value("target", std::string("cpu")));  // the file keeps canonical strings
  r.steps = j.at("steps").dump();
  r.cost = j.at("cost").is_null() ? INFINITY : j.at("cost").get<double>();
  return r;
}

}  // namespace

std::vector<DatasetRecord> datasetFromDatabase(const store::Database& db, const std::vector<std::string>& models,
                                               const std::optional<target::Target>& target) {
  const std::vector<std::string> names = models.empty() ? db.modelNames() : models;
  std::vector<DatasetRecord> out;
  for (const std::string& model : names) {
    const auto tasks = db.modelTasks(model);
    if (tasks.empty()) throw std::runtime_error("the database has no model named '" + model + "'");
    for (const auto& [task, weight] : tasks)
      if (!target || task.target == target->str())  // the database keeps canonical strings
        for (const store::RecordRow& r : db.records().ofTask(task.id))
          out.push_back({model, task.key, weight, store::targetOf(task), r.steps, r.ok() ? r.medianCost() : INFINITY});
  }
  return out;
}

void writeDataset(const std::string& path, const std::vector<DatasetRecord>& records) {
  size_t next = 0;
  support::writeLines(path, [&](std::string& line) {
    if (next == records.size()) return false;
    line = toJson(records[next++]).dump();
    return true;
  });
}

std::vector<DatasetRecord> readDataset(const std::string& path) {
  std::vector<DatasetRecord> out;
  support::readLines(path, "dataset", [&](const std::string& line, size_t number) {
    try {
      out.push_back(fromJson(nlohmann::json::parse(line)));
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": not a dataset record (" + e.what() + ")");
    }
  });
  return out;
}

std::map<std::string, task::SearchTask> tasksOfModel(const std::string& model, const target::Target& target) {
  std::map<std::string, task::SearchTask> tasks;
  const frontend::PreparedModel m = frontend::prepareModel(model, "", "dp", target);
  for (const fusion::GraphTask& t : m.tasks) {
    task::SearchTask st = fusion::toSearchTask(t, target);
    const std::string key = st.key;
    tasks.emplace(key, std::move(st));
  }
  return tasks;
}

DatasetTasks featuresOf(const std::vector<DatasetRecord>& records, cost::FeatureKinds kinds) {
  // Each model once: its tasks by key.
  std::map<std::pair<std::string, std::string>, std::map<std::string, task::SearchTask>> tasksOf;
  for (const DatasetRecord& r : records) {
    auto& tasks = tasksOf[{r.model, r.target.str()}];
    if (tasks.empty()) tasks = tasksOfModel(r.model, r.target);
  }
  // Records grouped by (model, task on its target), in the order they first appear.
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::vector<const DatasetRecord*>> groups;
  for (const DatasetRecord& r : records) {
    auto [it, fresh] = index.emplace(std::make_pair(r.model, task::recordKey(r.task, r.target)), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&r);
  }
  DatasetTasks out;
  for (const auto& group : groups) {
    const DatasetRecord& first = *group.front();
    const auto& tasks = tasksOf[{first.model, first.target.str()}];
    auto t = tasks.find(first.task);
    if (t == tasks.end())
      throw std::runtime_error("task " + first.task + " is not a task of " + first.model +
                               " as Tessel builds it now (the dataset is older than its definition)");
    std::vector<cost::Program> programs;
    std::vector<double> costs;
    for (const DatasetRecord* r : group) {
      try {
        programs.push_back(schedule::deserializeSteps(r->steps));
        costs.push_back(r->cost);
      } catch (const std::exception&) {
        ++out.skipped;  // steps of a format this build does not read
      }
    }
    std::vector<cost::ProgramFeatureSet> sets = cost::extractFeatureSets(t->second.dag, programs, kinds, first.target);
    cost::TaskRecords tr{task::recordKey(first.task, first.target), {}, {}};
    for (size_t i = 0; i < sets.size(); ++i) {
      if (!sets[i].valid) {
        ++out.skipped;
        continue;
      }
      tr.programs.push_back(std::move(sets[i]));
      tr.costs.push_back(costs[i]);
    }
    out.tasks.push_back(std::move(tr));
    out.model.push_back(first.model);
    out.weight.push_back(first.weight);
  }
  return out;
}

std::pair<std::vector<DatasetRecord>, std::vector<DatasetRecord>> splitByModel(
    const std::vector<DatasetRecord>& records, const std::vector<std::string>& heldOut) {
  const std::set<std::string> out(heldOut.begin(), heldOut.end());
  std::pair<std::vector<DatasetRecord>, std::vector<DatasetRecord>> split;
  for (const DatasetRecord& r : records)
    (out.count(r.model) ? split.first : split.second).push_back(r);
  return split;
}

std::vector<cost::EvalTask> scoreTasks(cost::CostModel& model, const DatasetTasks& data) {
  std::vector<cost::EvalTask> out;
  for (size_t t = 0; t < data.tasks.size(); ++t) {
    const cost::TaskRecords& tr = data.tasks[t];
    if (tr.programs.empty()) continue;
    out.push_back(
        {data.model[t], tr.taskKey, data.weight[t], tr.costs, model.predictFeatures(tr.taskKey, tr.programs)});
  }
  return out;
}

}  // namespace tessel::tuning
