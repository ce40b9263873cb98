// A measurement agent (`tessel-agent`): serves one target for the tuners of
// a fleet. It takes jobs from its target's stream in Redis (fleet_keys.h),
// builds and measures their programs here exactly as a local tuning does (a
// measure::ProgramMeasurer per task, its isolated workers and sandbox), and
// posts each job's results to the stream of the tuner that sent it. It beats
// a heartbeat that `tessel fleet status` reads and renews the lease of the
// jobs it holds; jobs of an agent that stopped renewing are taken over. On
// stop it cuts the job in hand short and hands it back to the queue.
//
// What an agent trusts: it compiles and runs the code its jobs describe. The
// kernels run in the worker's sandbox (no network, no exec, no writes outside
// its scratch folder, resource limits), but the compiler runs as the agent's
// user: give the fleet's Redis a password and run agents as a user that owns
// nothing else.
#pragma once

#include <functional>
#include <string>

#include "fleet/redis_url.h"
#include "support/cancellation.h"
#include "target/target.h"

namespace tessel::fleet {

struct AgentOptions {
  RedisEndpoint redis;
  target::Target target = target::Target::host();  // served under its canonical string
  int jobSlots = 1;                                // jobs in hand at once (each measured on its own)
  std::string name;                                // empty: HOST:PID:RANDOM
  std::string workerPath;                          // the tessel-worker executable
  int buildJobs = 0;                               // compilers at once per job (0: one per core)
  double leaseSeconds = 0;                         // 0: kLeaseSeconds
  // Lines for the agent's log (stderr in tessel-agent).
  std::function<void(const std::string&)> log;
  // Set (SIGTERM, SIGINT): the agent stops within about a second.
  support::CancelFlag stop;
};

// Serves jobs until `stop` is set; returns the number of jobs measured.
// Throws std::invalid_argument for a bad target or slot count, and
// RedisError when Redis cannot be reached at the start (later losses are
// waited out).
long runAgent(const AgentOptions& options);

// "host:pid:random", unique per agent process: a restarted agent does not
// take its predecessor's name (its jobs are taken over, not resumed).
std::string defaultAgentName();
// What the agent measures on, in words ("AMD EPYC 7B13, 2 cores").
std::string deviceDescription(const target::Target& target);

}  // namespace tessel::fleet
