#include "tuning_options.h"

#include "cost/cost_model_file.h"
#include "cost/cost_model_registry.h"
#include "measure/target_check.h"
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

target::Target targetOfArgs(const Args& args) {
  std::string text = args.get("target", "cpu");
  if (args.has("arch")) {
    if (text.find("-arch") != std::string::npos)
      throw UsageError("--arch " + args.get("arch") + " and --target \"" + text + "\" both name the arch: give one");
    text += " -arch=" + args.get("arch");
  }
  return parseTargetOption(text);
}

std::optional<target::Target> targetFilter(const Args& args) {
  if (args.has("target") || args.has("arch")) return targetOfArgs(args);
  return std::nullopt;
}

std::string targetArgument(const target::Target& target) {
  return target == target::Target::host() ? "" : " --target \"" + target.str() + "\"";
}

target::Target targetOption(const Args& args, bool gpuAllowed, bool measuredHere) {
  target::Target t = targetOfArgs(args);
  if (!measuredHere) {
    // The fleet's agents measure: this machine needs neither the GPU nor the arch.
    if (!t.isCpu() && t.arch == "native")
      throw UsageError("--target " + t.str() + ": with --measure redis://, name the agents' GPU arch (--arch sm_90): " +
                       "'native' would mean this machine's GPU");
    return t;
  }
  if (!t.isCpu() && !gpuAllowed)
    throw UsageError("--target " + t.str() + ": this command runs on the CPU only (a cuda target is for tune, " +
                     "tune-op and dataset collect)");
  // Its kernels are measured on this machine: checked before anything is written.
  if (const std::string why = measure::unmeasurableReason(t); !why.empty()) {
    if (t.isCuda()) throw std::runtime_error("--target " + t.str() + ": " + why);
    throw UsageError("--target " + t.str() + ": " + why + ", so its kernels could not be measured here");
  }
  // Records name the GPU's arch, not "this machine's".
  return measure::resolvedHere(t);
}

std::string targetHelp() {
  return helpLine("--target T", "what to tune for (default cpu: this machine, -march=native,") +
         helpLine("", "every core); a target string: cpu [-arch=A] [-threads=N],") +
         helpLine("", "A: native, x86-64, x86-64-v2, x86-64-v3, x86-64-v4; N: 0 (every") +
         helpLine("", "core) to 1024; e.g. --target \"cpu -arch=x86-64-v2 -threads=1\";") +
         helpLine("", "or cuda [-arch=sm_XX]: this machine's first NVIDIA GPU (its") +
         helpLine("", "driver needed), compiled for sm_XX (default: that GPU's)") +
         helpLine("--arch A", "the target's arch, as -arch=A in --target (--target cuda --arch sm_90)");
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
         helpLine("", "learning from the tuning's records (mlp, gat, atformer: once 512 are measured)");
}

std::string cacheFlushHelp(measure::CacheState fallback) {
  std::string text;
  for (measure::CacheState s : measure::kCacheStates)
    text += helpLine("", std::string(measure::cacheStateName(s)) + (s == fallback ? " (default): " : ": ") +
                             measure::cacheStateSummary(s));
  return helpLine("--cache-flush STATE", "where the kernel's data is at each timed call:") + text;
}

}  // namespace tessel::cli
