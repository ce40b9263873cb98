// A readable description of a task's search space (its sketches, the
// decisions that complete them and their domains, the size of the space,
// random samples) and the C++ source of a program given by its decisions:
// what the studio's search-space and code views show. Plain C++, no Qt.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule/sketch.h"
#include "task/search_task.h"

namespace tessel::search {

struct ParameterSummary {
  std::string key;     // "tile:3", "at:pad", "parallel:C", ...
  std::string domain;  // human text: "3 tile lengths of 64 (innermost ≤ 64)" (their product divides 64), "1..3"
  double choices = 0;  // number of values in the domain
  // The range depends on other decisions (e.g. how many loops a tiling
  // leaves to parallelise): the domain is the union seen over samples.
  bool varies = false;
  // The decision exists only in some programs of the sketch.
  bool optional = false;
};

struct SketchSummary {
  size_t index = 0;
  std::vector<std::string> rules;  // the derivation rules applied, in order
  // The sketch's loops, nested, with the tile lengths still to choose shown
  // symbolically ("tile:3[0]", "64/prod(tile:3)").
  std::string loopNest;
  std::vector<ParameterSummary> parameters;
  double size = 0;  // product of the parameters' choices
};

struct SpaceSummary {
  std::vector<SketchSummary> sketches;
  double size = 0;  // sum over sketches
  // Sampled annotations: "sketch 0: tile:2=[4,2,8] parallel:C=2 ...".
  std::vector<std::string> samples;
  // The serialised decisions of each sample (programSource takes them).
  std::vector<std::string> sampleDecisions;
};

// A state's loop nest, one loop per line, attached stages inside the loop
// they are computed at, with the loops' extents and annotations (what a
// sketch's summary shows with its tile parameters in place of extents).
std::string loopNestText(const schedule::State& state);

// Number of values of `n` tile lengths whose product divides `extent`, the
// innermost at most `maxInnermost`: the domain sampleTileLengths draws from.
double countTileLengths(int64_t extent, size_t n, int64_t maxInnermost);

SpaceSummary summarizeSpace(const task::SearchTask& task, const schedule::HardwareParams& hw, int samples = 3,
                            uint64_t seed = 1);
SpaceSummary summarizeSpace(const task::SearchTask& task, int samples = 3, uint64_t seed = 1);

// The name of the kernel function programSource emits.
std::string kernelSymbol(const task::SearchTask& task);

// Source of the program given by serialised decisions (from the database,
// or a sample) in its target's language: for a CPU a compilable C++
// translation unit with one kernel `kernelSymbol(task)`, for a GPU the CUDA C
// of its kernels (launch dimensions in their comments) and the host function
// `kernelSymbol(task)` that launches them. Throws (std::runtime_error / ScheduleError) naming
// the problem for bad decisions.
std::string programSource(const task::SearchTask& task, const std::string& decisionsJson,
                          const schedule::HardwareParams& hw);
std::string programSource(const task::SearchTask& task, const std::string& decisionsJson);
// Source of a stored program (C++ or CUDA C, as above), replayed from its serialised steps: the
// exact program that was measured, whatever machine chose its decisions.
std::string storedProgramSource(const task::SearchTask& task, const std::string& stepsJson);
// The naive (unscheduled) program's source, when no decisions exist yet
// (C++ for every target: an unbound program is no GPU kernel).
std::string naiveProgramSource(const task::SearchTask& task);

}  // namespace tessel::search
