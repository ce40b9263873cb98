// What one measurement produces, and the error codes of the spec (as Ansor);
// what a runner is given: kernels and the task they compute.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/error_code.h"

namespace tessel::measure {

// Defined in support/ (the code generator's builder reports them too).
using support::ErrorCode;
using support::errorName;

struct MeasureResult {
  ErrorCode error = ErrorCode::None;
  std::string message;        // details: compiler output, signal, max error...
  std::vector<double> costs;  // seconds of every timed repeat
  double buildSeconds = 0;
  double runSeconds = 0;   // wall time the measurement took
  double maxAbsError = 0;  // against the reference
  bool ok() const { return error == ErrorCode::None; }
  double medianCost() const;  // +inf without costs
  double minCost() const;
};

// A built kernel, as its backend's runner loads it.
struct KernelRef {
  std::string library;  // path of its binary: a shared library on the CPU
  std::string symbol;
  // Constant inputs the kernel reads packed (lower/layout_rewrite.h): the
  // library's packing function, called once on the plain inputs before the
  // kernel is checked and timed (not timed itself), and the packed size of
  // each input (0: passed plain). Empty: no input is packed.
  std::string packSymbol;
  std::vector<int64_t> packedSizes;
};

// The task whose kernels a runner measures.
struct RunTask {
  std::string key;                   // the worker caches the reference output per key
  std::vector<int64_t> bufferSizes;  // elements of each argument, inputs then outputs
  size_t numInputs = 0;
  std::vector<size_t> constantInputs;  // inputs known before a model runs (weights)
  KernelRef reference;                 // the naive program of the task
  double tolerance = 1e-4;             // |out - ref| <= tolerance * (1 + |ref|)
};

}  // namespace tessel::measure
