#include "fleet/fleet_measurer.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "fleet/fleet_keys.h"
#include "fleet/fleet_status.h"
#include "fleet/job_format.h"
#include "fleet/redis_client.h"
#include "fleet/stream_entry.h"
#include "measure/backend.h"

namespace tessel::fleet {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A job sent and not yet answered.
struct Outstanding {
  size_t first = 0, count = 0;  // its programs in the round
  std::string payload;
  std::string entry;  // its stream entry (to withdraw it)
  Clock::time_point sent;
};

}  // namespace

struct FleetMeasurer::Impl {
  const task::SearchTask& task;
  measure::MeasurerOptions options;
  FleetOptions fleet;
  std::shared_ptr<FleetStats> stats;
  std::string tuner = uniqueProcessName();
  std::string stream, results;
  std::unique_ptr<RedisClient> redis;
  std::string runId;  // of the Redis the round's jobs were sent to
  long sequence = 0;
  Clock::time_point lastBeat{}, lastNoAgentLine{};
  mutable std::unique_ptr<measure::ProgramBuilder> localBuilder;  // for source()

  Impl(const task::SearchTask& t, const measure::MeasurerOptions& o, FleetOptions f, std::shared_ptr<FleetStats> s)
      : task(t), options(o), fleet(std::move(f)), stats(s ? std::move(s) : std::make_shared<FleetStats>()) {
    stream = jobStream(task.target.str());
    results = resultStream(tuner);
    redis = std::make_unique<RedisClient>(fleet.redis);
    runId = redis->serverRunId();
    ensureGroup(*redis, stream, kAgentGroup);
    beat(true);
  }

  ~Impl() {
    try {
      if (redis) redis->pipeline({{"DEL", results}, {"DEL", tunerKey(tuner)}});
    } catch (const RedisError&) {
    }
  }

  void log(const std::string& line) const {
    if (fleet.log) fleet.log(line);
  }

  void beat(bool now = false) {
    if (!now && since(lastBeat) < kHeartbeatSeconds) return;
    redis->checked({"SET", tunerKey(tuner), "1", "PX", milliseconds(kAliveSeconds * 5)});
    lastBeat = Clock::now();
  }

  // Slots of the agents serving the task's target now (heartbeats read as
  // `fleet status` reads them: untrusted).
  int agentSlots() {
    int slots = 0;
    for (const AgentView& a : fleetStatus(*redis).agents)
      if (a.target == task.target.str()) slots += std::clamp(a.jobSlots, 1, 64);
    return slots;
  }

  std::string send(const std::string& payload) { return redis->checked({"XADD", stream, "*", "job", payload}).str; }

  // Once connected again after a loss: was Redis restarted empty? Then the
  // jobs it held are gone and are sent again (an agent's late answer to the
  // first copy is taken, the second ignored).
  void reconnected(std::map<std::string, Outstanding>& out, std::string* lastResult) {
    const std::string now = redis->serverRunId();
    if (now == runId) return;
    ensureGroup(*redis, stream, kAgentGroup);
    beat(true);
    *lastResult = "0";
    size_t resend = 0;
    for (auto& [id, o] : out)
      if (!o.entry.empty()) o.entry.clear(), ++resend, ++stats->resent;
    if (resend)
      log("Redis at " + fleet.redis.str() + " restarted: sending the round's " + std::to_string(resend) +
          " unanswered jobs again");
    runId = now;
  }

  void withdraw(const std::map<std::string, Outstanding>& out) {
    if (!redis) return;
    try {
      for (const auto& [id, o] : out)
        if (!o.entry.empty()) redis->command({"XDEL", stream, o.entry});
    } catch (const RedisError&) {
    }
  }

  void take(const JobResult& r, const Outstanding& o, std::vector<measure::ProgramResult>* res) {
    const bool whole = r.error.empty() && r.results.size() == o.count;
    for (size_t i = 0; i < o.count; ++i) {
      measure::MeasureResult& m = (*res)[o.first + i].result;
      if (whole) {
        m = r.results[i];
      } else {
        m.error = measure::ErrorCode::Unknown;
        m.message = "agent " + r.agent + ": " +
                    (r.error.empty() ? "the result has " + std::to_string(r.results.size()) + " measurements for " +
                                           std::to_string(o.count) + " programs"
                                     : r.error);
      }
    }
    ++stats->jobs;
    stats->programs += long(o.count);
    stats->roundTripSeconds += since(o.sent);
    stats->agentSeconds += r.agentSeconds;
    for (const measure::MeasureResult& m : r.results)
      stats->measureSeconds += m.runSeconds;
  }

