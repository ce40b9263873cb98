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
  std::string cacheKey;  // empty without a cache
};

std::vector<std::string> compileCommand(const BuildOptions& o, const Unit& u) {
  const char* env = std::getenv("TESSEL_CXX");
  std::vector<std::string> cmd = {o.compiler.empty() ? (env && *env ? env : "c++") : o.compiler};
  cmd.insert(cmd.end(), o.flags.begin(), o.flags.end());
  cmd.insert(cmd.end(), {"-shared", "-fPIC", "-o", u.library, u.source});
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
  if (!o.cacheDir.empty()) u.cacheKey = KernelCache::keyText(compileCommand(o, u), text);
  return u;
}

std::vector<support::ProcessResult> compileUnits(const std::vector<Unit>& units, const BuildOptions& o) {
  std::vector<std::vector<std::string>> cmds;
  for (const Unit& u : units)
    cmds.push_back(compileCommand(o, u));
  // The compiler's own temporary files go into the build folder, swept with it.
  return support::runProcesses(cmds, o.jobs, o.timeoutSeconds, o.cancel, o.workDir);
}

// Compiles the units the cache does not hold (those it holds are put in
// place, with a zero compile time), then stores the ones that built.
std::vector<support::ProcessResult> compileOrFetch(const std::vector<Unit>& units, const BuildOptions& o) {
  const KernelCache cache(o.cacheDir);
  std::vector<support::ProcessResult> res(units.size());
  std::vector<Unit> missed;
  std::vector<size_t> where;
  for (size_t u = 0; u < units.size(); ++u)
    if (!units[u].cacheKey.empty() && cache.fetch(units[u].cacheKey, units[u].library))
      res[u].started = true, res[u].exitCode = 0;
    else
      missed.push_back(units[u]), where.push_back(u);
  std::vector<support::ProcessResult> built = compileUnits(missed, o);
  for (size_t k = 0; k < missed.size(); ++k) {
    if (built[k].ok() && !missed[k].cacheKey.empty()) cache.store(missed[k].cacheKey, missed[k].library);
    res[where[k]] = std::move(built[k]);
  }
  return res;
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

}  // namespace

std::vector<BuildOutput> buildCandidates(const std::vector<BuildCandidate>& cands, const BuildOptions& o) {
  std::vector<BuildOutput> out(cands.size());
  if (cands.empty()) return out;
  // Balanced units: at least one per job, at most maxPerUnit candidates each.
  size_t units =
      std::max<size_t>(size_t(std::max(1, o.jobs)), (cands.size() + size_t(o.maxPerUnit) - 1) / size_t(o.maxPerUnit));
  units = std::min(units, cands.size());
  std::vector<Unit> batch;
  for (size_t u = 0; u < units; ++u) {
    std::vector<size_t> members;
    for (size_t i = u; i < cands.size(); i += units)
      members.push_back(i);
    batch.push_back(writeUnit(cands, members, o));
  }
  std::vector<support::ProcessResult> res = compileOrFetch(batch, o);
  std::vector<Unit> retry;
  for (size_t u = 0; u < batch.size(); ++u) {
    if (res[u].ok() || batch[u].members.size() == 1) {
      record(batch[u], res[u], &out);
    } else {
      for (size_t m : batch[u].members)
        retry.push_back(writeUnit(cands, {m}, o));
    }
  }
  std::vector<support::ProcessResult> res2 = compileOrFetch(retry, o);
  for (size_t u = 0; u < retry.size(); ++u)
    record(retry[u], res2[u], &out);
  return out;
}

}  // namespace tessel::codegen
