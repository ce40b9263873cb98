#include "model_loader.h"

namespace tessel::cli {

std::string modelArgument(const Args& args) {
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "missing MODEL (try --help)"
                                               : "expected one MODEL, got '" + args.positional()[1] + "' too");
  return args.positional()[0];
}

std::string fusionArgument(const Args& args) {
  const std::string fusion = args.get("fusion", "dp");
  if (fusion != "rule" && fusion != "dp" && fusion != "none")
    throw UsageError("unknown --fusion " + fusion + " (available: rule, dp, none)");
  return fusion;
}

PreparedModel prepareModel(const Args& args, const target::Target& target) {
  const std::string model = modelArgument(args);
  return frontend::prepareModel(model, args.get("input-shapes"), fusionArgument(args), target);
}

}  // namespace tessel::cli
