#include "model_loader.h"

namespace tessel::cli {

PreparedModel prepareModel(const Args& args, const std::string& target) {
  if (args.positional().size() != 1)
    throw UsageError(args.positional().empty() ? "missing MODEL (try --help)"
                                               : "expected one MODEL, got '" + args.positional()[1] + "' too");
  const std::string fusion = args.get("fusion", "dp");
  if (fusion != "rule" && fusion != "dp" && fusion != "none")
    throw UsageError("unknown --fusion " + fusion + " (available: rule, dp, none)");
  return frontend::prepareModel(args.positional()[0], args.get("input-shapes"), fusion, target);
}

}  // namespace tessel::cli
