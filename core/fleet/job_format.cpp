#include "fleet/job_format.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "schedule/steps.h"
#include "target/target.h"
#include "te/dag_json.h"

namespace tessel::fleet {

namespace {

using nlohmann::json;

// JSON has no infinity or NaN: such numbers travel as text.
json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

double numberFrom(const json& j, const char* field) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw JobFormatError(std::string("field '") + field + "' is not a number");
}

json parse(const std::string& text, const char* what) {
  if (text.size() > kMaxMessageBytes)
    throw JobFormatError(std::string("the ") + what + " is larger than " + std::to_string(kMaxMessageBytes >> 20) +
                         " MiB");
  json j = parseUntrusted(text);
  if (j.is_discarded() || !j.is_object())
    throw JobFormatError(std::string("the ") + what + " is not a JSON object (or is nested deeper than " +
                         std::to_string(kMaxJsonDepth) + ")");
  return j;
}

struct TooDeep {};

void checkFormat(const json& j, const char* format, const char* what) {
  if (!j.contains("format") || j["format"] != format)
    throw JobFormatError(std::string("the ") + what + " is not in the format '" + format + "'");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"].get<int>() != kJobVersion)
    throw JobFormatError(std::string("the ") + what + " is of version " +
                         (j.contains("version") ? j["version"].dump() : std::string("(none)")) + "; this Tessel (" +
                         std::to_string(kJobVersion) + ") knows version " + std::to_string(kJobVersion) + " only");
}

template <typename T>
T field(const json& j, const char* name) {
  if (!j.contains(name)) throw JobFormatError(std::string("field '") + name + "' is missing");
  try {
    return j[name].get<T>();
  } catch (const json::exception&) {
    throw JobFormatError(std::string("field '") + name + "' has the wrong type: " + j[name].dump().substr(0, 80));
  }
}

json rulesToJson(const MeasureRules& r) {
  return {{"timeout_s", r.timeoutSeconds},
          {"warmup", r.warmup},
          {"repeats", r.repeats},
          {"min_repeat_s", r.minRepeatSeconds},
          {"cache_flush", measure::cacheStateName(r.cacheState)},
          {"seed", r.seed},
          {"build_timeout_s", r.buildTimeoutSeconds},
          {"register_tiles", r.registerTiles},
          {"layout_rewrite", r.layoutRewrite}};
}

MeasureRules rulesFromJson(const json& j) {
  if (!j.is_object()) throw JobFormatError("field 'rules' is not an object");
  MeasureRules r;
  r.timeoutSeconds = field<double>(j, "timeout_s");
  r.warmup = field<int>(j, "warmup");
  r.repeats = field<int>(j, "repeats");
  r.minRepeatSeconds = field<double>(j, "min_repeat_s");
  const auto cache = measure::parseCacheState(field<std::string>(j, "cache_flush"));
  if (!cache) throw JobFormatError("field 'cache_flush' is not model, on or off");
  r.cacheState = *cache;
  r.seed = field<unsigned>(j, "seed");
  r.buildTimeoutSeconds = field<double>(j, "build_timeout_s");
  r.registerTiles = field<bool>(j, "register_tiles");
  r.layoutRewrite = field<bool>(j, "layout_rewrite");
  // The ranges the CLI allows, so a job cannot keep an agent busy for ever.
  if (!(r.timeoutSeconds > 0 && r.timeoutSeconds <= 3600) ||
      !(r.buildTimeoutSeconds > 0 && r.buildTimeoutSeconds <= 3600))
    throw JobFormatError("a timeout of the rules is not in (0, 3600] seconds");
  if (r.warmup < 0 || r.warmup > 100 || r.repeats < 1 || r.repeats > 100)
    throw JobFormatError("warm-up runs or repeats of the rules are not in [0, 100] and [1, 100]");
  if (!(r.minRepeatSeconds >= 0 && r.minRepeatSeconds <= 10))
    throw JobFormatError("field 'min_repeat_s' is not in [0, 10]");
  return r;
}

}  // namespace

