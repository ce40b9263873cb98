// The ONNX backend test suite through Tessel: each case folder (model.onnx
// and test_data_set_0/{input,output}_N.pb, as in Debian's libonnx-testdata)
// is imported, run by runtime::GraphExecutor and compared with the expected
// outputs.
//
// - Inputs of integer dtype become initializers holding their test data: for
//   Tessel they are shape and index operands (Reshape's shape, Gather's
//   indices, Slice's starts), which shape inference must know. Float32 inputs
//   stay runtime inputs.
// - A case is "unsupported" when the model needs something Tessel does not
//   implement (an op, domain, opset, dtype, attribute value; see
//   onnx_import_options.h) or a float tensor that is not float32 (double,
//   float16) or an output that is not float32 (the executor computes float32).
// - Tolerance: |got - want| <= atol + rtol * |want| with rtol 1e-3 (ONNX's
//   default) and atol 1e-5 (ONNX's 1e-7 is below float32 rounding of a
//   reordered sum). NaN matches NaN only; infinities must be equal.
// - Each case runs in a forked child by default, so that a crashing or
//   hanging kernel costs one "fail", never the runner.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace tessel::frontend {

enum class CaseStatus { Pass, Fail, Unsupported };
const char* caseStatusName(CaseStatus s);  // "pass", "fail", "unsupported"

struct CaseResult {
  std::string name;  // the case folder's name (test_conv_with_strides_padding)
  std::string dir;
  CaseStatus status = CaseStatus::Fail;
  std::string reason;  // empty for a pass
  double seconds = 0;
};

struct ConformanceOptions {
  double rtol = 1e-3;
  double atol = 1e-5;
  int jobs = 2;                 // compiler processes per case (ExecutorOptions::jobs)
  bool isolate = true;          // each case in a forked child (POSIX)
  double timeoutSeconds = 600;  // per case, when isolated
  int parallel = 1;             // cases run at once, when isolated
};

// One case; never throws: every problem is a result.
CaseResult runConformanceCase(const std::string& dir, const ConformanceOptions& options = {});

// The case folders named by `paths`: a folder holding model.onnx is a case,
// any other folder stands for its subfolders that hold one (sorted by name).
// Keeps those whose name contains `filter`. GraphError for a missing path or
// a folder without cases.
std::vector<std::string> findConformanceCases(const std::vector<std::string>& paths, const std::string& filter = "");

struct ConformanceSummary {
  std::vector<CaseResult> cases;  // in the order of the folders given
  int pass = 0, fail = 0, unsupported = 0;
  int supported() const { return pass + fail; }
  double passRate() const { return supported() ? double(pass) / double(supported()) : 0.0; }
};

// Runs the cases (options.parallel at once when isolated); `onCase` sees
// each result as soon as it and all before it are done, in order.
ConformanceSummary runConformance(const std::vector<std::string>& caseDirs, const ConformanceOptions& options = {},
                                  const std::function<void(const CaseResult&)>& onCase = {});

}  // namespace tessel::frontend
