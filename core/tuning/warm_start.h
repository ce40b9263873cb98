// A model tuning's warm start (unless --cold): what Tessel already knows,
// made ready for the tasks of one tuning. The knowledge base of the target's
// class (knowledge/knowledge_base.h) gives a pre-trained cost model and a
// record library; the tuning's own database gives a second library and the
// records of similar tasks that the cost model trains on before the first
// round (AutoTVM's transfer learning). Each task's first round then measures
// the programs transferred to it (knowledge/schedule_transfer.h), and the
// evolutionary search starts from them.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.h"
#include "search/task_scheduler.h"
#include "store/database.h"
#include "tuning/tuning_config.h"

namespace tessel::tuning {

struct WarmStartSummary {
  bool warm = false;
  std::string why;        // why it is cold: "--cold", "no knowledge base for cpu-avx2 targets"
  std::string knowledge;  // the knowledge base's file ("" if none)
  // The microarchitectures (target/host_cpu.h) that measured its programs
  // ("" unknown) and that tunes now (CPU targets; "" for a GPU).
  std::string knowledgeCpu, hostCpu;
  std::string note;       // what of it was left unused, and why ("" if nothing)
  std::string costModel;  // its pre-trained model, when the tuning starts from it ("" otherwise)
  size_t costModelTrainedOn = 0;
  size_t similarTasks = 0;    // stored tasks the programs come from (exact matches included)
  size_t storedPrograms = 0;  // the programs those tasks hold
  size_t transferred = 0;     // programs made ready for the tasks' first rounds
  size_t tasksWithPrograms = 0, exactTasks = 0, tasks = 0;
  size_t historyRecords = 0, historyTasks = 0;  // the database's, trained on before the first round
  // One line, e.g. "started from 1,204 stored programs of 14 similar tasks:
  // 96 transferred to 12 of 18 tasks; atformer pre-trained on 21,008 programs
  // (cpu-avx512.tkb, measured on an AMD Zen 4 as this CPU is)", or why the
  // tuning starts cold.
  std::string text() const;
  // The knowledge base's file and, for a CPU, the machine that measured it
  // against this one.
  std::string knowledgeText() const;
  nlohmann::json toJson() const;
};

class WarmStart {
 public:
  // Reads config.knowledge unless config.cold. A knowledge base of another
  // format or target class is knowledge::KnowledgeMismatch naming both; a
  // damaged one std::runtime_error naming the file.
  explicit WarmStart(const TuningConfig& config);
  ~WarmStart();

  bool cold() const { return config_.cold; }
  // The knowledge base's pre-trained model, if it holds one this build can
  // make ("" otherwise), and a fresh copy of it.
  std::string costModelName() const;
  std::shared_ptr<cost::CostModel> makeCostModel(uint64_t seed) const;
  // Tells the summary the tuning starts from the pre-trained model.
  void usePretrainedModel();

  // Gathers every task's transferred programs, from the knowledge base and
  // the database (may be null: no history), and trains `model` (may be null)
  // on the database's records of similar tasks that are not the tuning's.
  void prepare(const std::vector<search::ModelTask>& tasks, const store::Database* db, cost::CostModel* model);
  // Task i's programs (once: they move to the tuner).
  std::vector<search::SearchPolicy::Candidate> takeCandidates(size_t task);
  const WarmStartSummary& summary() const { return summary_; }

 private:
  void trainOnHistory(const std::vector<search::ModelTask>& tasks, const store::Database& db,
                      const knowledge::RecordLibrary& history, cost::CostModel& model);

  TuningConfig config_;
  std::unique_ptr<knowledge::KnowledgeBase> kb_;
  std::vector<std::vector<search::SearchPolicy::Candidate>> candidates_;
  WarmStartSummary summary_;
};

}  // namespace tessel::tuning
