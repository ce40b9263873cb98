#include "measure_option.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#if TESSEL_HAVE_FLEET
#include "fleet/fleet_measurer.h"
#include "fleet/redis_url.h"
#endif

namespace tessel::cli {

MeasureChoice measureOption(const Args& args, bool quiet) {
  MeasureChoice c;
  const std::string where = args.get("measure", "local");
  if (where == "local") return c;
#if TESSEL_HAVE_FLEET
  fleet::FleetOptions f;
  try {
    f.redis = fleet::parseRedisUrl(where);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--measure: ") + e.what() + " (or local)");
  }
  if (!quiet) f.log = [](const std::string& line) { std::fprintf(stderr, "fleet: %s\n", line.c_str()); };
  auto stats = std::make_shared<fleet::FleetStats>();
  c.where = f.redis.str();
  c.factory = fleet::fleetMeasurerFactory(f, stats);
  c.fleetStats = [stats] {
    const fleet::FleetStats& s = *stats;
    return nlohmann::json{
        {"jobs", s.jobs},
        {"programs", s.programs},
        {"resent", s.resent},
        {"duplicates", s.duplicates},
        {"round_trip_s", s.roundTripSeconds},
        {"agent_s", s.agentSeconds},
        {"measure_s", s.measureSeconds},
        {"wait_s", s.waitSeconds},
        // Queueing, transfer and posting, against the agents' build and measurement.
        {"overhead", s.agentSeconds > 0 ? (s.roundTripSeconds - s.agentSeconds) / s.agentSeconds : 0.0}};
  };
  return c;
#else
  throw UsageError(
      "--measure " + where +
      ": this Tessel was built without the measurement fleet (install libhiredis-dev and libssl-dev, and rebuild)");
#endif
}

std::string measureHelp() {
  return "  --measure WHERE     local (default): build and measure here; redis://[:PASSWORD@]HOST:PORT:\n"
         "                      by the fleet's agents (tessel-agent) serving the target\n";
}

}  // namespace tessel::cli
