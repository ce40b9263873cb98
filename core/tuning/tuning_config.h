// The settings of a model's tuning, one struct for whoever starts it (the
// CLI's `tune`, the studio): the defaults live here, and the session's
// config in the database is this struct serialised, so a studio session and
// a CLI session of the same model carry the same fields.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "measure/cache_state.h"
#include "search/tuner.h"
#include "target/target.h"

namespace tessel::tuning {

// Ansor's defaults: 64 programs per round, an evolutionary population of 2048.
inline constexpr int kDefaultTrials = 1000;
inline constexpr int kDefaultBatch = 64;
inline constexpr int kDefaultPopulation = 2048;
inline constexpr int kDefaultTimeoutSeconds = 10;
// A warm start's transferred programs measured in each task's first round.
inline constexpr int kDefaultTransfer = 8;

// The ranges the CLI accepts (a value outside is a usage error).
inline constexpr int kMaxTrials = 100000000;
inline constexpr int kMaxBatch = 4096;
inline constexpr int kMinPopulation = 16, kMaxPopulation = 1 << 20;
inline constexpr int kMaxTimeoutSeconds = 3600;  // per program
inline constexpr int kMaxJobs = 256;
inline constexpr long long kMaxSeed = 1ll << 62;

struct TuningConfig {
  std::string command = "tune";  // who started it: "tune" (CLI) or "studio"
  std::string model;             // zoo name, .onnx or .pt file
  std::string inputShapes;       // a TorchScript model's input shapes ("1,3,224,224;...")
  target::Target target = target::Target::host();
  std::string fusion = "dp";  // dp | rule | none
  // Of the whole model, a resumed session's included. 0 with a warm start:
  // each task's first round only (`transfer` programs: those transferred to
  // it, filled up by the search's picks).
  int trials = kDefaultTrials;
  double minutes = 0;  // a wall-clock budget beside trials (0: none)
  // The warm start (tuning/warm_start.h): the knowledge base's file ("" for
  // none: the database's records alone), or nothing of it with `cold`.
  bool cold = false;
  std::string knowledge;
  int transfer = kDefaultTransfer;  // transferred programs measured in each task's first round
  std::string search;               // empty: search::defaultSearch()
  std::string costModel;            // empty: cost::defaultCostModel()
  std::string costModelFile;        // a trained model to start from (cost/cost_model_file.h); names costModel
  uint64_t seed = 1;
  int batch = kDefaultBatch;  // programs per round
  int population = kDefaultPopulation;
  measure::CacheState cacheState = measure::CacheState::Model;
  double timeoutSeconds = kDefaultTimeoutSeconds;  // per program's run
  int jobs = 0;                                    // compilers at once (0: one per core)
  // Where tessel-worker is; not stored (a property of the installation).
  std::string workerPath;
  // Where programs are built and measured: "local", or the fleet's Redis
  // URL without its password (fleet/redis_url.h; stored as the session's).
  std::string measure = "local";
  // The fleet's measurers (fleet/fleet_measurer.h) where measure is not
  // local; not stored.
  measure::MeasurerFactory makeMeasurer;

  // The empty fields filled with their defaults.
  TuningConfig resolved() const;
  // What the session keeps: every field but workerPath and makeMeasurer,
  // plus the task count ("measure" only where it is not local, the warm
  // start's fields only where it is warm, "minutes" only where given).
  nlohmann::json toJson(size_t tasks) const;
  // One task's tuner options (batch, search, cost model by name, seed,
  // population, the target's hardware, measurement and build); trials are
  // the caller's.
  search::TuneOptions taskOptions() const;
};

}  // namespace tessel::tuning
