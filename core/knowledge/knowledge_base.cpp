#include "knowledge/knowledge_base.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/base64.h"
#include "support/compressed_lines.h"
#include "support/version.h"
#include "target/host_cpu.h"

namespace tessel::knowledge {

namespace {

constexpr const char* kMagicKey = "tessel_knowledge";

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

nlohmann::json headerOf(const KnowledgeBase& kb) {
  const KnowledgeInfo& i = kb.info;
  return {{kMagicKey, i.format},
          {"target_class", i.targetClass},
          {"learned_format", i.learnedFormat},
          {"threads", i.threads},
          {"cpu", i.cpu},
          {"built_from", i.builtFrom},
          {"cost_model", i.costModel},
          {"cost_model_trained_on", i.costModelTrainedOn},
          {"created", i.created.empty() ? utcNow() : i.created},
          {"version", i.version.empty() ? std::string(support::version()) : i.version},
          {"tasks", kb.library.tasks().size()},
          {"programs", kb.library.programs()}};
}

KnowledgeInfo infoOf(const nlohmann::json& j) {
  KnowledgeInfo i;
  i.format = j.at(kMagicKey).get<int>();
  if (i.format != kKnowledgeFormat) return i;  // the rest may differ: the caller refuses it
  i.targetClass = j.at("target_class").get<std::string>();
  i.learnedFormat = j.at("learned_format").get<int>();
  i.threads = j.at("threads").get<int>();
  i.cpu = j.value("cpu", "");  // absent in the files built before it was recorded
  i.builtFrom = j.at("built_from").get<std::vector<std::string>>();
  i.costModel = j.at("cost_model").get<std::string>();
  i.costModelTrainedOn = j.at("cost_model_trained_on").get<size_t>();
  i.created = j.at("created").get<std::string>();
  i.version = j.at("version").get<std::string>();
  return i;
}

nlohmann::json taskJson(const LibraryTask& t) {
  nlohmann::json programs = nlohmann::json::array();
  for (const LibraryProgram& p : t.programs)
    programs.push_back({{"steps", nlohmann::json::parse(p.steps)},
                        {"decisions", p.decisions.empty() ? nlohmann::json() : nlohmann::json::parse(p.decisions)},
                        {"seconds", p.seconds}});
  return {{"key", t.key},     {"target", t.target.str()}, {"op", t.op},          {"compute", t.compute},
          {"flops", t.flops}, {"models", t.models},       {"programs", programs}};
}

LibraryTask taskOf(const nlohmann::json& j) {
  LibraryTask t;
  t.key = j.at("key").get<std::string>();
  t.target = target::parseTarget(j.at("target").get<std::string>());  // the file keeps canonical strings
  t.op = j.at("op").get<std::string>();
  t.compute = j.at("compute").get<std::string>();
  t.flops = j.at("flops").get<double>();
  t.models = j.at("models").get<std::vector<std::string>>();
  for (const nlohmann::json& p : j.at("programs")) {
    LibraryProgram lp;
    lp.steps = p.at("steps").dump();
    lp.decisions = p.at("decisions").is_null() ? "" : p.at("decisions").dump();
    lp.seconds = p.at("seconds").get<double>();
    if (!(lp.seconds > 0)) throw std::invalid_argument("a program's seconds are not positive");
    t.programs.push_back(std::move(lp));
  }
  return t;
}

// Reads the file line by line; stops after the header when `headerOnly`.
KnowledgeBase read(const std::string& path, bool headerOnly) {
  KnowledgeBase kb;
  size_t tasks = 0, programs = 0;
  bool header = false, model = false;
  struct Stop {};
  try {
    support::readLines(path, "knowledge base", [&](const std::string& line, size_t number) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
        if (!header) {
          if (!j.is_object() || !j.contains(kMagicKey)) throw std::invalid_argument("no header");
          kb.info = infoOf(j);
          header = true;
          if (kb.info.format != kKnowledgeFormat)
            throw KnowledgeMismatch(path + " is a knowledge base of format " + std::to_string(kb.info.format) +
                                    "; this Tessel reads format " + std::to_string(kKnowledgeFormat) +
                                    " (rebuild it with tessel knowledge build)");
          tasks = j.at("tasks").get<size_t>();
          programs = j.at("programs").get<size_t>();
          if (headerOnly) throw Stop{};
        } else if (!model) {
          const auto bytes = support::fromBase64(j.at("cost_model_file").get<std::string>());
          if (!bytes) throw std::invalid_argument("the cost model is not base64");
          kb.costModelFile = *bytes;
          model = true;
        } else {
          kb.library.add(taskOf(j));
        }
      } catch (const KnowledgeMismatch&) {
        throw;
      } catch (const Stop&) {
        throw;
      } catch (const std::exception& e) {
        throw std::runtime_error(path + ":" + std::to_string(number) +
                                 (header ? ": damaged knowledge base (" : ": not a Tessel knowledge base (") +
                                 e.what() + ")");
      }
    });
  } catch (const Stop&) {
    return kb;
  }
  if (!header) throw std::runtime_error(path + " is empty: not a Tessel knowledge base");
  if (!model || kb.library.tasks().size() != tasks || kb.library.programs() != programs)
    throw std::runtime_error(path + " is truncated: its header promises " + std::to_string(tasks) + " tasks and " +
                             std::to_string(programs) + " programs, it holds " +
                             std::to_string(kb.library.tasks().size()) + " and " +
                             std::to_string(kb.library.programs()));
  return kb;
}

}  // namespace

