// tessel models: the built-in zoo.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "graph/zoo.h"

namespace tessel::cli {

OptionSpec modelsOptions() {
  return {{}, {"json", "help"}};
}

std::string modelsHelp() {
  return "usage: tessel models [--json]\n"
         "\n"
         "The built-in model zoo: names to give to inspect, tune and run,\n"
         "with their published parameter counts and GFLOPs (2 x multiply-adds).\n"
         "\n"
         "options:\n"
         "  --json    print one JSON object on stdout\n"
         "\n"
         "example:\n"
         "  tessel models --json\n";
}

int modelsCommand(const std::vector<std::string>& argv) {
  Args args(argv, modelsOptions());
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  nlohmann::json list = nlohmann::json::array();
  if (!args.has("json")) std::printf("%-26s %14s %9s  %s\n", "model", "parameters", "GFLOPs", "description");
  for (const graph::ZooEntry& m : graph::zooModels()) {
    list.push_back({{"name", m.name},
                    {"params", m.publishedParams},
                    {"gflops", m.publishedGflops},
                    {"description", m.description}});
    if (!args.has("json"))
      std::printf("%-26s %14lld %9.2f  %s\n", m.name.c_str(), (long long)m.publishedParams, m.publishedGflops,
                  m.description.c_str());
  }
  if (args.has("json")) std::puts(nlohmann::json{{"models", list}}.dump().c_str());
  return 0;
}

}  // namespace tessel::cli