nlohmann::json parseUntrusted(const std::string& text) {
  if (text.size() > kMaxMessageBytes) return json(json::value_t::discarded);
  // Copying and printing JSON recurse: nesting is refused while parsing.
  const json::parser_callback_t bounded = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) throw TooDeep{};
    return true;
  };
  try {
    return json::parse(text, bounded, false);
  } catch (const TooDeep&) {
    return json(json::value_t::discarded);
  }
}

MeasureRules rulesOf(const measure::MeasurerOptions& o) {
  MeasureRules r;
  r.timeoutSeconds = o.run.timeoutSeconds;
  r.warmup = o.run.warmup;
  r.repeats = o.run.repeats;
  r.minRepeatSeconds = o.run.minRepeatSeconds;
  r.cacheState = o.run.cacheState;
  r.seed = o.run.seed;
  r.buildTimeoutSeconds = o.build.timeoutSeconds;
  r.registerTiles = o.cpp.registerTiles;
  r.layoutRewrite = o.cpp.layoutRewrite;
  return r;
}

measure::MeasurerOptions applyRules(measure::MeasurerOptions o, const MeasureRules& r) {
  o.run.timeoutSeconds = r.timeoutSeconds;
  o.run.warmup = r.warmup;
  o.run.repeats = r.repeats;
  o.run.minRepeatSeconds = r.minRepeatSeconds;
  o.run.cacheState = r.cacheState;
  o.run.seed = r.seed;
  o.build.timeoutSeconds = r.buildTimeoutSeconds;
  o.cpp.registerTiles = r.registerTiles;
  o.cpp.layoutRewrite = r.layoutRewrite;
  return o;
}

std::string encodeJob(const MeasureJob& job) {
  const task::SearchTask& t = job.task;
  json task = {{"op", t.op},   {"shape", t.shape}, {"target", t.target.str()},   {"layout", t.layout},
               {"key", t.key}, {"flops", t.flops}, {"dag", te::dagToJson(t.dag)}};
  json j = {{"format", kJobFormat},    {"version", kJobVersion},  {"id", job.id},
            {"tuner", job.tuner},      {"task", std::move(task)}, {"rules", rulesToJson(job.rules)},
            {"programs", job.programs}};
  return j.dump();
}

namespace {

MeasureJob readJob(const std::string& text) {
  const json j = parse(text, "job");
  checkFormat(j, kJobFormat, "job");
  MeasureJob job;
  job.id = field<std::string>(j, "id");
  job.tuner = field<std::string>(j, "tuner");
  if (job.id.empty() || job.tuner.empty()) throw JobFormatError("the job has no id or no tuner");
  if (!j.contains("task") || !j["task"].is_object()) throw JobFormatError("field 'task' is missing");
  const json& t = j["task"];
  task::SearchTask& task = job.task;
  task.op = field<std::string>(t, "op");
  task.shape = field<std::vector<int64_t>>(t, "shape");
  task.layout = field<std::string>(t, "layout");
  task.key = field<std::string>(t, "key");
  task.flops = field<double>(t, "flops");
  try {
    task.target = target::parseTarget(field<std::string>(t, "target"));
  } catch (const std::invalid_argument& e) {
    throw JobFormatError(std::string("the job's target: ") + e.what());
  }
  if (!t.contains("dag")) throw JobFormatError("field 'dag' is missing");
  try {
    task.dag = te::dagFromJson(t["dag"]);
  } catch (const std::invalid_argument& e) {
    throw JobFormatError(std::string("the job's compute definition: ") + e.what());
  }
  if (task::workloadKey(task.op, task.shape, task.dag) != task.key)
    throw JobFormatError("the job's compute definition does not give its workload key '" + task.key +
                         "' (a tuner of another Tessel version, or damage on the way)");
  job.rules = rulesFromJson(j.contains("rules") ? j["rules"] : json());
  job.programs = field<std::vector<std::string>>(j, "programs");
  if (job.programs.empty() || job.programs.size() > kMaxProgramsPerJob)
    throw JobFormatError("the job carries " + std::to_string(job.programs.size()) + " programs (1 to " +
                         std::to_string(kMaxProgramsPerJob) + ")");
  return job;
}

}  // namespace

