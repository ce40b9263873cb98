#include "codegen/cpp_builder.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>

#include "codegen/cpp_codegen.h"
#include "codegen/kernel_cache.h"
#include "support/subprocess.h"

namespace tessel::codegen {

using support::ErrorCode;

namespace {

std::atomic<int> unitCounter{0};

struct Unit {
  std::vector<size_t> members;
  std::string source, library;
};

std::vector<std::string> compileCommand(const BuildOptions& o, const std::string& library, const std::string& source) {
  const char* env = std::getenv("TESSEL_CXX");
  std::vector<std::string> cmd = {o.compiler.empty() ? (env && *env ? env : "c++") : o.compiler};
  cmd.insert(cmd.end(), o.flags.begin(), o.flags.end());
  cmd.insert(cmd.end(), {"-shared", "-fPIC", "-o", library, source});
  return cmd;
}

Unit writeUnit(const std::vector<BuildCandidate>& cands, std::vector<size_t> members, const BuildOptions& o) {
  Unit u;
  u.members = std::move(members);
  std::string base = o.workDir + "/unit" + std::to_string(getpid()) + "_" + std::to_string(unitCounter++);
  u.source = base + ".cpp";
  u.library = base + ".so";
  std::string text = cppPrelude();
  for (size_t m : u.members)
    text += cands[m].code + "\n";
  std::ofstream(u.source) << text;
  return u;
}

std::vector<support::ProcessResult> compileUnits(const std::vector<Unit>& units, const BuildOptions& o) {
  std::vector<std::vector<std::string>> cmds;
  for (const Unit& u : units)
    cmds.push_back(compileCommand(o, u.library, u.source));
  // The compiler's own temporary files go into the build folder, swept with it.
  return support::runProcesses(cmds, o.jobs, o.timeoutSeconds, o.cancel, o.workDir);
}

void record(const Unit& u, const support::ProcessResult& r, std::vector<BuildOutput>* out) {
  for (size_t m : u.members) {
    BuildOutput& b = (*out)[m];
    b.seconds = r.seconds;
    if (r.ok()) {
      b.library = u.library;
    } else if (r.timedOut) {
      b.error = ErrorCode::BuildTimeout;
      b.message = "compilation took longer than the limit";
    } else {
      b.error = ErrorCode::CompileHost;
      const std::string how = r.signal ? "the compiler was killed by signal " + std::to_string(r.signal) : "";
      const std::string output = r.output.substr(0, 4000);
      b.message = how.empty() ? (output.empty() ? "the compiler failed" : output)
                              : (output.empty() ? how : how + ": " + output);
    }
  }
}

// Compiles `pending` (indices into cands) in balanced units, at least one per
// job and at most maxPerUnit candidates each; a unit that fails is rebuilt one
// candidate at a time. A built unit's library is stored under each member's
// cache key.
void compilePending(const std::vector<BuildCandidate>& cands, const std::vector<size_t>& pending,
                    const std::vector<std::string>& keys, const BuildOptions& o, std::vector<BuildOutput>* out) {
  if (pending.empty()) return;
  const KernelCache cache(o.cacheDir);
  auto store = [&](const Unit& u) {
    if (o.cacheDir.empty()) return;
    std::vector<std::string> memberKeys;
    for (size_t m : u.members)
      memberKeys.push_back(keys[m]);
    cache.store(memberKeys, u.library);
  };
  size_t units =
      std::max<size_t>(size_t(std::max(1, o.jobs)), (pending.size() + size_t(o.maxPerUnit) - 1) / size_t(o.maxPerUnit));
  units = std::min(units, pending.size());
  std::vector<Unit> batch;
  for (size_t u = 0; u < units; ++u) {
    std::vector<size_t> members;
    for (size_t i = u; i < pending.size(); i += units)
      members.push_back(pending[i]);
    batch.push_back(writeUnit(cands, members, o));
  }
  std::vector<support::ProcessResult> res = compileUnits(batch, o);
  std::vector<Unit> retry;
  for (size_t u = 0; u < batch.size(); ++u) {
    if (res[u].ok() || batch[u].members.size() == 1) {
      record(batch[u], res[u], out);
      if (res[u].ok()) store(batch[u]);
    } else {
      for (size_t m : batch[u].members)
        retry.push_back(writeUnit(cands, {m}, o));
    }
  }
  std::vector<support::ProcessResult> res2 = compileUnits(retry, o);
  for (size_t u = 0; u < retry.size(); ++u) {
    record(retry[u], res2[u], out);
    if (res2[u].ok()) store(retry[u]);
  }
}

}  // namespace

std::vector<BuildOutput> buildCandidates(const std::vector<BuildCandidate>& cands, const BuildOptions& o) {
  std::vector<BuildOutput> out(cands.size());
  // Each candidate is looked up alone (its key: the compile command and the
  // prelude with its code), so a kernel is found whatever it was built with.
  std::vector<std::string> keys(cands.size());
  std::vector<size_t> pending;
  const KernelCache cache(o.cacheDir);
  const std::vector<std::string> command = compileCommand(o, "unit.so", "unit.cpp");
  const std::string prelude = o.cacheDir.empty() ? std::string() : cppPrelude();
  for (size_t i = 0; i < cands.size(); ++i) {
    if (!o.cacheDir.empty()) {
      keys[i] = KernelCache::keyText(command, prelude + cands[i].code + "\n");
      const std::string library =
          o.workDir + "/cached" + std::to_string(getpid()) + "_" + std::to_string(unitCounter++) + ".so";
      if (cache.fetch(keys[i], library)) {
        out[i].library = library;  // compile time 0
        continue;
      }
    }
    pending.push_back(i);
  }
  compilePending(cands, pending, keys, o, &out);
  return out;
}

}  // namespace tessel::codegen
