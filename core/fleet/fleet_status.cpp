#include "fleet/fleet_status.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "fleet/fleet_keys.h"
#include "fleet/job_format.h"

namespace tessel::fleet {

namespace {

std::vector<std::string> keysMatching(RedisClient& redis, const std::string& pattern) {
  std::vector<std::string> keys;
  std::string cursor = "0";
  do {
    const RedisReply r = redis.checked({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
    cursor = r[0].str;
    for (const RedisReply& k : r[1].elements)
      keys.push_back(k.str);
  } while (cursor != "0" && !cursor.empty());
  std::sort(keys.begin(), keys.end());
  return keys;
}

AgentView agentFrom(const nlohmann::json& a) {
  AgentView v;
  v.name = a.value("name", "");
  v.host = a.value("host", "");
  v.target = a.value("target", "");
  v.device = a.value("device", "");
  v.version = a.value("version", "");
  v.jobSlots = a.value("slots", 1);
  v.started = a.value("started", 0L);
  v.jobsDone = a.value("jobs_done", 0L);
  v.programsDone = a.value("programs_done", 0L);
  v.busySeconds = a.value("busy_s", 0.0);
  v.programsPerSecond = a.value("programs_per_s_last_minute", 0.0);
  if (a.contains("jobs_in_hand") && a["jobs_in_hand"].is_array())
    for (const auto& j : a["jobs_in_hand"])
      if (j.is_string()) v.jobsInHand.push_back(j.get<std::string>());
  return v;
}

}  // namespace

FleetView fleetStatus(RedisClient& redis) {
  FleetView view;
  view.redis = redis.endpoint().str();
  const std::vector<std::string> agents = keysMatching(redis, kAgentKeyPattern);
  if (!agents.empty()) {
    std::vector<std::string> get = {"MGET"};
    get.insert(get.end(), agents.begin(), agents.end());
    for (const RedisReply& v : redis.checked(get).elements) {
      const nlohmann::json a = parseUntrusted(v.str);
      if (!a.is_object()) continue;  // expired since the scan (nil), or not a heartbeat
      try {
        view.agents.push_back(agentFrom(a));
      } catch (const nlohmann::json::exception&) {
        // A field of the wrong type: not an agent of this Tessel; left out.
      }
    }
  }
  std::sort(view.agents.begin(), view.agents.end(), [](const AgentView& a, const AgentView& b) {
    return std::tie(a.target, a.name) < std::tie(b.target, b.name);
  });
  const std::string prefix = jobStream("");
  for (const std::string& stream : keysMatching(redis, kJobStreamPattern)) {
    QueueView q;
    q.target = stream.substr(prefix.size());
    // Answered jobs are deleted: the stream holds the queued and the taken.
    const std::vector<RedisReply> r = redis.pipeline({{"XLEN", stream}, {"XPENDING", stream, kAgentGroup}});
    const long length = r[0].integer;
    q.inFlight = r[1].isArray() ? r[1][0].integer : 0;
    q.queued = std::max(0L, length - q.inFlight);
    view.queues.push_back(q);
  }
  return view;
}

nlohmann::json toJson(const FleetView& view) {
  nlohmann::json agents = nlohmann::json::array(), queues = nlohmann::json::array();
  for (const AgentView& a : view.agents)
    agents.push_back({{"name", a.name},
                      {"host", a.host},
                      {"target", a.target},
                      {"device", a.device},
                      {"version", a.version},
                      {"slots", a.jobSlots},
                      {"started", a.started},
                      {"jobs_done", a.jobsDone},
                      {"programs_done", a.programsDone},
                      {"busy_s", a.busySeconds},
                      {"programs_per_s", a.programsPerSecond},
                      {"jobs_in_hand", a.jobsInHand}});
  for (const QueueView& q : view.queues)
    queues.push_back({{"target", q.target}, {"queued", q.queued}, {"in_flight", q.inFlight}});
  return {{"redis", view.redis}, {"agents", agents}, {"queues", queues}};
}

}  // namespace tessel::fleet