MeasureJob decodeJob(const std::string& text) {
  try {
    return readJob(text);
  } catch (const json::exception& e) {  // a field of the wrong type where a value is read
    throw JobFormatError(std::string("the job does not read: ") + e.what());
  }
}

std::pair<std::string, std::string> jobAddress(const std::string& text) {
  const json j = parseUntrusted(text);
  if (j.is_discarded() || !j.is_object()) return {};
  auto str = [&](const char* k) { return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string(); };
  return {str("id"), str("tuner")};
}

std::string encodeResult(const JobResult& r) {
  json results = json::array();
  for (const measure::MeasureResult& m : r.results) {
    json costs = json::array();
    for (double c : m.costs)
      costs.push_back(number(c));
    results.push_back({{"error", int(m.error)},
                       {"message", m.message},
                       {"costs", std::move(costs)},
                       {"build_s", number(m.buildSeconds)},
                       {"run_s", number(m.runSeconds)},
                       {"max_abs_error", number(m.maxAbsError)}});
  }
  json j = {{"format", kResultFormat},  {"version", kJobVersion}, {"job", r.job},
            {"agent", r.agent},         {"error", r.error},       {"results", std::move(results)},
            {"agent_s", r.agentSeconds}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);  // compiler output may hold bad UTF-8
}

namespace {

JobResult readResult(const std::string& text) {
  const json j = parse(text, "result");
  checkFormat(j, kResultFormat, "result");
  JobResult r;
  r.job = field<std::string>(j, "job");
  r.agent = field<std::string>(j, "agent");
  r.error = field<std::string>(j, "error");
  r.agentSeconds = numberFrom(j.contains("agent_s") ? j["agent_s"] : json(), "agent_s");
  if (!j.contains("results") || !j["results"].is_array()) throw JobFormatError("field 'results' is missing");
  for (const json& e : j["results"]) {
    if (!e.is_object()) throw JobFormatError("a result is not an object");
    measure::MeasureResult m;
    const int code = field<int>(e, "error");
    if (code < 0 || code > int(measure::ErrorCode::Unknown)) throw JobFormatError("a result's error code is unknown");
    m.error = measure::ErrorCode(code);
    m.message = field<std::string>(e, "message");
    if (!e.contains("costs") || !e["costs"].is_array()) throw JobFormatError("a result has no costs");
    for (const json& c : e["costs"])
      m.costs.push_back(numberFrom(c, "costs"));
    m.buildSeconds = numberFrom(e.contains("build_s") ? e["build_s"] : json(), "build_s");
    m.runSeconds = numberFrom(e.contains("run_s") ? e["run_s"] : json(), "run_s");
    m.maxAbsError = numberFrom(e.contains("max_abs_error") ? e["max_abs_error"] : json(), "max_abs_error");
    if (m.ok() && m.costs.empty()) throw JobFormatError("a successful result has no costs");
    for (double c : m.costs)
      if (m.ok() && !(std::isfinite(c) && c > 0))
        throw JobFormatError("a successful result has a cost that is not a positive time");
    r.results.push_back(std::move(m));
  }
  return r;
}

}  // namespace

JobResult decodeResult(const std::string& text) {
  try {
    return readResult(text);
  } catch (const json::exception& e) {
    throw JobFormatError(std::string("the result does not read: ") + e.what());
  }
}

std::string resultJob(const std::string& text) {
  const json j = parseUntrusted(text);
  return j.is_object() && j.contains("job") && j["job"].is_string() ? j["job"].get<std::string>() : std::string();
}

}  // namespace tessel::fleet
