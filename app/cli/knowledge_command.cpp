// tessel knowledge build|show: the knowledge base every tuning starts from
// (knowledge/knowledge_base.h), built from measured datasets and databases.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "knowledge/knowledge_base.h"
#include "target/host_cpu.h"
#include "tuning/knowledge_build.h"
#include "tuning_options.h"

namespace tessel::cli {

namespace {

int buildCommand(const Args& args) {
  if (!args.has("out")) throw UsageError("build needs --out FILE.tkb");
  if (!args.has("data") && !args.has("db")) throw UsageError("build needs --data FILE[,FILE] or --db FILE[,FILE]");
  tuning::KnowledgeBuildConfig c;
  c.datasets = parseList(args.get("data"));
  c.databases = parseList(args.get("db"));
  c.target = parseTargetOption(args.get("target", "cpu"));
  if (args.has("measured-on")) c.measuredOn = parseTargetOption(args.get("measured-on"));
  c.cpu = args.get("cpu");
  if (args.has("cpu") &&
      (c.cpu.empty() || c.cpu.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos))
    throw UsageError("--cpu '" + c.cpu + "' is not a microarchitecture name like amd-zen4 or intel-sapphirerapids");
  c.programsPerTask = size_t(args.getInt("programs-per-task", 16, 1, 4096));
  c.costModel = args.get("cost-model");
  c.costModelFile = args.get("cost-model-file");
  if (!c.costModel.empty() && !c.costModelFile.empty())
    throw UsageError("--cost-model trains a model here, --cost-model-file brings one: give one of them");
  if (!c.costModel.empty()) costModelOption(args);  // a usage error for an unknown or absent model
  c.epochs = int(args.getInt("epochs", 60, 1, 100000));
  c.seed = uint64_t(args.getInt("seed", 1, 0, 1ll << 62));
  c.leaveOut = parseList(args.get("leave-out"));
  tuning::KnowledgeBuildSummary s;
  const knowledge::KnowledgeBase kb = tuning::buildKnowledgeBase(c, &s);
  knowledge::writeKnowledgeBase(args.get("out"), kb);
  if (args.has("json")) {
    std::puts(
        nlohmann::json{{"out", args.get("out")},
                       {"target_class", kb.info.targetClass},
                       {"cpu", kb.info.cpu.empty() ? nlohmann::json() : nlohmann::json(kb.info.cpu)},
                       {"records", s.records},
                       {"tasks", s.tasks},
                       {"programs", s.programs},
                       {"with_decisions", s.withDecisions},
                       {"unbuilt_records", s.unbuilt},
                       {"cost_model", kb.info.costModel.empty() ? nlohmann::json() : nlohmann::json(kb.info.costModel)}}
            .dump()
            .c_str());
    return 0;
  }
  std::printf(
      "%s: %zu tasks, %zu programs (%zu with decisions: they transfer to other tasks) of %zu records, for %s "
      "targets%s%s\n",
      args.get("out").c_str(), s.tasks, s.programs, s.withDecisions, s.records, kb.info.targetClass.c_str(),
      kb.info.costModel.empty() ? "" : ", cost model ", kb.info.costModel.c_str());
  if (s.unbuilt)
    std::fprintf(stderr,
                 "warning: %zu records name tasks their models no longer have (an older definition): left out\n",
                 s.unbuilt);
  return 0;
}

int showCommand(const Args& args) {
  if (args.positional().size() != 2) throw UsageError("show needs one knowledge base FILE");
  const std::string path = args.positional()[1];
  const knowledge::KnowledgeBase kb = knowledge::readKnowledgeBase(path);
  const knowledge::KnowledgeInfo& i = kb.info;
  if (args.has("json")) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const knowledge::LibraryTask& t : kb.library.tasks())
      tasks.push_back({{"key", t.key},
                       {"target", t.target.str()},
                       {"op", t.op},
                       {"models", t.models},
                       {"programs", t.programs.size()},
                       {"best_seconds", t.programs.empty() ? 0 : t.programs.front().seconds}});
    std::puts(nlohmann::json{{"format", i.format},
                             {"target_class", i.targetClass},
                             {"learned_format", i.learnedFormat},
                             {"threads", i.threads},
                             {"cpu", i.cpu.empty() ? nlohmann::json() : nlohmann::json(i.cpu)},
                             {"built_from", i.builtFrom},
                             {"cost_model", i.costModel},
                             {"cost_model_trained_on", i.costModelTrainedOn},
                             {"created", i.created},
                             {"version", i.version},
                             {"tasks", tasks}}
                  .dump()
                  .c_str());
    return 0;
  }
  const std::string machine =
      i.cpu.empty() ? "" : " on an " + target::microarchitectureTitle(i.cpu) + " (" + i.cpu + ")";
  std::printf("%s: format %d, %s targets (measured%s with %d threads), built %s by Tessel %s from %s\n", path.c_str(),
              i.format, i.targetClass.c_str(), machine.c_str(), i.threads, i.created.c_str(), i.version.c_str(),
              nlohmann::json(i.builtFrom).dump().c_str());
  if (!i.costModel.empty())
    std::printf("cost model: %s (learned-model format %d), trained on %zu programs\n", i.costModel.c_str(),
                i.learnedFormat, i.costModelTrainedOn);
  std::printf("%zu tasks, %zu programs\n", kb.library.tasks().size(), kb.library.programs());
  for (const knowledge::LibraryTask& t : kb.library.tasks())
    std::printf("  %-48s %3zu programs  best %9.4f ms\n", t.key.c_str(), t.programs.size(),
                t.programs.empty() ? 0 : t.programs.front().seconds * 1e3);
  return 0;
}

}  // namespace

