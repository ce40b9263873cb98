#include "tuning_options.h"

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "search/search_registry.h"
#include "target/target.h"

namespace tessel::cli {

namespace {

// "  --name VALUE" padded to the help texts' column, then the text.
std::string helpLine(const std::string& option, const std::string& text) {
  constexpr size_t kColumn = 22;
  std::string line = "  " + option;
  line += line.size() < kColumn ? std::string(kColumn - line.size(), ' ') : "\n" + std::string(kColumn, ' ');
  return line + text + "\n";
}

}  // namespace

target::Target parseTargetOption(const std::string& text) {
  try {
    return target::parseTarget(text);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--target: ") + e.what());
  }
}

std::string targetFilter(const Args& args) {
  return args.has("target") ? parseTargetOption(args.get("target")).str() : "";
}

std::string targetArgument(const std::string& target) {
  return target == "cpu" ? "" : " --target \"" + target + "\"";
}

std::string targetOption(const Args& args) {
  const target::Target t = parseTargetOption(args.get("target", "cpu"));
  if (!t.isCpu())
    throw UsageError(
        "--target cuda is not available yet: this build generates CPU code only "
        "(the CUDA backend is not implemented); use --target cpu");
  if (!t.runsOnHost())
    throw UsageError("--target " + t.str() + ": this machine's CPU cannot run " + t.arch +
                     " code, so its kernels could not be measured here");
  return t.str();
}

std::string targetHelp() {
  return helpLine("--target T", "what to tune for (default cpu: this machine, -march=native,") +
         helpLine("", "every core); a target string: cpu [-arch=A] [-threads=N],") +
         helpLine("", "A: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4; N: 0 (every") +
         helpLine("", "core) to 1024; e.g. --target \"cpu -arch=x86-64-v2 -threads=1\"") +
         helpLine("", "(cuda -arch=sm_XX parses; its backend is not implemented yet)");
}

std::string searchOption(const Args& args) {
  const std::string name = args.get("search", search::defaultSearch());
  if (!search::findSearch(name))
    throw UsageError("unknown --search " + name + " (available: " + search::availableSearches() + ")");
  return name;
}

std::string costModelOption(const Args& args) {
  const std::string name = args.get("cost-model", cost::defaultCostModel());
  const cost::CostModelEntry* e = cost::findCostModel(name);
  if (!e) throw UsageError("unknown --cost-model " + name + " (available: " + cost::availableCostModels() + ")");
  if (!e->available) throw UsageError("--cost-model " + name + " is not available: " + e->why);
  return name;
}

std::shared_ptr<cost::CostModel> costModelFileOption(const Args& args, std::string* name) {
  if (!args.has("cost-model-file")) return nullptr;
  std::shared_ptr<cost::CostModel> model;
  try {
    model = cost::loadCostModelFile(args.get("cost-model-file"));
  } catch (const std::exception& e) {
    throw UsageError(std::string("--cost-model-file: ") + e.what());
  }
  if (args.has("cost-model") && args.get("cost-model") != model->name())
    throw UsageError("--cost-model " + args.get("cost-model") + " but --cost-model-file holds a " + model->name() +
                     " model");
  *name = model->name();
  return model;
}

measure::CacheState cacheFlushOption(const Args& args, measure::CacheState fallback) {
  std::vector<std::string> names;
  for (measure::CacheState s : measure::kCacheStates)
    names.push_back(measure::cacheStateName(s));
  return *measure::parseCacheState(args.getChoice("cache-flush", measure::cacheStateName(fallback), names));
}

std::string searchHelp() {
  std::string text;
  for (const search::SearchEntry& e : search::searches())
    text += helpLine("", e.name + (e.name == search::defaultSearch() ? " (default): " : ": ") + e.summary);
  return helpLine("--search NAME", "search policy:") + text;
}

std::string costModelHelp() {
  std::string text;
  for (const cost::CostModelEntry& e : cost::costModels())
    text += helpLine("", e.name + (e.name == cost::defaultCostModel() ? " (default): " : ": ") + e.summary +
                             (e.available ? "" : " [not in this build: " + e.why + "]"));
  return helpLine("--cost-model NAME", "cost model guiding the search:") + text +
         helpLine("--cost-model-file F", "start from a trained model (tessel costmodel train); it goes on") +
         helpLine("", "learning from the tuning's records");
}

std::string cacheFlushHelp(measure::CacheState fallback) {
  std::string text;
  for (measure::CacheState s : measure::kCacheStates)
    text += helpLine("", std::string(measure::cacheStateName(s)) + (s == fallback ? " (default): " : ": ") +
                             measure::cacheStateSummary(s));
  return helpLine("--cache-flush STATE", "where the kernel's data is at each timed call:") + text;
}

}  // namespace tessel::cli
