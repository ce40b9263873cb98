#include "fleet/agent.h"

#include <unistd.h>

#include <chrono>
#include <ctime>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "fleet/fleet_keys.h"
#include "fleet/job_format.h"
#include "fleet/redis_client.h"
#include "fleet/stream_entry.h"
#include "measure/cuda_driver.h"
#include "measure/program_measurer.h"
#include "support/cpu_info.h"
#include "support/version.h"
#include "target/target.h"

namespace tessel::fleet {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// What the slots and the heartbeat share.
struct AgentState {
  std::mutex m;
  std::set<std::string> held;  // stream entries in hand: their leases are renewed
  std::set<std::string> jobs;  // their job ids, for the fleet's view
  long jobsDone = 0, programsDone = 0;
  double busySeconds = 0;
  std::deque<std::pair<Clock::time_point, long>> recent;  // (when, programs) of the last minute's jobs
};

// The measurers of the tasks a slot saw last (each built its reference once).
class MeasurerCache {
 public:
  measure::ProgramMeasurer& get(const MeasureJob& job, const measure::MeasurerOptions& base) {
    const MeasureRules& r = job.rules;
    // The definition itself, not its key: a key is a hash, and a job is not trusted.
    const std::string key =
        job.task.dag.toString() + "|" + job.task.target.str() + "|" + std::to_string(r.timeoutSeconds) + "," +
        std::to_string(r.warmup) + "," + std::to_string(r.repeats) + "," + std::to_string(r.minRepeatSeconds) + "," +
        measure::cacheStateName(r.cacheState) + "," + std::to_string(r.seed) + "," +
        std::to_string(r.buildTimeoutSeconds) + "," + std::to_string(r.registerTiles) + std::to_string(r.layoutRewrite);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->key == key) {
        entries_.splice(entries_.begin(), entries_, it);  // most recent first
        return *entries_.front().measurer;
      }
    Entry e;
    e.key = key;
    e.task = std::make_unique<task::SearchTask>(job.task);  // the builder keeps a reference to it
    e.measurer = std::make_unique<measure::ProgramMeasurer>(*e.task, applyRules(base, job.rules));
    entries_.push_front(std::move(e));
    if (entries_.size() > kKept) entries_.pop_back();
    return *entries_.front().measurer;
  }

 private:
  // Each kept measurer holds its reference built and an idle worker process
  // (a CUDA context on a GPU): a few, not a model's every task.
  static constexpr size_t kKept = 8;
  struct Entry {
    std::string key;
    std::unique_ptr<task::SearchTask> task;
    std::unique_ptr<measure::ProgramMeasurer> measurer;
  };
  std::list<Entry> entries_;
};

class Slot {
 public:
  Slot(const AgentOptions& o, std::string name, AgentState& state)
      : o_(o), name_(std::move(name)), stream_(jobStream(o.target.str())), state_(state) {
    base_ = measure::measurerOptionsFor(o.target);
    base_.run.workerPath = o.workerPath;
    if (o.buildJobs > 0)
      base_.build.jobs = o.buildJobs;
    else
      base_.build.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
    base_.run.cancel = base_.build.cancel = o.stop;  // a stop cuts the job in hand short
    leaseSeconds_ = o.leaseSeconds > 0 ? o.leaseSeconds : kLeaseSeconds;
  }

  void serve() {
    std::unique_ptr<RedisClient> redis;
    bool grouped = false;
    while (!support::isCancelled(o_.stop)) {
      try {
        if (!redis) redis = std::make_unique<RedisClient>(o_.redis);
        if (!grouped) ensureGroup(*redis, stream_, kAgentGroup), grouped = true;
        std::vector<StreamEntry> entries = takeOver(*redis);
        if (entries.empty()) entries = readNew(*redis, &grouped);
        for (const StreamEntry& e : entries)
          handle(*redis, e);
      } catch (const RedisError& e) {
        log(std::string(e.what()) + "; trying again in a second");
        redis.reset();
        grouped = false;
        sleepUnlessStopped(1.0);
      } catch (const std::exception& e) {  // a bug, or a reply of a shape not foreseen: never the agent's end
        log(std::string("error: ") + e.what() + "; going on in a second");
        sleepUnlessStopped(1.0);
      }
    }
  }

