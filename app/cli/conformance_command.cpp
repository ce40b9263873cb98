// tessel conformance DIR...: the ONNX backend test suite through Tessel's
// importer and executor (core/frontend/conformance.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "args.h"
#include "commands.h"
#ifdef TESSEL_HAVE_ONNX
#include "frontend/conformance.h"
#include "graph/graph.h"
#endif

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel conformance DIR... [--filter SUBSTR] [--json] [--parallel N] [--jobs N] [--timeout S]\n"
    "\n"
    "Runs ONNX backend test cases (model.onnx + test_data_set_0/*.pb) through Tessel's\n"
    "ONNX importer and graph executor and compares the outputs with the expected ones\n"
    "(|got - want| <= 1e-5 + 1e-3 |want|).\n"
    "\n"
    "Each DIR is a case folder (it holds model.onnx) or a folder of case folders, e.g.\n"
    "/usr/share/libonnx-testdata/data/node. A case passes, fails, or is unsupported\n"
    "(an op, opset, dtype or attribute Tessel does not implement); the pass rate is\n"
    "over the supported cases. The exit status is 0 when the cases ran, failures or not.\n"
    "\n"
    "options:\n"
    "  --filter SUBSTR  only the cases whose name contains SUBSTR\n"
    "  --json           print one JSON object on stdout\n"
    "  --parallel N     cases run at once, each in its own process (default 1)\n"
    "  --jobs N         compiler processes per case (default 2)\n"
    "  --timeout S      seconds a case may take before it fails (default 600)\n"
    "\n"
    "example:\n"
    "  tessel conformance /usr/share/libonnx-testdata/data/node --filter relu --parallel 2\n";

}  // namespace

OptionSpec conformanceOptions() {
  return {{"filter", "parallel", "jobs", "timeout"}, {"json", "help"}};
}

std::string conformanceHelp() {
  return kHelp;
}

int conformanceCommand(const std::vector<std::string>& argv) {
  Args args(argv, conformanceOptions());
  if (args.positional().empty()) throw UsageError("missing the test case folder(s) (try --help)");
#ifndef TESSEL_HAVE_ONNX
  throw std::runtime_error(
      "this tessel was built without ONNX support (install libonnx-dev and libprotobuf-dev, then rebuild)");
#else
  frontend::ConformanceOptions options;
  options.parallel = int(args.getInt("parallel", 1, 1, 64));
  options.jobs = int(args.getInt("jobs", 2, 1, 64));
  options.timeoutSeconds = double(args.getInt("timeout", 600, 1, 86400));
  std::vector<std::string> cases;
  try {
    cases = frontend::findConformanceCases(args.positional(), args.get("filter"));
  } catch (const graph::GraphError& e) {
    throw UsageError(e.what());
  }
  const bool json = args.has("json");
  if (cases.empty() && !json) std::printf("no case matches the filter '%s'\n", args.get("filter").c_str());
  auto s = frontend::runConformance(cases, options, [&](const frontend::CaseResult& r) {
    if (json) return;
    std::printf("%-11s  %s  %s\n", frontend::caseStatusName(r.status), r.name.c_str(), r.reason.c_str());
    std::fflush(stdout);
  });
  if (json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const frontend::CaseResult& r : s.cases)
      rows.push_back({{"name", r.name},
                      {"status", frontend::caseStatusName(r.status)},
                      {"reason", r.reason},
                      {"seconds", r.seconds}});
    nlohmann::json j = {{"cases", rows},
                        {"pass", s.pass},
                        {"fail", s.fail},
                        {"unsupported", s.unsupported},
                        {"supported", s.supported()},
                        {"pass_rate", s.passRate()}};
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("\n%zu cases: %d pass, %d fail, %d unsupported; pass rate %.1f %% of %d supported\n", s.cases.size(),
                s.pass, s.fail, s.unsupported, 100.0 * s.passRate(), s.supported());
  }
  return 0;
#endif
}

}  // namespace tessel::cli