std::string targetClass(const target::Target& t) {
  return t.isCpu() ? "cpu-" + t.vectorIsaName() : t.kindName() + "-" + t.arch;
}

std::string knowledgeFileName(const std::string& targetClass) {
  return targetClass + ".tkb";
}

std::string knowledgeFolder(const std::string& binDir) {
  if (const char* env = std::getenv("TESSEL_KNOWLEDGE_DIR"); env && *env) return env;
  return (std::filesystem::path(binDir).parent_path() / "share" / "tessel" / "knowledge").string();
}

std::string chooseKnowledgeBase(const std::string& folder, const std::string& targetClass, const std::string& cpu) {
  const std::string defaultName = knowledgeFileName(targetClass), prefix = targetClass + "-";
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ofClass = name == defaultName || (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 4 &&
                                                 name.compare(name.size() - 4, 4, ".tkb") == 0);
    if (ofClass && entry.is_regular_file(ec)) names.push_back(name);
  }
  // "cpu-avx2-..." never passes for "cpu-avx512": the class ends at its dash.
  std::sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    if ((a == defaultName) != (b == defaultName)) return a == defaultName;
    return a < b;
  });
  const std::string vendor = target::microarchitectureVendor(cpu);
  std::string best;
  int bestScore = -1;
  for (const std::string& name : names) {
    const std::string path = (std::filesystem::path(folder) / name).string();
    const std::string measuredOn = readKnowledgeInfo(path).cpu;
    const int score = !cpu.empty() && measuredOn == cpu                                          ? 2
                      : !vendor.empty() && target::microarchitectureVendor(measuredOn) == vendor ? 1
                                                                                                 : 0;
    if (score > bestScore) {
      best = path;
      bestScore = score;
    }
  }
  return best;
}

std::string shippedKnowledgeBase(const target::Target& target, const std::string& binDir) {
  return chooseKnowledgeBase(knowledgeFolder(binDir), targetClass(target),
                             target.isCpu() ? target::hostMicroarchitecture() : "");
}

void writeKnowledgeBase(const std::string& path, const KnowledgeBase& kb) {
  size_t next = 0;
  const auto& tasks = kb.library.tasks();
  support::writeLines(path, [&](std::string& line) {
    if (next == 0)
      line = headerOf(kb).dump();
    else if (next == 1)
      line = nlohmann::json{{"cost_model_file", support::toBase64(kb.costModelFile)}}.dump();
    else if (next - 2 < tasks.size())
      line = taskJson(tasks[next - 2]).dump();
    else
      return false;
    ++next;
    return true;
  });
}

KnowledgeInfo readKnowledgeInfo(const std::string& path) {
  return read(path, true).info;
}

KnowledgeBase readKnowledgeBase(const std::string& path) {
  return read(path, false);
}

void checkKnowledgeFits(const std::string& path, const KnowledgeInfo& kb, const target::Target& target,
                        int learnedFormat) {
  const std::string wanted = targetClass(target);
  if (kb.targetClass != wanted)
    throw KnowledgeMismatch(path + " is the knowledge base of " + kb.targetClass + " targets, not of " + wanted +
                            " ones like '" + target.str() + "'");
  if (!kb.costModel.empty() && kb.learnedFormat != learnedFormat)
    throw KnowledgeMismatch(path + "'s cost model was trained with the learned models' format " +
                            std::to_string(kb.learnedFormat) + "; this Tessel's is format " +
                            std::to_string(learnedFormat) + " (rebuild it with tessel knowledge build)");
}

}  // namespace tessel::knowledge
