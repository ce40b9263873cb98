// What travels between a tuner and its measurement agents (fleet/): a job is
// a slice of one round, the task (its compute definition, exact), the
// measurement rules and the programs as step lists; its result is one
// measurement per program, or the reason the whole job failed. Both are JSON
// with a format name and version, so an agent refuses what it does not know
// instead of guessing. Everything decoded here may come from the network:
// decodeJob and decodeResult check every field and throw JobFormatError
// naming the first one that is wrong.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/measure_types.h"
#include "measure/program_measurer.h"
#include "measure/timing_rule.h"
#include "task/search_task.h"

namespace tessel::fleet {

inline constexpr const char* kJobFormat = "tessel-measure-job";
inline constexpr const char* kResultFormat = "tessel-measure-result";
inline constexpr int kJobVersion = 1;
// The most programs one job may carry, and the largest job or result text an
// agent or tuner reads (a job of 64 ResNet-18 programs is ~40 KiB).
inline constexpr size_t kMaxProgramsPerJob = 4096;
inline constexpr size_t kMaxMessageBytes = 64u << 20;
// The deepest nesting a job or result may have (a job's expressions are at
// most te::kMaxJsonExprDepth deep, a few levels below the top).
inline constexpr int kMaxJsonDepth = 640;

struct JobFormatError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// The rules a job's programs are built and measured by: the tuner's, so that
// a program measured by an agent is measured as it would be here. What is the
// agent's own (its worker, the sandbox, its compiler jobs and CPU limits) is
// not sent.
struct MeasureRules {
  double timeoutSeconds = 10;  // per kernel's run
  int warmup = measure::kDefaultTiming.warmup;
  int repeats = measure::kDefaultTiming.repeats;
  double minRepeatSeconds = measure::kDefaultTiming.minRepeatSeconds;  // measure/timing_rule.h
  measure::CacheState cacheState = measure::CacheState::Warm;
  unsigned seed = 1;
  double buildTimeoutSeconds = 60;  // per translation unit
  bool registerTiles = true;
  bool layoutRewrite = true;
};
MeasureRules rulesOf(const measure::MeasurerOptions& options);
// `base` (the agent's options for the task's target) with the job's rules.
measure::MeasurerOptions applyRules(measure::MeasurerOptions base, const MeasureRules& rules);

struct MeasureJob {
  std::string id;     // unique per job: "<tuner>/<sequence>"
  std::string tuner;  // the tuner that waits for it (its results stream)
  task::SearchTask task;
  MeasureRules rules;
  std::vector<std::string> programs;  // serialised steps (schedule::serializeSteps)
};

std::string encodeJob(const MeasureJob& job);
// Also rebuilds the task's workload key from its definition and refuses a job
// whose key differs (a tuner of another version, or damage in transit).
MeasureJob decodeJob(const std::string& text);
// The job id and tuner of a job, as far as they can be read (both empty when
// not even that): where to send the error result of a job decodeJob refused.
std::pair<std::string, std::string> jobAddress(const std::string& text);

struct JobResult {
  std::string job;    // MeasureJob::id
  std::string agent;  // who measured it
  // Set: the whole job failed (unknown format, its reference did not build)
  // and `results` is empty; the tuner records its programs as errors with
  // this message.
  std::string error;
  std::vector<measure::MeasureResult> results;  // one per program, in order
  // Building and measuring the programs (the task's reference too, the
  // first time): the job's work, without decoding, checking and posting.
  double agentSeconds = 0;
};

std::string encodeResult(const JobResult& result);
JobResult decodeResult(const std::string& text);
// The job a result answers, as far as it can be read ("" when not even
// that): a result that does not decode still answers its job, as an error.
std::string resultJob(const std::string& text);

// Untrusted text as JSON, refused (a discarded value) when it is not JSON,
// is longer than kMaxMessageBytes or nests deeper than kMaxJsonDepth (copying
// and printing JSON recurse; parsing does not).
nlohmann::json parseUntrusted(const std::string& text);

}  // namespace tessel::fleet