OptionSpec knowledgeOptions() {
  return {{"data", "db", "target", "measured-on", "cpu", "programs-per-task", "cost-model", "epochs", "seed",
           "cost-model-file", "leave-out", "out"},
          {"json", "help"}};
}

std::string knowledgeHelp() {
  return "usage: tessel knowledge build --data FILE[,FILE] [--db FILE[,FILE]] --out FILE.tkb [options]\n"
         "       tessel knowledge show FILE.tkb [--json]\n"
         "\n"
         "A knowledge base is what every tuning starts from unless --cold: a pre-trained\n"
         "cost model and, for every stored task, its fastest measured programs with their\n"
         "annotation decisions. A task seen before replays them; a task of the same\n"
         "structure gets them with their tile sizes re-fitted to its extents. Tessel ships\n"
         "one per target class (share/tessel/knowledge/cpu-avx512.tkb) and, for the CPUs it\n"
         "has measured, one per microarchitecture (cpu-avx512-amd-zen5.tkb): a tuning takes\n"
         "the one measured on a CPU like its own. Build one with `tessel dataset collect`\n"
         "(or `dataset remeasure`) on your machine and put it beside them, or pass it\n"
         "with tune --knowledge.\n"
         "\n"
         "build options:\n"
         "  --data FILE,...     datasets (tessel dataset export, .jsonl or .jsonl.gz)\n"
         "  --db FILE,...       tuning databases (their records carry decisions)\n"
         "  --target T          the records' target string (default cpu)\n"
         "  --measured-on T     the target that measured them (default: --target on this\n"
         "                      machine): its class names the base (cpu-avx512, cpu-avx2,\n"
         "                      cpu-sse), its threads fit the decisions\n"
         "  --cpu NAME          the microarchitecture of the CPU that measured them, e.g.\n"
         "                      amd-zen4 (default: this machine's, unless --measured-on);\n"
         "                      a tuning prefers the base of its own CPU's (tessel knowledge\n"
         "                      show names each base's)\n"
         "  --programs-per-task N  the fastest programs kept of each task (default 16)\n"
         "  --cost-model M      the cost model to pre-train on the datasets' records\n"
         "                      (xgb, mlp, gat, atformer; default: none)\n"
         "  --epochs N          its passes over them (default 60; xgb: ignored)\n"
         "  --seed S            its random seed (default 1)\n"
         "  --cost-model-file F or a model trained before (tessel costmodel train)\n"
         "  --leave-out A,B     models left out (to try transfer to a model it has not seen)\n"
         "  --out FILE          where to write it (.tkb)\n"
         "  --json              one JSON object on stdout\n"
         "\n"
         "example:\n"
         "  tessel knowledge build --data set.jsonl.gz --cost-model atformer --out cpu-avx512.tkb\n"
         "  tessel tune resnet18 --knowledge cpu-avx512.tkb --trials 300\n";
}

int knowledgeCommand(const std::vector<std::string>& argv) {
  Args args(argv, knowledgeOptions());
  if (args.positional().empty()) throw UsageError("missing ACTION: build or show (try --help)");
  const std::string what = args.positional()[0];
  if (what == "build") {
    if (args.positional().size() > 1) throw UsageError("build takes no FILE argument: give --out FILE");
    return buildCommand(args);
  }
  if (what == "show") return showCommand(args);
  throw UsageError("unknown action '" + what + "' (available: build, show)");
}

}  // namespace tessel::cli