 private:
  void log(const std::string& line) const {
    if (o_.log) o_.log(line);
  }

  void sleepUnlessStopped(double seconds) const {
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end && !support::isCancelled(o_.stop))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  // A job whose agent stopped renewing its lease (died, or lost Redis).
  std::vector<StreamEntry> takeOver(RedisClient& redis) {
    // The scan goes on from where the last one stopped: one call looks at
    // only ten pending entries.
    const RedisReply r = redis.command(
        {"XAUTOCLAIM", stream_, kAgentGroup, name_, milliseconds(leaseSeconds_), claimCursor_, "COUNT", "1"});
    if (r.isError()) {
      claimCursor_ = "0-0";
      return {};
    }
    claimCursor_ = r[0].str.empty() ? "0-0" : r[0].str;
    std::vector<StreamEntry> out = claimedEntries(r, "job");
    for (const StreamEntry& e : out)
      log("took over " + e.id + " from an agent that stopped answering");
    return out;
  }

  std::vector<StreamEntry> readNew(RedisClient& redis, bool* grouped) {
    const RedisReply r = redis.command({"XREADGROUP", "GROUP", kAgentGroup, name_, "COUNT", "1", "BLOCK",
                                        milliseconds(kBlockSeconds), "STREAMS", stream_, ">"});
    if (r.isError()) {
      // Redis restarted without its data: the group is gone with the stream.
      if (r.str.rfind("NOGROUP", 0) == 0)
        *grouped = false;
      else
        throw RedisError("Redis refused XREADGROUP: " + r.str);
      return {};
    }
    return readEntries(r, "job");
  }

  void handle(RedisClient& redis, const StreamEntry& e) {
    const auto t0 = Clock::now();
    if (e.deleted) {  // nothing to measure: the tuner withdrew it
      redis.command({"XACK", stream_, kAgentGroup, e.id});
      return;
    }
    JobResult result;
    result.agent = name_;
    MeasureJob job;
    try {
      job = decodeJob(e.value);
    } catch (const JobFormatError& err) {
      const auto [id, tuner] = jobAddress(e.value);
      log("refused job " + (id.empty() ? e.id : id) + ": " + err.what());
      result.job = id;
      result.error = std::string("the agent refused the job: ") + err.what();
      finish(redis, e, tuner, result);
      return;
    }
    result.job = job.id;
    if (redis.checked({"EXISTS", tunerKey(job.tuner)}).integer == 0) {
      log("dropped job " + job.id + ": its tuner is gone");
      finish(redis, e, "", result);
      return;
    }
    if (job.task.target != o_.target) {
      result.error = "the agent serves '" + o_.target.str() + "', not the job's target '" + job.task.target.str() + "'";
      finish(redis, e, job.tuner, result);
      return;
    }
    hold(e.id, job.id, true);
    const auto work = Clock::now();
    try {
      measure(job, &result);
    } catch (const std::exception& err) {
      result.results.clear();
      result.error = std::string("the agent failed on the job: ") + err.what();
    }
    result.agentSeconds = std::chrono::duration<double>(Clock::now() - work).count();
    hold(e.id, job.id, false);
    // Cut short by a stop: back to the queue. Measured in full before the
    // stop came: posted.
    if (support::isCancelled(o_.stop) && cutShort(result)) {
      handBack(redis, e);
      return;
    }
    finish(redis, e, job.tuner, result);
    std::lock_guard lock(state_.m);
    ++state_.jobsDone;
    state_.programsDone += long(job.programs.size());
    state_.busySeconds += std::chrono::duration<double>(Clock::now() - t0).count();
    state_.recent.push_back({Clock::now(), long(job.programs.size())});
  }

