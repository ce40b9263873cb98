// The fleet's names in Redis and its clocks. Everything is under "tessel:":
//   tessel:jobs:TARGET      stream of jobs for the agents serving TARGET
//                           (consumer group "agents"); an entry's field "job"
//                           is the job (job_format.h); acknowledged and
//                           deleted once its result is posted
//   tessel:results:TUNER    stream of the results for one tuner (field
//                           "result"), read and deleted by the tuner
//   tessel:agent:NAME       an agent's heartbeat: its state as JSON; expires
//                           when the agent stops beating
//   tessel:tuner:TUNER      a tuner's heartbeat: an agent drops the queued
//                           jobs of a tuner that is gone
// Liveness is a lease: an agent renews the jobs it holds every heartbeat;
// a job not renewed for kLeaseSeconds (its agent died or hangs) is taken over
// by another agent with XAUTOCLAIM.
#pragma once

#include <string>

namespace tessel::fleet {

// Seconds as the whole milliseconds Redis's PX, BLOCK and idle times take.
inline std::string milliseconds(double seconds) {
  return std::to_string(long(seconds * 1000));
}
// "HOST:PID:RANDOM": unique per process, for agents and tuners alike (a
// restarted process does not take its predecessor's name).
std::string uniqueProcessName();

inline std::string jobStream(const std::string& target) {
  return "tessel:jobs:" + target;
}
inline std::string resultStream(const std::string& tuner) {
  return "tessel:results:" + tuner;
}
inline std::string agentKey(const std::string& agent) {
  return "tessel:agent:" + agent;
}
inline std::string tunerKey(const std::string& tuner) {
  return "tessel:tuner:" + tuner;
}
inline constexpr const char* kAgentGroup = "agents";
inline constexpr const char* kJobStreamPattern = "tessel:jobs:*";
inline constexpr const char* kAgentKeyPattern = "tessel:agent:*";

inline constexpr double kHeartbeatSeconds = 1;      // agents and tuners beat this often
inline constexpr double kAliveSeconds = 6;          // a heartbeat key lives this long
inline constexpr double kLeaseSeconds = 15;         // a job not renewed this long is taken over
inline constexpr double kBlockSeconds = 0.5;        // longest blocking read (stop and cancel wait at most this)
inline constexpr double kResultTtlSeconds = 86400;  // a results stream nobody reads goes after a day

}  // namespace tessel::fleet
