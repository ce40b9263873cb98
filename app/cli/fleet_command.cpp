// tessel fleet status: the measurement agents and their queues (core/fleet/).
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"

#if TESSEL_HAVE_FLEET
#include "fleet/fleet_status.h"
#include "fleet/redis_client.h"
#include "fleet/redis_url.h"
#endif

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel fleet status --redis URL [--json]\n"
    "\n"
    "The measurement fleet as its Redis sees it now: the agents (tessel-agent)\n"
    "that beat a heartbeat, with their target, device and work done, and per\n"
    "target the jobs queued and in flight.\n"
    "\n"
    "options:\n"
    "  --redis URL   redis://[[USER]:PASSWORD@]HOST[:PORT][/DB] or unix:///PATH/redis.sock\n"
    "  --json        print one JSON object on stdout\n"
    "\n"
    "example:\n"
    "  tessel fleet status --redis redis://:secret@10.0.0.5:6379\n";

}  // namespace

OptionSpec fleetOptions() {
  return {{"redis"}, {"json", "help"}};
}

std::string fleetHelp() {
  return kHelp;
}

int fleetCommand(const std::vector<std::string>& argv) {
  const Args args(argv, fleetOptions());
  actionOf(args, "fleet", {"status"});
  if (!args.has("redis")) throw UsageError("--redis URL is required");
#if TESSEL_HAVE_FLEET
  fleet::RedisEndpoint endpoint;
  try {
    endpoint = fleet::parseRedisUrl(args.get("redis"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--redis: ") + e.what());
  }
  fleet::RedisClient redis(endpoint, 5);
  const fleet::FleetView view = fleet::fleetStatus(redis);
  if (args.has("json")) {
    std::printf("%s\n", fleet::toJson(view).dump(2).c_str());
    return 0;
  }
  std::printf("fleet at %s\n\n", view.redis.c_str());
  if (view.agents.empty())
    std::printf("no agent (start one: tessel-agent --redis URL --target TARGET)\n");
  else
    std::printf("%-28s %-10s %-34s %5s %7s %9s %7s %s\n", "AGENT", "TARGET", "DEVICE", "SLOTS", "JOBS", "PROGRAMS",
                "PROG/S", "UP");
  const long now = long(std::time(nullptr));
  for (const fleet::AgentView& a : view.agents) {
    const long up = std::max(0L, now - a.started);
    std::printf("%-28s %-10s %-34s %5d %7ld %9ld %7.2f %ldh%02ldm\n", a.name.c_str(), a.target.c_str(),
                a.device.substr(0, 34).c_str(), a.jobSlots, a.jobsDone, a.programsDone, a.programsPerSecond, up / 3600,
                up / 60 % 60);
  }
  if (!view.queues.empty()) std::printf("\n%-20s %8s %10s\n", "QUEUE (TARGET)", "QUEUED", "IN FLIGHT");
  for (const fleet::QueueView& q : view.queues)
    std::printf("%-20s %8ld %10ld\n", q.target.c_str(), q.queued, q.inFlight);
  return 0;
#else
  throw UsageError(
      "this Tessel was built without the measurement fleet (install libhiredis-dev and libssl-dev, and rebuild)");
#endif
}

}  // namespace tessel::cli
