#include "knowledge/record_library.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace tessel::knowledge {

void RecordLibrary::add(LibraryTask task) {
  for (LibraryTask& held : tasks_) {
    if (held.key != task.key || held.target != task.target) continue;
    std::set<std::string> steps;
    for (const LibraryProgram& p : held.programs)
      steps.insert(p.steps);
    for (LibraryProgram& p : task.programs)
      if (steps.insert(p.steps).second) held.programs.push_back(std::move(p));
    std::stable_sort(held.programs.begin(), held.programs.end(),
                     [](const LibraryProgram& a, const LibraryProgram& b) { return a.seconds < b.seconds; });
    for (std::string& m : task.models)
      if (std::find(held.models.begin(), held.models.end(), m) == held.models.end()) held.models.push_back(m);
    return;
  }
  task.structure = structureOf(task.compute);
  std::stable_sort(task.programs.begin(), task.programs.end(),
                   [](const LibraryProgram& a, const LibraryProgram& b) { return a.seconds < b.seconds; });
  tasks_.push_back(std::move(task));
}

size_t RecordLibrary::programs() const {
  size_t n = 0;
  for (const LibraryTask& t : tasks_)
    n += t.programs.size();
  return n;
}

const LibraryTask* RecordLibrary::find(const std::string& key, const target::Target& target) const {
  for (const LibraryTask& t : tasks_)
    if (t.key == key && t.target == target) return &t;
  return nullptr;
}

std::vector<SimilarTask> RecordLibrary::similar(const TaskStructure& structure, const std::string& key,
                                                const target::Target& target, size_t n) const {
  std::vector<SimilarTask> out;
  for (const LibraryTask& t : tasks_) {
    if (t.key == key && t.target == target) continue;
    const double d = structureDistance(structure, t.structure);
    if (std::isfinite(d)) out.push_back({&t, d});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SimilarTask& a, const SimilarTask& b) { return a.distance < b.distance; });
  if (out.size() > n) out.resize(n);
  return out;
}

}  // namespace tessel::knowledge
