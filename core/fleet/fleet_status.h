// The fleet as Redis sees it now (`tessel fleet status`, the studio's fleet
// panel): the agents that beat a heartbeat, and per target the jobs queued
// and in flight.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "fleet/redis_client.h"

namespace tessel::fleet {

struct AgentView {
  std::string name, host, target, device, version;
  int jobSlots = 1;
  long started = 0;  // Unix seconds
  long jobsDone = 0, programsDone = 0;
  double busySeconds = 0;
  double programsPerSecond = 0;  // over the last minute
  std::vector<std::string> jobsInHand;
};

struct QueueView {
  std::string target;
  long queued = 0;    // sent, not yet taken by an agent
  long inFlight = 0;  // taken, not yet answered
};

struct FleetView {
  std::string redis;              // the URL, without its password
  std::vector<AgentView> agents;  // by target, then name
  std::vector<QueueView> queues;  // by target
};

// RedisError when Redis cannot be reached.
FleetView fleetStatus(RedisClient& redis);
nlohmann::json toJson(const FleetView& view);

}  // namespace tessel::fleet
