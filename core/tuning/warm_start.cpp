#include "tuning/warm_start.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "frontend/model_loader.h"
#include "knowledge/database_library.h"
#include "knowledge/schedule_transfer.h"
#include "schedule/hardware_params.h"
#include "store/record_store.h"
#include "store/task_rows.h"
#include "target/host_cpu.h"
#include "target/target.h"

namespace tessel::tuning {

namespace {

// Programs of each similar task the database gives (its fastest).
constexpr size_t kHistoryProgramsPerTask = 16;

std::string thousands(size_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string fileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

// "cpu-avx512.tkb, measured on an AMD Zen 4 as this CPU is", or "..., measured
// on an AMD Zen 4, not on this AMD Zen 5: a start, not this CPU's best".
std::string WarmStartSummary::knowledgeText() const {
  std::string t = fileName(knowledge);
  if (knowledgeCpu.empty() || hostCpu.empty()) return t;
  t += ", measured on an " + target::microarchitectureTitle(knowledgeCpu);
  if (knowledgeCpu == hostCpu) return t + " as this CPU is";
  return t + ", not on this " + target::microarchitectureTitle(hostCpu) + ": a start, not this CPU's best";
}

std::string WarmStartSummary::text() const {
  if (!warm) return "cold start: " + why;
  if (!transferred && !historyRecords && costModel.empty())
    return "warm start: nothing stored fits these " + thousands(tasks) + " tasks, they start from the search" +
           (knowledge.empty() ? "" : " (" + knowledgeText() + ")") + (note.empty() ? "" : "; " + note);
  std::string t = "started from " + thousands(storedPrograms) + " stored programs of " + thousands(similarTasks) +
                  (similarTasks == 1 ? " similar task" : " similar tasks") + ": " + thousands(transferred) +
                  " transferred to " + thousands(tasksWithPrograms) + " of " + thousands(tasks) + " tasks";
  if (exactTasks) t += " (" + thousands(exactTasks) + " seen before)";
  if (!costModel.empty()) t += "; " + costModel + " pre-trained on " + thousands(costModelTrainedOn) + " programs";
  if (historyRecords)
    t += "; trained on " + thousands(historyRecords) + " records of " + thousands(historyTasks) +
         " similar tasks of the database";
  if (!knowledge.empty()) t += " (" + knowledgeText() + ")";
  if (!note.empty()) t += "; " + note;
  return t;
}

nlohmann::json WarmStartSummary::toJson() const {
  nlohmann::json j = {{"warm", warm}};
  if (!warm) {
    j["why"] = why;
    return j;
  }
  j["knowledge"] = knowledge.empty() ? nlohmann::json() : nlohmann::json(knowledge);
  if (!knowledgeCpu.empty()) j["knowledge_cpu"] = knowledgeCpu;
  if (!hostCpu.empty()) j["host_cpu"] = hostCpu;
  j["cost_model"] = costModel.empty() ? nlohmann::json() : nlohmann::json(costModel);
  j["similar_tasks"] = similarTasks;
  j["stored_programs"] = storedPrograms;
  j["transferred"] = transferred;
  j["tasks_with_programs"] = tasksWithPrograms;
  j["exact_tasks"] = exactTasks;
  j["history_records"] = historyRecords;
  if (!note.empty()) j["note"] = note;
  return j;
}

WarmStart::WarmStart(const TuningConfig& config) : config_(config.resolved()) {
  if (config_.cold) {
    summary_.why = "--cold";
    return;
  }
  summary_.warm = true;
  if (config_.knowledge.empty()) return;
  const target::Target& target = config_.target;
  // The header first: a file of another class is refused before the rest is read.
  knowledge::checkKnowledgeFits(config_.knowledge, knowledge::readKnowledgeInfo(config_.knowledge), target,
                                cost::kLearnedModelFormat);
  kb_ = std::make_unique<knowledge::KnowledgeBase>(knowledge::readKnowledgeBase(config_.knowledge));
  summary_.knowledge = config_.knowledge;
  summary_.knowledgeCpu = kb_->info.cpu;
  if (target.isCpu()) summary_.hostCpu = target::hostMicroarchitecture();
}

WarmStart::~WarmStart() = default;

std::string WarmStart::costModelName() const {
  if (!kb_ || kb_->costModelFile.empty()) return "";
  const std::string name = cost::costModelNameOf(kb_->costModelFile);
  const cost::CostModelEntry* e = cost::findCostModel(name);
  return e && e->available ? name : "";
}

std::shared_ptr<cost::CostModel> WarmStart::makeCostModel(uint64_t seed) const {
  if (costModelName().empty()) return nullptr;
  return cost::loadCostModelBytes(kb_->costModelFile, config_.knowledge + "'s cost model", seed);
}

void WarmStart::usePretrainedModel() {
  summary_.costModel = kb_->info.costModel;
  summary_.costModelTrainedOn = kb_->info.costModelTrainedOn;
}

void WarmStart::prepare(const std::vector<search::ModelTask>& tasks, const store::Database* db,
                        cost::CostModel* model) {
  candidates_.assign(tasks.size(), {});
  summary_.tasks = tasks.size();
  if (cold()) return;
  if (kb_ && !kb_->costModelFile.empty() && costModelName().empty())
    summary_.note = "its " + kb_->info.costModel + " cost model is not in this build";
  const schedule::HardwareParams hw = schedule::hardwareParams(config_.target);
  std::set<std::string> own;
  for (const search::ModelTask& t : tasks)
    own.insert(t.task.key);
  // The database's tasks that are not this tuning's: its own records are
  // restored by the tuner already (never measured again).
  knowledge::RecordLibrary history;
  if (db) {
    const knowledge::RecordLibrary all = knowledge::libraryOfDatabase(*db, config_.target, kHistoryProgramsPerTask);
    for (const knowledge::LibraryTask& t : all.tasks())
      if (!own.count(t.key)) history.add(t);
  }
  std::vector<const knowledge::RecordLibrary*> libraries;
  if (kb_) libraries.push_back(&kb_->library);
  libraries.push_back(&history);
  std::set<const knowledge::LibraryTask*> sources;  // each stored task counted once
  for (size_t i = 0; i < tasks.size(); ++i) {
    const task::SearchTask& task = tasks[i].task;
    const knowledge::TransferResult r =
        knowledge::transferPrograms(task, schedule::generateSketches(task.dag, hw), hw, libraries);
    bool exact = false;
    for (const knowledge::TransferredProgram& p : r.programs) {
      exact |= p.exact;
      candidates_[i].push_back(
          {p.steps, p.hasDecisions ? std::optional<schedule::ProgramDecisions>(p.decisions) : std::nullopt, p.exact});
    }
    for (const knowledge::LibraryTask* t : r.sources)
      if (sources.insert(t).second) summary_.storedPrograms += t->programs.size();
    summary_.transferred += r.programs.size();
    summary_.tasksWithPrograms += r.programs.empty() ? 0 : 1;
    summary_.exactTasks += exact ? 1 : 0;
  }
  summary_.similarTasks = sources.size();
  if (db && model && !history.empty()) trainOnHistory(tasks, *db, history, *model);
}

void WarmStart::trainOnHistory(const std::vector<search::ModelTask>& tasks, const store::Database& db,
                               const knowledge::RecordLibrary& history, cost::CostModel& model) {
  // The database's tasks of the same structure as one of the tuning's, rebuilt
  // (tune-op's from their op and shape, a model's from the model) to compute
  // the features of their records.
  std::vector<knowledge::TaskStructure> wanted;
  for (const search::ModelTask& t : tasks)
    wanted.push_back(knowledge::structureOf(t.task.dag.toString()));
  std::map<std::string, std::map<std::string, task::SearchTask>> modelTasks;  // model -> key -> task
  auto rebuild = [&](const knowledge::LibraryTask& t) -> std::optional<task::SearchTask> {
    if (auto row = db.taskByKey(t.key, t.target.str())) {
      try {
        return store::operatorTaskOf(*row);
      } catch (const std::exception&) {
        // A model's subgraph: rebuilt from the model below.
      }
    }
    for (const std::string& m : t.models) {
      auto [it, fresh] = modelTasks.try_emplace(m);
      if (fresh) {
        try {
          for (const fusion::GraphTask& g : frontend::prepareModel(m, "", config_.fusion, config_.target).tasks) {
            task::SearchTask st = fusion::toSearchTask(g, config_.target);
            const std::string key = st.key;
            it->second.emplace(key, std::move(st));
          }
        } catch (const std::exception&) {
          // A model file that is gone, or one that needs input shapes: its records stay unused.
        }
      }
      if (auto found = it->second.find(t.key); found != it->second.end()) return found->second;
    }
    return std::nullopt;
  };
  std::vector<cost::TaskRecords> records;
  for (const knowledge::LibraryTask& t : history.tasks()) {
    const bool similar = std::any_of(wanted.begin(), wanted.end(), [&](const knowledge::TaskStructure& s) {
      return std::isfinite(knowledge::structureDistance(s, t.structure));
    });
    if (!similar) continue;
    const std::optional<task::SearchTask> task = rebuild(t);
    const std::optional<store::TaskRow> row = db.taskByKey(t.key, t.target.str());
    if (!task || !row) continue;
    std::vector<cost::Program> programs;
    std::vector<double> costs;
    for (const store::RecordRow& r : db.records().ofTask(row->id))
      if (auto steps = schedule::replayableSteps(task->dag, r.steps)) {
        programs.push_back(std::move(*steps));
        costs.push_back(r.ok() ? r.medianCost() : INFINITY);
      }
    if (programs.empty()) continue;
    records.push_back(
        {task->key, cost::extractFeatureSets(task->dag, programs, model.features(), config_.target), costs});
    summary_.historyRecords += programs.size();
    ++summary_.historyTasks;
  }
  if (!records.empty()) model.updateFeatures(records);
}

std::vector<search::SearchPolicy::Candidate> WarmStart::takeCandidates(size_t task) {
  if (task >= candidates_.size()) return {};
  return std::move(candidates_[task]);
}

}  // namespace tessel::tuning
