#include "commands.h"

#include <algorithm>
#include <cstdio>

namespace tessel::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"tune-op", "OP --shape A,B,C[,...]", "tune one operator", tuneOpOptions, tuneOpHelp, tuneOpCommand},
      {"tune", "MODEL", "tune every task of a model (task scheduler)", tuneOptions, tuneHelp, tuneCommand},
      {"run", "MODEL --db FILE", "the model with its tuned kernels vs LibTorch", runOptions, runHelp, runCommand},
      {"db", "stats|best|sessions|show", "what a tuning database holds", dbOptions, dbHelp, dbCommand},
      {"export", "--task KEY --out DIR", "tuned kernels as a library, or records as CSV/JSON lines", exportOptions,
       exportHelp, exportCommand},
      {"models", "", "the built-in model zoo", modelsOptions, modelsHelp, modelsCommand},
      {"inspect", "MODEL", "a model's graph, fusion and tasks", inspectOptions, inspectHelp, inspectCommand},
      {"ops", "", "the ONNX ops Tessel supports, stage by stage", opsOptions, opsHelp, opsCommand},
      {"conformance", "DIR...", "ONNX backend test cases through Tessel", conformanceOptions, conformanceHelp,
       conformanceCommand},
      {"dataset", "collect|export|remeasure", "measured programs of several models, for cost models", datasetOptions,
       datasetHelp, datasetCommand},
      {"costmodel", "train|eval", "train a cost model on a dataset, or score it on held-out models", costmodelOptions,
       costmodelHelp, costmodelCommand},
      {"knowledge", "build|show", "the knowledge base tunings start from: pre-trained model and stored programs",
       knowledgeOptions, knowledgeHelp, knowledgeCommand},
      {"fleet", "status --redis URL", "the measurement agents and their queues", fleetOptions, fleetHelp, fleetCommand},
  };
  return table;
}

const Command* findCommand(const std::string& name) {
  for (const Command& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

int runCommand(const Command& c, const std::vector<std::string>& args) {
  if (std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::fputs(c.help().c_str(), stdout);
    return 0;
  }
  return c.run(args);
}

std::string usage() {
  std::string text =
      "usage: tessel COMMAND [options]\n"
      "\n"
      "Auto-tunes the tensor programs of deep-learning models for x86 CPUs\n"
      "and NVIDIA GPUs (--target cuda).\n"
      "\n"
      "commands:\n";
  for (const Command& c : commands()) {
    std::string head = "  " + c.name + (c.synopsis.empty() ? "" : " " + c.synopsis);
    head.resize(std::max<size_t>(head.size() + 1, 36), ' ');
    text += head + c.summary + "\n";
  }
  return text +
         "\n"
         "Run 'tessel COMMAND --help' for the options of a command, 'tessel --version'\n"
         "for the version.\n";
}

}  // namespace tessel::cli
