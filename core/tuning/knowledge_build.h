// `tessel knowledge build`: a knowledge base (knowledge/knowledge_base.h)
// from measured programs: datasets (`tessel dataset export`, the sets in
// tests/data) and tuning databases. Each task keeps its fastest valid
// programs; a dataset's carry no annotation decisions, so they are inferred
// from the steps on the task rebuilt from its model
// (schedule/decision_inference.h). The cost model is trained here on the
// same records, or carried in as the file of one trained before.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "knowledge/knowledge_base.h"
#include "target/target.h"

namespace tessel::tuning {

struct KnowledgeBuildConfig {
  std::vector<std::string> datasets;               // JSON-lines datasets
  std::vector<std::string> databases;              // tuning databases (their records carry decisions)
  target::Target target = target::Target::host();  // the records' target: those of another are left out
  // The target that measured them (none: `target` on this machine): its
  // class names the base, its threads fit the decisions.
  std::optional<target::Target> measuredOn;
  // The microarchitecture of the CPU that measured them (target/host_cpu.h,
  // "amd-zen4"); "" : this machine's when measuredOn is none and the target a
  // CPU, unknown otherwise.
  std::string cpu;
  size_t programsPerTask = 16;
  // The cost model: one trained here on the datasets' records (a registry
  // name, as `tessel costmodel train` does), or a trained model's file.
  std::string costModel;
  int epochs = 60;
  uint64_t seed = 1;
  std::string costModelFile;
  std::vector<std::string> leaveOut;  // models left out (to try transfer to a model the base has not seen)
};

struct KnowledgeBuildSummary {
  size_t records = 0;        // read, of the target and not left out
  size_t tasks = 0;          // in the base
  size_t programs = 0;       // in the base
  size_t withDecisions = 0;  // of those, with decisions (they transfer to other tasks)
  size_t unbuilt = 0;        // dataset records whose task no model rebuilds any more
};

// std::runtime_error naming the file for anything that cannot be read;
// std::invalid_argument for a bad target, an unknown model, or both a model
// and a model file.
knowledge::KnowledgeBase buildKnowledgeBase(const KnowledgeBuildConfig& config, KnowledgeBuildSummary* summary);

}  // namespace tessel::tuning