  std::vector<measure::ProgramResult> measure(const std::vector<std::vector<schedule::Step>>& programs) {
    const auto start = Clock::now();
    std::vector<measure::ProgramResult> res = measureRound(programs);
    stats->waitSeconds += since(start);
    return res;
  }

  std::vector<measure::ProgramResult> measureRound(const std::vector<std::vector<schedule::Step>>& programs) {
    std::vector<measure::ProgramResult> res(programs.size());
    if (programs.empty()) return res;
    std::map<std::string, Outstanding> out;
    std::string lastResult = "0";
    bool connected = true;
    int slots = -1;
    while (slots < 0) {
      try {
        if (!redis) redis = std::make_unique<RedisClient>(fleet.redis), reconnected(out, &lastResult);
        slots = agentSlots();
      } catch (const RedisError& e) {
        if (!wait(e, &connected)) return cancelled(res);
      }
    }
    // One job per agent slot at least (all agents busy), at most
    // maxProgramsPerJob programs each.
    const size_t n = programs.size();
    const size_t perJob = std::max<size_t>(1, size_t(fleet.maxProgramsPerJob));
    const size_t jobs = std::max((n + perJob - 1) / perJob, std::min(n, size_t(std::max(1, slots))));
    MeasureJob job;
    job.tuner = tuner;
    job.task = task;
    job.rules = rulesOf(options);
    for (size_t j = 0, first = 0; j < jobs; ++j) {
      const size_t count = n / jobs + (j < n % jobs ? 1 : 0);
      job.id = tuner + "/" + std::to_string(++sequence);
      job.programs.clear();
      for (size_t i = first; i < first + count; ++i)
        job.programs.push_back(schedule::serializeSteps(programs[i]));
      const auto encoding = Clock::now();  // the round trip counts the encoding too
      Outstanding o{first, count, "", "", encoding};
      try {
        o.payload = encodeJob(job);
        if (o.payload.size() > kMaxMessageBytes)
          throw std::invalid_argument("the job is larger than " + std::to_string(kMaxMessageBytes >> 20) + " MiB");
      } catch (const std::invalid_argument& e) {  // a definition too large to send: its programs' errors
        JobResult unsent;
        unsent.agent = "(none)";
        unsent.error = std::string("the job cannot be sent: ") + e.what();
        take(unsent, o, &res);
        first += count;
        continue;
      }
      out.emplace(job.id, std::move(o));
      first += count;
    }
    Clock::time_point lastRetiredCheck = Clock::now();
    while (!out.empty()) {
      if (support::isCancelled(options.run.cancel)) {
        withdraw(out);
        return cancelled(res);
      }
      try {
        if (!redis) redis = std::make_unique<RedisClient>(fleet.redis), reconnected(out, &lastResult);
        beat();
        for (auto& [id, o] : out)
          if (o.entry.empty()) o.entry = send(o.payload);
        // Jobs retired without an answer (an agent dropped them, thinking
        // this tuner gone): found before the results are read, since a
        // result is posted in the transaction that retires its job.
        std::vector<std::string> retired;
        if (since(lastRetiredCheck) > kLeaseSeconds / 3) {
          retired = retiredJobs(out);
          lastRetiredCheck = Clock::now();
        }
        const RedisReply r = redis->checked(
            {"XREAD", "COUNT", "256", "BLOCK", milliseconds(kBlockSeconds), "STREAMS", results, lastResult});
        std::vector<std::string> read = {"XDEL", results};
        for (const StreamEntry& e : readEntries(r, "result")) {
          lastResult = e.id;
          read.push_back(e.id);
          JobResult jr;
          try {
            jr = decodeResult(e.value);
          } catch (const JobFormatError& err) {
            // Still the answer to its job, if it says which: an error for its programs.
            jr.job = resultJob(e.value);
            jr.agent = "(unknown)";
            jr.error = std::string("its result does not read: ") + err.what();
            jr.results.clear();
            log("a result of job " + jr.job + " does not read: " + err.what());
          }
          auto it = out.find(jr.job);
          if (it == out.end()) {
            ++stats->duplicates;  // answered already, or of a withdrawn round
            continue;
          }
          take(jr, it->second, &res);
          out.erase(it);
        }
        if (read.size() > 2) redis->command(read);
        for (const std::string& id : retired)
          if (auto it = out.find(id); it != out.end()) {
            log("job " + id + " was retired unanswered: sending it again");
            it->second.entry.clear();
            ++stats->resent;
          }
        if (r.isNil()) noAgentLine();
      } catch (const RedisError& e) {
        if (!wait(e, &connected)) return cancelled(res);
      }
    }
    return res;
  }