  void measure(const MeasureJob& job, JobResult* result) {
    measure::ProgramMeasurer* measurer = nullptr;
    try {
      measurer = &cache_.get(job, base_);
    } catch (const std::exception& err) {
      result->error = std::string("the agent cannot measure the task: ") + err.what();
      return;
    }
    // Steps that do not parse are that program's error; the others are measured.
    std::vector<std::vector<schedule::Step>> programs;
    std::vector<size_t> owner;
    result->results.assign(job.programs.size(), {});
    for (size_t i = 0; i < job.programs.size(); ++i) {
      try {
        programs.push_back(schedule::deserializeSteps(job.programs[i]));
        owner.push_back(i);
      } catch (const std::exception& err) {
        result->results[i].error = measure::ErrorCode::Instantiation;
        result->results[i].message = std::string("its steps do not parse: ") + err.what();
      }
    }
    const std::vector<measure::ProgramResult> measured = measurer->measure(programs);
    for (size_t k = 0; k < measured.size(); ++k)
      result->results[owner[k]] = measured[k].result;
  }

  static bool cutShort(const JobResult& r) {
    if (!r.error.empty()) return true;
    for (const measure::MeasureResult& m : r.results)
      if (m.error == measure::ErrorCode::Unknown && m.message == "cancelled") return true;
    return false;
  }

  void hold(const std::string& entry, const std::string& job, bool held) {
    std::lock_guard lock(state_.m);
    if (held)
      state_.held.insert(entry), state_.jobs.insert(job);
    else
      state_.held.erase(entry), state_.jobs.erase(job);
  }

  // Posts the result (unless there is no tuner to post it to) and retires the
  // job, in one transaction. Tried again while Redis is away: a result is
  // not lost because Redis restarted (the tuner ignores a second one).
  void finish(RedisClient& redis, const StreamEntry& e, const std::string& tuner, const JobResult& result) {
    std::vector<std::vector<std::string>> tx = {{"MULTI"}};
    if (!tuner.empty()) {
      tx.push_back({"XADD", resultStream(tuner), "*", "result", encodeResult(result)});
      tx.push_back({"PEXPIRE", resultStream(tuner), milliseconds(kResultTtlSeconds)});
    }
    tx.push_back({"XACK", stream_, kAgentGroup, e.id});
    tx.push_back({"XDEL", stream_, e.id});
    tx.push_back({"EXEC"});
    for (;;) {
      try {
        const std::vector<RedisReply> replies = redis.pipeline(tx);
        if (!replies.back().isArray())  // EXEC refused (out of memory, ...): nothing of it happened
          throw RedisError("Redis did not run the transaction: " + replies.back().str);
        return;
      } catch (const RedisError& err) {
        if (support::isCancelled(o_.stop)) throw;
        log(std::string(err.what()) + "; posting the result of " + result.job + " again in a second");
        sleepUnlessStopped(1.0);
      }
    }
  }

  // A job cut short by a stop goes back to the queue for another agent.
  void handBack(RedisClient& redis, const StreamEntry& e) {
    try {
      redis.pipeline({{"MULTI"},
                      {"XADD", stream_, "*", "job", e.value},
                      {"XACK", stream_, kAgentGroup, e.id},
                      {"XDEL", stream_, e.id},
                      {"EXEC"}});
      log("handed back " + e.id);
    } catch (const RedisError& err) {
      log(std::string("could not hand back ") + e.id + " (" + err.what() + "): another agent takes it over");
    }
  }

  const AgentOptions& o_;
  std::string name_, stream_;
  AgentState& state_;
  measure::MeasurerOptions base_;
  double leaseSeconds_ = kLeaseSeconds;
  std::string claimCursor_ = "0-0";
  MeasurerCache cache_;
};

std::string hostName() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

json heartbeat(const AgentOptions& o, const std::string& name, const std::string& target, const std::string& device,
               AgentState& s, long started) {
  std::lock_guard lock(s.m);
  const auto now = Clock::now();
  while (!s.recent.empty() && now - s.recent.front().first > std::chrono::seconds(60))
    s.recent.pop_front();
  long recentPrograms = 0;
  for (const auto& r : s.recent)
    recentPrograms += r.second;
  return {{"name", name},
          {"host", hostName()},
          {"pid", long(getpid())},
          {"target", target},
          {"device", device},
          {"slots", o.jobSlots},
          {"started", started},
          {"version", support::version()},
          {"jobs_done", s.jobsDone},
          {"programs_done", s.programsDone},
          {"busy_s", s.busySeconds},
          {"programs_per_s_last_minute", double(recentPrograms) / 60.0},
          {"jobs_in_hand", std::vector<std::string>(s.jobs.begin(), s.jobs.end())}};
}

}  // namespace

