#include "knowledge/schedule_transfer.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

namespace tessel::knowledge {

bool adaptDecisions(const std::vector<schedule::Sketch>& sketches, const schedule::HardwareParams& hw,
                    schedule::ProgramDecisions& decisions, std::vector<schedule::Step>* steps) {
  // The tiles are the sketch's loop structure: the same splits, each of as
  // many levels. The other decisions (placements, parallel, vectorize,
  // unroll) come and go with the extents (no vectorisable loop, no
  // decision): those the task does not take are dropped, those it takes
  // anew start at their lowest value.
  auto tiles = [](const schedule::ProgramDecisions& d) {
    std::map<std::string, size_t> levels;
    for (const auto& [key, c] : d.choices)
      if (c.tile) levels[key] = c.value.size();
    return levels;
  };
  const std::map<std::string, size_t> wanted = tiles(decisions);
  std::vector<size_t> order;
  if (decisions.sketch < sketches.size()) order.push_back(decisions.sketch);
  for (size_t i = 0; i < sketches.size(); ++i)
    if (i != decisions.sketch) order.push_back(i);
  for (size_t i : order) {
    schedule::ProgramDecisions d = decisions;
    d.sketch = i;
    std::vector<std::string> visited;
    std::vector<schedule::Step> program;
    try {
      program = schedule::materialize(sketches[i], d, hw, &visited);
    } catch (const schedule::ScheduleError&) {
      continue;
    }
    // What this sketch took, and only that: a dropped decision is not kept.
    schedule::ProgramDecisions taken;
    taken.sketch = i;
    for (const std::string& key : visited)
      taken.choices[key] = d.choices.at(key);
    if (tiles(taken) != wanted) continue;
    decisions = std::move(taken);
    *steps = std::move(program);
    return true;
  }
  return false;
}

namespace {

struct Source {
  const LibraryTask* task;
  double distance;
  bool exact;
};

// One stored program on the task, or false when it fits none of its sketches.
bool adapt(const task::SearchTask& task, const std::vector<schedule::Sketch>& sketches,
           const schedule::HardwareParams& hw, const Source& src, const LibraryProgram& p, TransferredProgram* out) {
  out->sourceTask = src.task->key;
  out->sourceSeconds = p.seconds;
  out->distance = src.distance;
  out->exact = src.exact;
  if (!p.decisions.empty()) {
    try {
      out->decisions = schedule::deserializeDecisions(p.decisions);
      if (adaptDecisions(sketches, hw, out->decisions, &out->steps)) {
        out->hasDecisions = true;
        return true;
      }
    } catch (const schedule::ScheduleError&) {
      // Unreadable decisions: an exact match may still replay its steps.
    }
  }
  if (!src.exact) return false;
  if (auto steps = schedule::replayableSteps(task.dag, p.steps)) {
    out->steps = std::move(*steps);
    out->hasDecisions = false;
    return true;
  }
  return false;
}

}  // namespace

TransferResult transferPrograms(const task::SearchTask& task, const std::vector<schedule::Sketch>& sketches,
                                const schedule::HardwareParams& hw, const std::vector<const RecordLibrary*>& libraries,
                                const TransferOptions& o) {
  TransferResult r;
  std::vector<Source> exact, similar;
  const TaskStructure structure = structureOf(task.dag.toString());
  for (const RecordLibrary* lib : libraries) {
    if (!lib) continue;
    if (const LibraryTask* t = lib->find(task.key, task.target)) exact.push_back({t, 0, true});
    for (const SimilarTask& s : lib->similar(structure, task.key, task.target, o.sourceTasks))
      similar.push_back({s.task, s.distance, false});
  }
  std::stable_sort(similar.begin(), similar.end(),
                   [](const Source& a, const Source& b) { return a.distance < b.distance; });
  std::unordered_set<std::string> seen;
  auto take = [&](const Source& src, const LibraryProgram& p) {
    if (r.programs.size() >= o.maxPrograms) return;
    TransferredProgram t;
    if (!adapt(task, sketches, hw, src, p, &t)) {
      ++r.rejected;
      return;
    }
    if (seen.insert(schedule::serializeSteps(t.steps)).second) r.programs.push_back(std::move(t));
  };
  for (const Source& s : exact)
    for (size_t k = 0; k < s.task->programs.size() && k < o.programsPerTask; ++k)
      take(s, s.task->programs[k]);
  for (size_t rank = 0; rank < o.programsPerTask; ++rank)
    for (const Source& s : similar)
      if (rank < s.task->programs.size()) take(s, s.task->programs[rank]);
  for (const std::vector<Source>* group : {&exact, &similar})
    for (const Source& s : *group) {
      r.sources.push_back(s.task);
      r.sourcePrograms += s.task->programs.size();
    }
  return r;
}

}  // namespace tessel::knowledge