  // The outstanding jobs whose stream entries are gone.
  std::vector<std::string> retiredJobs(const std::map<std::string, Outstanding>& out) {
    std::vector<std::vector<std::string>> ranges;
    std::vector<std::string> ids;
    for (const auto& [id, o] : out)
      if (!o.entry.empty()) ranges.push_back({"XRANGE", stream, o.entry, o.entry}), ids.push_back(id);
    std::vector<std::string> gone;
    if (ranges.empty()) return gone;
    const std::vector<RedisReply> replies = redis->pipeline(ranges);
    for (size_t i = 0; i < ids.size(); ++i)
      if (replies[i].isArray() && replies[i].elements.empty()) gone.push_back(ids[i]);
    return gone;
  }

  // While no agent serves the target, a line every ten seconds.
  void noAgentLine() {
    if (since(lastNoAgentLine) < 10) return;
    if (agentSlots() > 0) return;
    lastNoAgentLine = Clock::now();
    log("waiting for an agent serving '" + task.target.str() + "' at " + fleet.redis.str() +
        " (start one: tessel-agent --redis URL --target '" + task.target.str() + "')");
  }

  // Redis is away: waits a second (false if the round was cancelled meanwhile).
  bool wait(const RedisError& e, bool* connected) {
    redis.reset();
    if (*connected) log(std::string(e.what()) + "; waiting for it");
    *connected = false;  // said once per round
    const auto end = Clock::now() + std::chrono::seconds(1);
    while (Clock::now() < end)
      if (support::isCancelled(options.run.cancel))
        return false;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return true;
  }

  static std::vector<measure::ProgramResult> cancelled(std::vector<measure::ProgramResult>& res) {
    for (measure::ProgramResult& r : res)
      if (r.result.ok() && r.result.costs.empty())
        r.result.error = measure::ErrorCode::Unknown, r.result.message = "cancelled";
    return res;
  }
};

FleetMeasurer::FleetMeasurer(const task::SearchTask& task, const measure::MeasurerOptions& options, FleetOptions fleet,
                             std::shared_ptr<FleetStats> stats)
    : impl_(std::make_unique<Impl>(task, options, std::move(fleet), std::move(stats))) {}

FleetMeasurer::~FleetMeasurer() = default;

std::vector<measure::ProgramResult> FleetMeasurer::measure(const std::vector<std::vector<schedule::Step>>& programs) {
  return impl_->measure(programs);
}

std::string FleetMeasurer::source(const std::vector<schedule::Step>& program) const {
  if (!impl_->localBuilder) impl_->localBuilder = measure::makeBuilder(impl_->task, impl_->options);
  return impl_->localBuilder->source(program);
}

const FleetStats& FleetMeasurer::stats() const {
  return *impl_->stats;
}

const std::string& FleetMeasurer::tunerId() const {
  return impl_->tuner;
}

measure::MeasurerFactory fleetMeasurerFactory(FleetOptions fleet, std::shared_ptr<FleetStats> stats) {
  if (!stats) stats = std::make_shared<FleetStats>();
  return [fleet, stats](const task::SearchTask& task, const measure::MeasurerOptions& options) {
    return std::unique_ptr<measure::Measurer>(std::make_unique<FleetMeasurer>(task, options, fleet, stats));
  };
}

}  // namespace tessel::fleet
