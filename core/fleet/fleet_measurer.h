// The tuner's side of the fleet (measure/measurer.h): each round's programs
// are split into jobs over the agents that serve the task's target, sent
// through Redis (fleet_keys.h), and their results gathered in order; the
// tuner records them in its own database as a local round's. While it waits
// it beats its heartbeat (agents drop the jobs of a tuner that is gone).
// Redis restarting empty mid-round (a new run_id) makes it send the round's
// outstanding jobs again; a result that arrives twice (an agent thought dead
// finished after all) is taken once. No agent: it waits, and says so.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "fleet/redis_url.h"
#include "measure/measurer.h"
#include "measure/program_measurer.h"

namespace tessel::fleet {

struct FleetOptions {
  RedisEndpoint redis;
  // Lines about waiting for agents or for Redis (the CLI prints them).
  std::function<void(const std::string&)> log;
  // The most programs one job carries (a round is split into at most this
  // many per job, and into at least one job per agent slot).
  int maxProgramsPerJob = 64;
};

// What a tuner's jobs cost beyond their build and measurement: the fleet's
// overhead (queueing, transfer, decoding, posting), summed over its jobs.
struct FleetStats {
  long jobs = 0, programs = 0, resent = 0, duplicates = 0;
  double roundTripSeconds = 0;  // from encoding each job to decoding its result
  double agentSeconds = 0;      // of that, the agents' building and measuring (the rest is overhead)
  double measureSeconds = 0;    // of that, measuring (the programs' run times; the rest is mostly building)
  double waitSeconds = 0;       // the tuner's time in measure(): sending, waiting, reading
};

class FleetMeasurer final : public measure::Measurer {
 public:
  // Connects (RedisError when Redis cannot be reached). `stats`, if given,
  // is where its jobs are counted (shared by a model's tasks).
  FleetMeasurer(const task::SearchTask& task, const measure::MeasurerOptions& options, FleetOptions fleet,
                std::shared_ptr<FleetStats> stats = nullptr);
  ~FleetMeasurer() override;

  // RedisError only if Redis stays away while the round is cancelled; waits
  // for agents and for Redis otherwise. A cancelled round returns its
  // programs as "cancelled" errors, as a local one does.
  std::vector<measure::ProgramResult> measure(const std::vector<std::vector<schedule::Step>>& programs) override;
  // Generated here (the code generator of the task's target), not by an agent.
  std::string source(const std::vector<schedule::Step>& program) const override;

  const FleetStats& stats() const;
  // This tuner's name in the fleet (its results stream and heartbeat).
  const std::string& tunerId() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The factory a tuner's options take (search::TuneOptions::makeMeasurer).
// `stats`, if given, accumulates over every task's measurer.
measure::MeasurerFactory fleetMeasurerFactory(FleetOptions fleet, std::shared_ptr<FleetStats> stats = nullptr);

}  // namespace tessel::fleet
