// tessel ops: every op Tessel knows and the stages that support it, from the
// op registry, the importers and the reference executor themselves.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "frontend/torchscript_import.h"
#include "graph/op_registry.h"
#include "reference/libtorch_executor.h"
#ifdef TESSEL_HAVE_ONNX
#include "frontend/onnx_import.h"
#endif

namespace tessel::cli {

namespace {

const char* patternName(graph::OpPattern p) {
  switch (p) {
    case graph::OpPattern::ElementWise:
      return "elementwise";
    case graph::OpPattern::Broadcast:
      return "broadcast";
    case graph::OpPattern::Injective:
      return "injective";
    case graph::OpPattern::Reduction:
      return "reduction";
    case graph::OpPattern::OutEWiseFusable:
      return "out-elementwise-fusable";
    case graph::OpPattern::Opaque:
      return "opaque";
  }
  return "?";
}

int onnxFrom(const std::string& op) {
#ifdef TESSEL_HAVE_ONNX
  return frontend::onnxMinOpset(op);
#else
  (void)op;
  return 0;
#endif
}

}  // namespace

OptionSpec opsOptions() {
  return {{}, {"json", "markdown", "help"}};
}

std::string opsHelp() {
  return "usage: tessel ops [--json | --markdown]\n"
         "\n"
         "Every ONNX op Tessel supports, with the stages that support it: shape\n"
         "inference, load-time evaluation (what folding can compute when the inputs\n"
         "are constants), its fusion pattern, lowering to tensor expressions (kernels),\n"
         "the LibTorch reference executor, and the ONNX opsets it is read from (up to\n"
         "17). With --json, also the aten ops the TorchScript importer converts.\n"
         "\n"
         "options:\n"
         "  --json      one JSON object on stdout\n"
         "  --markdown  a Markdown table (docs/models.md holds one)\n"
         "\n"
         "example:\n"
         "  tessel ops --json\n";
}

int opsCommand(const std::vector<std::string>& argv) {
  Args args(argv, opsOptions());
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  nlohmann::json list = nlohmann::json::array();
  const bool markdown = args.has("markdown"), json = args.has("json");
  auto yes = [](bool b) { return b ? "yes" : "-"; };
  if (markdown)
    std::puts(
        "| op | pattern | shapes | load-time evaluation | kernels | LibTorch reference | ONNX opsets |\n"
        "|---|---|---|---|---|---|---|");
  else if (!json)
    std::printf("%-24s %-24s %6s %5s %7s %9s %7s\n", "op", "pattern", "shapes", "eval", "kernels", "reference",
                "opsets");
  for (const graph::OpDef& d : graph::ops()) {
    const bool reference = reference::referenceRuns(d.name);
    const int from = onnxFrom(d.name);
    const std::string opsets = from > 0 ? std::to_string(from) + "-17" : "-";
    list.push_back({{"op", d.name},
                    {"pattern", patternName(d.pattern)},
                    {"shape_inference", bool(d.infer)},
                    {"load_time_evaluation", bool(d.eval)},
                    {"lowering", bool(d.lower)},
                    {"libtorch_reference", reference},
                    {"onnx_min_opset", from}});
    if (markdown)
      std::printf("| %s | %s | %s | %s | %s | %s | %s |\n", d.name.c_str(), patternName(d.pattern), yes(bool(d.infer)),
                  yes(bool(d.eval)), yes(bool(d.lower)), yes(reference), opsets.c_str());
    else if (!json)
      std::printf("%-24s %-24s %6s %5s %7s %9s %7s\n", d.name.c_str(), patternName(d.pattern), yes(bool(d.infer)),
                  yes(bool(d.eval)), yes(bool(d.lower)), yes(reference), opsets.c_str());
  }
  if (json)
    std::puts(nlohmann::json{{"ops", list}, {"torchscript_aten_ops", frontend::torchscriptAtenOps()}}.dump().c_str());
  return 0;
}

}  // namespace tessel::cli