std::string defaultAgentName() {
  return uniqueProcessName();
}

std::string deviceDescription(const target::Target& t) {
  if (!t.isCpu()) {
    if (!measure::cuda::unavailableReason().empty())
      return "no usable GPU (" + measure::cuda::unavailableReason() + ")";
    return measure::cuda::gpus().at(0).name + " (" + measure::cuda::gpus().at(0).arch() + ")";
  }
  const support::CpuInfo cpu = support::hostCpu();
  return cpu.model + ", " + std::to_string(cpu.threads) + " threads";
}

long runAgent(const AgentOptions& o) {
  const std::string target = o.target.str();  // its job stream's and the heartbeat's name
  if (o.jobSlots < 1 || o.jobSlots > 64) throw std::invalid_argument("--slots must be in [1, 64]");
  // Shorter, and a live agent's jobs would be taken from it between its renewals.
  if (o.leaseSeconds != 0 && o.leaseSeconds < 3 * kHeartbeatSeconds)
    throw std::invalid_argument("the lease must last three heartbeats at least (" +
                                std::to_string(int(3 * kHeartbeatSeconds)) + " s)");
  const std::string name = o.name.empty() ? defaultAgentName() : o.name;
  RedisClient redis(o.redis);  // RedisError now if Redis cannot be reached at all
  ensureGroup(redis, jobStream(target), kAgentGroup);
  const long started = long(std::time(nullptr));
  const std::string device = deviceDescription(o.target);
  AgentState state;
  if (o.log)
    o.log("agent " + name + " serves '" + target + "' at " + o.redis.str() + " with " + std::to_string(o.jobSlots) +
          " slot(s)");
  std::vector<std::unique_ptr<Slot>> slots;
  std::vector<std::thread> threads;
  for (int i = 0; i < o.jobSlots; ++i) {
    slots.push_back(std::make_unique<Slot>(o, name, state));
    threads.emplace_back([s = slots.back().get()] { s->serve(); });
  }
  // The heartbeat: the agent's state for the fleet's view, and the leases of
  // the jobs in hand renewed (XCLAIM by their holder resets their idle time).
  std::unique_ptr<RedisClient> beat;
  while (!support::isCancelled(o.stop)) {
    try {
      if (!beat) beat = std::make_unique<RedisClient>(o.redis);
      std::vector<std::string> renew = {"XCLAIM", jobStream(target), kAgentGroup, name, "0"};
      {
        std::lock_guard lock(state.m);
        renew.insert(renew.end(), state.held.begin(), state.held.end());
      }
      renew.push_back("JUSTID");
      std::vector<std::vector<std::string>> cmds = {{"SET", agentKey(name),
                                                     heartbeat(o, name, target, device, state, started).dump(), "PX",
                                                     milliseconds(kAliveSeconds)}};
      if (renew.size() > 6) cmds.push_back(renew);
      beat->pipeline(cmds);
    } catch (const RedisError&) {
      beat.reset();  // the slots say so; beat again when Redis is back
    } catch (const std::exception& e) {
      if (o.log) o.log(std::string("heartbeat: ") + e.what());
    }
    const auto next = Clock::now() + std::chrono::duration<double>(kHeartbeatSeconds);
    while (Clock::now() < next && !support::isCancelled(o.stop))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (std::thread& t : threads)
    t.join();
  try {
    if (!beat) beat = std::make_unique<RedisClient>(o.redis, 2);
    beat->command({"DEL", agentKey(name)});
  } catch (const RedisError&) {
  }
  if (o.log) o.log("agent " + name + " stopped after " + std::to_string(state.jobsDone) + " jobs");
  return state.jobsDone;
}

}  // namespace tessel::fleet
