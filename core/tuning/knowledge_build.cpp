#include "tuning/knowledge_build.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "knowledge/database_library.h"
#include "schedule/decision_inference.h"
#include "schedule/hardware_params.h"
#include "support/input_file.h"
#include "target/host_cpu.h"
#include "target/target.h"
#include "tuning/dataset.h"

namespace tessel::tuning {

namespace {

// A dataset's records of one task (on the target), from every model that has it.
struct TaskGroup {
  const task::SearchTask* task = nullptr;
  std::vector<std::string> models;
  std::vector<const DatasetRecord*> records;
};

std::string fileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// The fastest distinct valid programs of a group, with their decisions where
// the task's sketches give them.
knowledge::LibraryTask libraryTaskOf(const TaskGroup& g, const std::vector<schedule::Sketch>& sketches,
                                     const schedule::HardwareParams& hw, size_t perTask,
                                     KnowledgeBuildSummary& summary) {
  std::vector<const DatasetRecord*> valid;
  for (const DatasetRecord* r : g.records)
    if (std::isfinite(r->cost) && r->cost > 0) valid.push_back(r);
  std::stable_sort(valid.begin(), valid.end(),
                   [](const DatasetRecord* a, const DatasetRecord* b) { return a->cost < b->cost; });
  knowledge::LibraryTask t;
  t.key = g.task->key;
  t.target = g.records.front()->target;
  t.op = g.task->op;
  t.compute = g.task->dag.toString();
  t.flops = g.task->flops;
  t.models = g.models;
  std::set<std::string> seen;
  for (const DatasetRecord* r : valid) {
    if (t.programs.size() >= perTask) break;
    const auto steps = schedule::replayableSteps(g.task->dag, r->steps);
    if (!steps) continue;
    const std::string text = schedule::serializeSteps(*steps);
    if (!seen.insert(text).second) continue;
    knowledge::LibraryProgram p{text, "", r->cost};
    if (auto d = schedule::inferDecisions(sketches, *steps, hw)) {
      p.decisions = schedule::serializeDecisions(*d);
      ++summary.withDecisions;
    }
    t.programs.push_back(std::move(p));
  }
  return t;
}

}  // namespace

knowledge::KnowledgeBase buildKnowledgeBase(const KnowledgeBuildConfig& c, KnowledgeBuildSummary* summary) {
  KnowledgeBuildSummary local;
  KnowledgeBuildSummary& s = summary ? *summary : local;
  const target::Target& target = c.target;
  const target::Target measuredOn = c.measuredOn.value_or(target);
  const schedule::HardwareParams hw = schedule::hardwareParams(measuredOn);
  const std::set<std::string> leaveOut(c.leaveOut.begin(), c.leaveOut.end());

  knowledge::KnowledgeBase kb;
  kb.info.targetClass = knowledge::targetClass(measuredOn);
  kb.info.threads = measuredOn.effectiveThreads();
  kb.info.cpu = !c.cpu.empty() || c.measuredOn || !measuredOn.isCpu() ? c.cpu : target::hostMicroarchitecture();
  kb.info.learnedFormat = cost::kLearnedModelFormat;

  // Datasets: records grouped by task, each model's tasks rebuilt once.
  std::vector<DatasetRecord> records;
  for (const std::string& path : c.datasets) {
    for (DatasetRecord& r : readDataset(path))
      if (r.target == target && !leaveOut.count(r.model)) records.push_back(std::move(r));
    kb.info.builtFrom.push_back(fileName(path));
  }
  s.records = records.size();
  std::map<std::string, std::map<std::string, task::SearchTask>> tasksOf;  // model -> key -> task
  std::map<std::string, TaskGroup> groups;                                 // by workload key
  std::vector<std::string> order;
  for (const DatasetRecord& r : records) {
    auto [models, fresh] = tasksOf.try_emplace(r.model);
    if (fresh) models->second = tasksOfModel(r.model, target);
    auto t = models->second.find(r.task);
    if (t == models->second.end()) {
      ++s.unbuilt;
      continue;
    }
    auto [g, added] = groups.try_emplace(r.task);
    if (added) {
      g->second.task = &t->second;
      order.push_back(r.task);
    }
    if (std::find(g->second.models.begin(), g->second.models.end(), r.model) == g->second.models.end())
      g->second.models.push_back(r.model);
    g->second.records.push_back(&r);
  }
  for (const std::string& key : order) {
    const TaskGroup& g = groups.at(key);
    knowledge::LibraryTask t = libraryTaskOf(g, schedule::generateSketches(g.task->dag, hw), hw, c.programsPerTask, s);
    if (!t.programs.empty()) kb.library.add(std::move(t));
  }

  // Databases: their records carry their decisions already.
  for (const std::string& path : c.databases) {
    auto db = store::Database::open(path, store::OpenMode::ReadOnly);
    const knowledge::RecordLibrary stored = knowledge::libraryOfDatabase(*db, target, c.programsPerTask);
    for (const knowledge::LibraryTask& t : stored.tasks()) {
      bool models = t.models.empty();
      for (const std::string& m : t.models)
        models |= !leaveOut.count(m);
      if (!models) continue;
      for (const knowledge::LibraryProgram& p : t.programs)
        s.withDecisions += p.decisions.empty() ? 0 : 1;
      kb.library.add(t);
    }
    kb.info.builtFrom.push_back(fileName(path));
  }

  if (!c.costModel.empty() && !c.costModelFile.empty())
    throw std::invalid_argument("give a cost model to train or a trained model's file, not both");
  if (!c.costModel.empty()) {
    // As `tessel costmodel train`: every record of the datasets, on its task rebuilt.
    const std::unique_ptr<cost::CostModel> model = cost::makeCostModel(c.costModel, c.seed);
    model->pretrain(featuresOf(records, model->features()).tasks, c.epochs);
    kb.costModelFile = cost::costModelFileBytes(*model);
    kb.info.costModel = model->name();
    kb.info.costModelTrainedOn = model->trainedOn();
  } else if (!c.costModelFile.empty()) {
    kb.costModelFile = support::readRegularFile(c.costModelFile, "cost model file", support::defaultMaxInputBytes());
    const auto model = cost::loadCostModelBytes(kb.costModelFile, c.costModelFile);
    kb.info.costModel = model->name();
    kb.info.costModelTrainedOn = model->trainedOn();  // 0: a model's file does not say
  }
  s.tasks = kb.library.tasks().size();
  s.programs = kb.library.programs();
  return kb;
}

}  // namespace tessel::tuning
