// The options `tune` and `tune-op` share, read one way: the target, the
// search and cost model (from their registries, so help texts and errors
// list what this build has), the cache state, and their help lines.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "args.h"
#include "cost/cost_model.h"
#include "measure/cache_state.h"
#include "target/target.h"

namespace tessel::cli {

// --target and --arch: a target (target/target.h) this machine can measure
// (a cuda target with its GPU's arch resolved). A CPU arch this CPU lacks is a usage error;
// a cuda target without a working NVIDIA driver is an error naming why
// (std::runtime_error), and a usage error where !gpuAllowed. Where the
// fleet measures (!measuredHere) only a cuda target's arch is required.
target::Target targetOption(const Args& args, bool gpuAllowed = true, bool measuredHere = true);
// --target with --arch folded in, parsed but not checked against the machine.
target::Target targetOfArgs(const Args& args);
// Its help lines.
std::string targetHelp();
// A target string of any kind, parsed; a bad one is a usage error.
target::Target parseTargetOption(const std::string& text);
// --target as a filter (export, dataset export): none when not given.
std::optional<target::Target> targetFilter(const Args& args);
// What a resume hint adds to a command line for a target: nothing for "cpu".
std::string targetArgument(const target::Target& target);
// --search and --cost-model, checked against the registries.
std::string searchOption(const Args& args);
std::string costModelOption(const Args& args);
// --cost-model-file: a trained model (`tessel costmodel train`) to start
// from, or null. Sets *name to the file's model; a --cost-model naming
// another is a usage error.
std::shared_ptr<cost::CostModel> costModelFileOption(const Args& args, std::string* name);
// --cache-flush model|on|off with the command's default.
measure::CacheState cacheFlushOption(const Args& args, measure::CacheState fallback);

// Help lines of --search, --cost-model and --cache-flush (with the default marked).
std::string searchHelp();
std::string costModelHelp();
std::string cacheFlushHelp(measure::CacheState fallback);

}  // namespace tessel::cli
