// --measure local|redis://HOST:PORT: where a tuning's programs are built and
// measured, on this machine or by the fleet's agents (core/fleet/), shared by
// tune-op, tune and dataset collect.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "args.h"
#include "measure/measurer.h"

namespace tessel::cli {

struct MeasureChoice {
  std::string where = "local";       // "local", or the Redis URL without its password
  measure::MeasurerFactory factory;  // empty: local
  // The fleet's counts over the whole tuning (null when local), as JSON:
  // jobs, programs, resent, duplicates, round_trip_s, agent_s, measure_s,
  // wait_s, overhead.
  std::function<nlohmann::json()> fleetStats;
  bool local() const { return !factory; }
};

// A bad URL, or a fleet this build lacks, is a usage error. Lines about
// waiting for agents or Redis go to stderr unless `quiet`.
MeasureChoice measureOption(const Args& args, bool quiet);
std::string measureHelp();

}  // namespace tessel::cli
