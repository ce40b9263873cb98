#include "store/program_listing.h"

#include <algorithm>
#include <cmath>

namespace tessel::store {
namespace {

// Competition ranks (1 + the number strictly better) of the values `rank`
// takes, over the programs it gives one for.
template <typename Key, typename Better>
void rankPrograms(std::vector<ListedProgram>& programs, Key key, Better better, int ListedProgram::*rank) {
  std::vector<double> values;
  for (const ListedProgram& p : programs)
    if (auto v = key(p)) values.push_back(*v);
  std::sort(values.begin(), values.end(), better);
  for (ListedProgram& p : programs) {
    const auto v = key(p);
    if (!v) continue;
    p.*rank = 1 + int(std::lower_bound(values.begin(), values.end(), *v, better) - values.begin());
  }
}

}  // namespace

ProgramListing listPrograms(const Database& db, const std::string& key, const std::string& target, int64_t session) {
  const std::optional<TaskRow> task = db.taskByKey(key, target);
  if (!task) throw StoreError("the database has no task " + key + " for " + target);
  ProgramListing out;
  out.task = *task;
  out.session = session;
  double fastest = HUGE_VAL;
  for (RecordRow& r : db.records().ofTask(task->id, session)) {
    ListedProgram p;
    p.ordinal = int(out.programs.size());
    p.record = std::move(r);
    out.scored += std::isfinite(p.record.predicted);
    if (p.record.ok()) {
      ++out.measured;
      if (p.record.medianCost() < fastest) fastest = p.record.medianCost(), out.fastest = p.ordinal;
    }
    out.programs.push_back(std::move(p));
  }
  using Value = std::optional<double>;
  rankPrograms(
      out.programs,
      [](const ListedProgram& p) { return std::isfinite(p.record.predicted) ? Value(p.record.predicted) : Value(); },
      std::greater<double>(), &ListedProgram::scoreRank);
  rankPrograms(
      out.programs, [](const ListedProgram& p) { return p.record.ok() ? Value(p.record.medianCost()) : Value(); },
      std::less<double>(), &ListedProgram::timeRank);
  return out;
}

}  // namespace tessel::store
