// The knowledge base that ships with Tessel, per target class and, where
// Tessel has measured one, per CPU microarchitecture
// (resources/knowledge/cpu-avx512.tkb, cpu-avx512-amd-zen5.tkb): a
// pre-trained cost model and a record library (record_library.h) built from
// measured datasets by `tessel knowledge build`. Every tuning starts from the
// one that fits this machine best unless told --cold.
//
// The file is gzip-compressed JSON lines: a header (the format, the target
// class, the learned models' format it was trained with, where it came
// from), the cost model as a cost-model file's bytes (base64), then one line
// per task. A file of another format or target class is refused with both
// named, never silently used; a damaged one is an error naming the file.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "knowledge/record_library.h"
#include "target/target.h"

namespace tessel::knowledge {

// 1: the first.
inline constexpr int kKnowledgeFormat = 1;

struct KnowledgeInfo {
  int format = kKnowledgeFormat;
  std::string targetClass;  // targetClass() of the targets it serves
  int learnedFormat = 0;    // cost::kLearnedModelFormat it was trained with
  int threads = 0;          // the threads its programs were measured with
  // The microarchitecture of the CPU that measured them (target/host_cpu.h:
  // "amd-zen4"); "" when not known (a file built before it was recorded).
  std::string cpu;
  std::vector<std::string> builtFrom;  // the datasets and databases it holds, by file name
  std::string costModel;               // the pre-trained model's name ("" if none)
  size_t costModelTrainedOn = 0;       // programs
  std::string created;                 // ISO 8601, UTC
  std::string version;                 // Tessel's, that built it
};

struct KnowledgeBase {
  KnowledgeInfo info;
  std::string costModelFile;  // the bytes of a cost-model file (cost/cost_model_file.h); "" if none
  RecordLibrary library;
};

// A knowledge base that does not fit: another format or target class.
class KnowledgeMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The class of targets one knowledge base serves: "cpu-avx512", "cpu-avx2",
// "cpu-sse" (the vector instruction set the kernels are built for; threads
// do not matter, the programs are re-fitted to them), "cuda-sm_90".
std::string targetClass(const target::Target& target);
// Its file name: "cpu-avx512.tkb", the class's default; one measured on a
// given microarchitecture may also be "cpu-avx512-amd-zen5.tkb".
std::string knowledgeFileName(const std::string& targetClass);

// Of the knowledge bases in `folder` for `targetClass` (CLASS.tkb and
// CLASS-*.tkb), the one whose header says it was measured on `cpu` (a
// microarchitecture, target/host_cpu.h), else on a CPU of the same vendor,
// else any; among equals the class's default file, then by name. "" when the
// folder holds none. A file whose header cannot be read is an error naming it.
std::string chooseKnowledgeBase(const std::string& folder, const std::string& targetClass, const std::string& cpu);
// The knowledge base shipped for `target`: chooseKnowledgeBase in
// $TESSEL_KNOWLEDGE_DIR when that is set, else in share/tessel/knowledge
// beside the folder of the executables `binDir` (build/bin:
// build/share/tessel/knowledge; /usr/bin: /usr/share/tessel/knowledge), for
// this machine's microarchitecture (a CPU target's kernels run here; a CUDA
// target's class names its GPU already). "" when there is no such file.
std::string shippedKnowledgeBase(const target::Target& target, const std::string& binDir);
// Where shippedKnowledgeBase looks, for messages.
std::string knowledgeFolder(const std::string& binDir);

void writeKnowledgeBase(const std::string& path, const KnowledgeBase& kb);
// The header alone (cheap: the first line).
KnowledgeInfo readKnowledgeInfo(const std::string& path);
// std::runtime_error naming the file for one that is not a knowledge base
// or is damaged; KnowledgeMismatch for one of another format.
KnowledgeBase readKnowledgeBase(const std::string& path);
// KnowledgeMismatch naming both when `kb` cannot serve `target`: another
// target class, or a cost model of another learned-model format than this
// build's (learnedFormat: cost::kLearnedModelFormat).
void checkKnowledgeFits(const std::string& path, const KnowledgeInfo& kb, const target::Target& target,
                        int learnedFormat);

}  // namespace tessel::knowledge
