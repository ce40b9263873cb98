#include "tuning/dataset_remeasure.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "frontend/model_loader.h"
#include "fusion/task_extraction.h"
#include "measure/program_measurer.h"

namespace tessel::tuning {

namespace {

using GroupKey = std::pair<std::string, std::string>;  // model, task

struct Group {
  GroupKey key;
  std::vector<const DatasetRecord*> records;
};

// Written beside the output and renamed over it, so that a run stopped while
// writing leaves the last complete file.
void writeAtomically(const std::string& path, const std::vector<DatasetRecord>& records) {
  const std::string tmp = path + ".part" + (path.ends_with(".gz") ? ".gz" : "");
  writeDataset(tmp, records);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw std::runtime_error("cannot write " + path + ": " + ec.message());
}

// The records to relabel, grouped by task in the order they first appear.
std::vector<Group> selectGroups(const std::vector<DatasetRecord>& in, const std::vector<std::string>& models,
                                const target::Target& target) {
  const std::set<std::string> wanted(models.begin(), models.end());
  std::map<GroupKey, size_t> index;
  std::vector<Group> groups;
  std::set<std::string> seen;
  for (const DatasetRecord& r : in) {
    if (!wanted.empty() && !wanted.count(r.model)) continue;
    if (r.target != target)
      throw std::invalid_argument("a record of " + r.model + " is for target '" + r.target.str() +
                                  "', not the target measured here ('" + target.str() + "'); pass --target '" +
                                  r.target.str() + "' or select other models");
    seen.insert(r.model);
    auto [it, fresh] = index.emplace(GroupKey{r.model, r.task}, groups.size());
    if (fresh) groups.push_back({it->first, {}});
    groups[it->second].records.push_back(&r);
  }
  for (const std::string& m : models)
    if (!seen.count(m)) throw std::invalid_argument("the dataset has no records of model '" + m + "'");
  return groups;
}

}  // namespace

double medianLabel(std::vector<double> costs) {
  std::vector<double> ok;
  for (double c : costs)
    if (std::isfinite(c)) ok.push_back(c);
  if (ok.empty() || 2 * ok.size() < costs.size()) return INFINITY;
  std::sort(ok.begin(), ok.end());
  const size_t n = ok.size();
  return n % 2 ? ok[n / 2] : 0.5 * (ok[n / 2 - 1] + ok[n / 2]);
}

RemeasureSummary remeasureDataset(const std::vector<DatasetRecord>& in, const RemeasureConfig& config,
                                  const std::string& outPath, const RemeasureEvents& events) {
  if (config.repeats < 1) throw std::invalid_argument("repeats must be at least 1");
  if (config.tuning.batch < 1) throw std::invalid_argument("the batch must be at least 1");
  TuningConfig t = config.tuning;
  t.command = "dataset remeasure";
  t = t.resolved();
  const std::vector<Group> groups = selectGroups(in, config.models, t.target);

  // What an earlier run wrote is kept, task by task.
  std::vector<DatasetRecord> out;
  if (std::filesystem::exists(outPath)) out = readDataset(outPath);
  std::set<GroupKey> done;
  for (const DatasetRecord& r : out)
    done.insert({r.model, r.task});

  // Every task is rebuilt before anything is measured, so that a dataset
  // older than a task's definition fails at once.
  std::map<GroupKey, task::SearchTask> tasks;
  std::set<std::string> built;
  for (const Group& g : groups) {
    if (done.count(g.key) || built.count(g.key.first)) continue;
    built.insert(g.key.first);
    const frontend::PreparedModel m = frontend::prepareModel(g.key.first, t.inputShapes, t.fusion, t.target);
    for (const fusion::GraphTask& gt : m.tasks) {
      task::SearchTask st = fusion::toSearchTask(gt, t.target);
      const std::string key = st.key;
      tasks.emplace(GroupKey{g.key.first, key}, std::move(st));
    }
  }
  RemeasureSummary summary;
  std::vector<const Group*> todo;
  for (const Group& g : groups) {
    if (done.count(g.key)) {
      ++summary.kept;
      continue;
    }
    if (!tasks.count(g.key))
      throw std::runtime_error("task " + g.key.second + " is not a task of " + g.key.first +
                               " as Tessel builds it now (the dataset is older than its definition)");
    todo.push_back(&g);
  }

  const search::TuneOptions o = t.taskOptions();
  for (size_t gi = 0; gi < todo.size(); ++gi) {
    const Group& g = *todo[gi];
    const task::SearchTask& task = tasks.at(g.key);
    std::unique_ptr<measure::Measurer> measurer = o.makeMeasurer
                                                      ? o.makeMeasurer(task, o.measurer)
                                                      : std::make_unique<measure::ProgramMeasurer>(task, o.measurer);
    // Programs whose steps this build cannot read stay failed.
    std::vector<std::vector<schedule::Step>> programs;
    std::vector<size_t> readable;
    for (size_t i = 0; i < g.records.size(); ++i) {
      try {
        programs.push_back(schedule::deserializeSteps(g.records[i]->steps));
        readable.push_back(i);
      } catch (const std::exception&) {
      }
    }
    // One pass over the task per repeat, so that a program's measurements
    // are minutes apart rather than back to back.
    std::vector<std::vector<double>> costs(g.records.size());
    for (int rep = 0; rep < config.repeats; ++rep) {
      for (size_t b = 0; b < programs.size(); b += size_t(t.batch)) {
        if (support::isCancelled(events.cancel)) {
          summary.stopped = true;
          return summary;
        }
        const size_t e = std::min(programs.size(), b + size_t(t.batch));
        const std::vector<std::vector<schedule::Step>> chunk(programs.begin() + long(b), programs.begin() + long(e));
        const std::vector<measure::ProgramResult> res = measurer->measure(chunk);
        for (size_t i = 0; i < res.size(); ++i)
          costs[readable[b + i]].push_back(res[i].result.ok() ? res[i].result.medianCost() : INFINITY);
      }
    }
    for (size_t i = 0; i < g.records.size(); ++i) {
      DatasetRecord r = *g.records[i];
      r.target = t.target;
      r.cost = costs[i].empty() ? INFINITY : medianLabel(costs[i]);
      summary.valid += std::isfinite(r.cost);
      out.push_back(std::move(r));
    }
    writeAtomically(outPath, out);
    ++summary.tasks;
    summary.programs += g.records.size();
    if (events.onTask) events.onTask({g.key.first, g.key.second, gi, todo.size(), int(g.records.size())});
  }
  return summary;
}

}  // namespace tessel::tuning
