#include "store/session_history.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

namespace tessel::store {
namespace {

// "2026-11-23T18:46:01.123Z" as seconds since the epoch; NaN if malformed.
double epochSeconds(const std::string& iso) {
  std::tm tm{};
  double seconds = 0;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &seconds) != 6)
    return std::nan("");
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_sec = 0;
  return double(timegm(&tm)) + seconds;
}

}  // namespace

double secondsBetween(const std::string& from, const std::string& to) {
  return epochSeconds(to) - epochSeconds(from);
}

int SessionHistory::taskIndex(const std::string& key) const {
  for (size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].task.key == key) return int(i);
  return -1;
}

std::vector<std::pair<int, double>> SessionHistory::objectiveCurve() const {
  std::vector<std::pair<int, double>> curve;
  for (const SessionRound& r : rounds) {
    const double v = session.kind == "model" ? r.estimateSeconds : r.bestSeconds;
    if (!std::isfinite(v)) continue;
    if (curve.empty() || v < curve.back().second) curve.emplace_back(r.totalTrials, v);
  }
  return curve;
}

SessionHistory loadSessionHistory(const Database& db, int64_t sessionId) {
  SessionHistory h;
  std::optional<SessionRow> s = db.sessions().byId(sessionId);
  if (!s) throw StoreError("no session " + std::to_string(sessionId) + " in " + db.path());
  h.session = *s;
  const nlohmann::json config = nlohmann::json::parse(s->config, nullptr, false);
  if (config.is_object()) {
    h.fusion = config.value("fusion", "");
    h.inputShapes = config.value("input_shapes", "");
    h.target = config.value("target", h.target);
    h.modelTasks = config.value("tasks", size_t(0));
  }

  std::map<int64_t, double> weights;  // task id -> occurrences in the model
  if (s->kind == "model")
    for (const auto& [task, weight] : db.modelTasks(s->subject))
      weights[task.id] = weight;

  std::map<int64_t, size_t> index;  // task id -> index into h.tasks
  std::vector<double> best;         // per task, seconds (inf: none yet)
  size_t withBest = 0;
  const std::vector<RecordRow> records = db.records().ofSession(sessionId);
  // The estimate is over every task the session measured: list them first.
  for (const RecordRow& r : records) {
    if (index.count(r.taskId)) continue;
    index[r.taskId] = h.tasks.size();
    SessionTask t;
    if (auto row = db.taskById(r.taskId)) t.task = *row;
    if (auto w = weights.find(r.taskId); w != weights.end()) t.weight = w->second;
    h.tasks.push_back(std::move(t));
  }
  best.assign(h.tasks.size(), INFINITY);

  int scoringRound = -1;
  for (size_t k = 0; k < records.size(); ++k) {
    const RecordRow& r = records[k];
    const size_t i = index[r.taskId];
    SessionTask& t = h.tasks[i];
    ++t.trials;
    const double seconds = r.ok() ? r.medianCost() : kNoSeconds;
    // Another task, or the model learned in between: another scoring round.
    if (k == 0 || records[k - 1].taskId != r.taskId || records[k - 1].modelTrainedOn != r.modelTrainedOn ||
        records[k - 1].modelPretrained != r.modelPretrained)
      ++scoringRound;
    h.programs.push_back({i, r.predicted, seconds, scoringRound, r.scoredUntrained()});
    if (std::isfinite(seconds) && seconds < best[i]) {
      if (!std::isfinite(best[i])) ++withBest;
      best[i] = seconds;
      t.best = r;
    }
    // A round ends where the next record is of another task (or there is none).
    if (k + 1 < records.size() && records[k + 1].taskId == r.taskId) continue;
    SessionRound round;
    round.task = i;
    round.taskTrials = t.trials;
    round.bestSeconds = std::isfinite(best[i]) ? best[i] : kNoSeconds;
    // Every task of the model needs a program; sessions that did not record
    // how many it has count those they measured.
    if (withBest == h.tasks.size() && h.tasks.size() >= h.modelTasks) {
      double estimate = 0;
      for (size_t j = 0; j < h.tasks.size(); ++j)
        estimate += h.tasks[j].weight * best[j];
      round.estimateSeconds = estimate;
    }
    round.totalTrials = int(k + 1);
    round.elapsedSeconds = secondsBetween(s->started, r.created);
    h.rounds.push_back(round);
  }
  return h;
}

}  // namespace tessel::store
