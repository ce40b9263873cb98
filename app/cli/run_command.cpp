// tessel run MODEL --db FILE: the whole model with the best stored kernels,
// checked and timed against LibTorch's ATen ops on the same weights and inputs.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "args.h"
#include "commands.h"
#include "fusion/fusion_plan.h"
#include "fusion/task_extraction.h"
#include "model_loader.h"
#include "reference/libtorch_executor.h"
#include "runtime/graph_executor.h"
#include "schedule/steps.h"
#include "store/database.h"
#include "support/cpu_contention.h"

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel run MODEL [--db FILE] [--fusion rule|dp|none] [--repeats N] [--profile] [--json]\n"
    "\n"
    "Runs the model with the best kernels stored for its tasks (the naive program\n"
    "where a task has none) and with LibTorch (ATen ops, threads = cores) on the\n"
    "same weights and inputs; reports both latencies, the tuner's estimate (sum of\n"
    "weight x best measured latency) and the largest difference.\n"
    "Use the fusion the model was tuned with (default dp).\n"
    "\n"
    "  --repeats N  timed runs of each side after a warm-up (default 10)\n"
    "  --profile    per partition: its time in the run, its tuned estimate, their ratio\n"
    "  --json       tessel_ms (median), tessel_ms_min/median/max, libtorch_ms and its\n"
    "               min/median/max, estimate_ms, speedup, max_abs_err, correct, disturbed\n"
    "               (and disturbance, why), contention (others_share, steal_share),\n"
    "               tasks_tuned, tasks_naive, memory; with --profile, partitions\n"
    "  --input-shapes A,B;C,D  shapes of a TorchScript model's inputs\n";

struct Spread {
  double min = 0, median = 0, max = 0;
};

Spread spreadOf(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  return s;
}

// Runs whose median is this much above their fastest were disturbed (another
// process took the cores for part of them): the figures are flagged.
constexpr double kDisturbedSpread = 1.15;

}  // namespace

int runCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"db", "fusion", "repeats", "target", "input-shapes"}, {"json", "help", "profile"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const std::string target = args.get("target", "cpu");
  if (target != "cpu") throw UsageError("run executes on the cpu only (--target " + target + ")");
  const int repeats = int(args.getInt("repeats", 10, 1, 10000));
  const bool json = args.has("json"), profile = args.has("profile");
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));

  PreparedModel prepared = prepareModel(args, target);
  const std::string& model = prepared.name;
  const std::string& fusionName = prepared.fusion;
  const graph::Graph& g = prepared.graph;
  const fusion::FusionPlan& plan = prepared.plan;
  const std::vector<fusion::GraphTask>& tasks = prepared.tasks;

  runtime::ExecutorOptions eo;
  eo.groups = plan.groups;
  eo.lowering = prepared.lowering;
  eo.jobs = cores;
  int tuned = 0, naive = 0;
  std::unique_ptr<store::Database> db;
  const std::string dbPath = args.get("db", store::defaultDatabasePath());
  if (args.has("db") || std::filesystem::exists(dbPath))
    db = store::Database::open(dbPath, store::OpenMode::ReadOnly);
  else if (!json)
    std::fprintf(stderr, "no database at %s: every task runs its naive program\n", dbPath.c_str());
  // The tuner's view: per group, the best measured latency of its task.
  std::map<size_t, std::pair<size_t, double>> groupEstimate;  // group -> (task, seconds)
  double estimate = 0;
  for (size_t ti = 0; ti < tasks.size(); ++ti) {
    const fusion::GraphTask& t = tasks[ti];
    std::vector<store::BestRow> best;
    if (db)
      if (auto row = db->taskByKey(t.key, target)) best = db->best(row->id);
    if (best.empty()) {
      ++naive;
      continue;
    }
    ++tuned;
    const double seconds = best.front().record.medianCost();
    estimate += double(t.weight) * seconds;
    std::vector<schedule::Step> steps = schedule::deserializeSteps(best.front().record.steps);
    for (size_t gi : t.groups) {
      eo.schedules[gi] = steps;
      groupEstimate[gi] = {ti, seconds};
    }
  }
  const bool haveEstimate = naive == 0 && !tasks.empty();
  if (!json)
    std::fprintf(stderr, "%s: %zu partitions, %zu tasks (%d tuned, %d naive); building kernels...\n", model.c_str(),
                 plan.groups.size(), tasks.size(), tuned, naive);
  runtime::GraphExecutor executor(g, eo);
  executor.setProfiling(profile);

  std::map<std::string, runtime::HostTensor> inputs;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (const graph::ValueInfo& in : g.inputs) {
    runtime::HostTensor t;
    t.shape = in.shape;
    t.data.resize(size_t(in.numElements()));
    for (float& x : t.data)
      x = u(rng);
    inputs[in.name] = std::move(t);
  }
  // LibTorch first, in a process where no Tessel kernel has run yet: OpenMP
  // threads left spinning by Tessel's kernels slowed LibTorch 15-60x when it
  // ran second. (Passive waiting, the other cure, halved LibTorch's speed.)
  const support::CpuSample torchBefore = support::sampleCpu();
  reference::ReferenceRun ref = reference::runWithLibTorch(g, inputs, cores, repeats);
  const support::Contention torchContention = support::contentionBetween(torchBefore, support::sampleCpu());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // The executor gives its kernels every core again (LibTorch leaves OpenMP
  // at its own thread count), on a pinned team like the measuring worker's.
  std::map<std::string, runtime::HostTensor> ours = executor.run(inputs);  // warm-up
  std::vector<double> times;
  std::vector<std::vector<double>> stepTimes(executor.steps().size());
  const support::CpuSample tesselBefore = support::sampleCpu();
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    ours = executor.run(inputs);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (profile)
      for (size_t k = 0; k < stepTimes.size(); ++k)
        stepTimes[k].push_back(executor.stepSeconds().at(k));
  }
  const support::Contention tesselContention = support::contentionBetween(tesselBefore, support::sampleCpu());
  const Spread tessel = spreadOf(times);
  const Spread torch = spreadOf(ref.times);

  double maxAbs = 0, maxRef = 0;
  for (const auto& [name, want] : ref.outputs) {
    auto it = ours.find(name);
    if (it == ours.end() || it->second.data.size() != want.data.size())
      throw std::runtime_error("output '" + name + "' differs in size between Tessel and LibTorch");
    for (size_t i = 0; i < want.data.size(); ++i) {
      double d = std::fabs(double(it->second.data[i]) - double(want.data[i]));
      maxAbs = std::isnan(d) ? INFINITY : std::max(maxAbs, d);
      maxRef = std::max(maxRef, std::fabs(double(want.data[i])));
    }
  }
  const bool correct = maxAbs <= 1e-3 * std::max(1.0, maxRef);
  // A busy machine slows some runs of a side more than others (spread), or
  // all of them alike (other processes' CPU time, the hypervisor's steal):
  // say so rather than report a speed-up or an estimate error that is noise.
  std::string disturbance;
  auto flag = [&](const std::string& why) { disturbance += (disturbance.empty() ? "" : "; ") + why; };
  for (const auto& [who, sp] : {std::pair{"Tessel", tessel}, std::pair{"LibTorch", torch}})
    if (sp.min > 0 && sp.median > kDisturbedSpread * sp.min) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s's runs spread from %.3f to %.3f ms (median %.2fx the fastest)", who,
                    sp.min * 1e3, sp.max * 1e3, sp.median / sp.min);
      flag(buf);
    }
  for (const auto& [who, c] : {std::pair{"Tessel", tesselContention}, std::pair{"LibTorch", torchContention}})
    if (const std::string why = support::describeContention(c); !why.empty())
      flag(std::string("while ") + who + " ran, " + why);
  auto contentionJson = [](const support::Contention& c) {
    if (!c.known) return nlohmann::json();
    return nlohmann::json{{"others_share", c.othersShare}, {"steal_share", c.stealShare}};
  };
  const runtime::MemoryStats mem = executor.memory();

  nlohmann::json partitions = nlohmann::json::array();
  if (profile) {
    const std::vector<runtime::RunStep>& steps = executor.steps();
    if (!json)
      std::printf("%-5s %-48s %12s %12s %7s\n", "group", "task (or layout conversion)", "measured ms", "estimate ms",
                  "ratio");
    for (size_t k = 0; k < steps.size(); ++k) {
      const double measured = spreadOf(stepTimes[k]).median;
      nlohmann::json row = {{"step", steps[k].name}, {"measured_ms", measured * 1e3}};
      std::string label = steps[k].name;
      double est = 0;
      if (steps[k].group >= 0) {
        row["group"] = steps[k].group;
        auto e = groupEstimate.find(size_t(steps[k].group));
        if (e != groupEstimate.end()) {
          label = tasks[e->second.first].key;
          est = e->second.second;
          row["task"] = label;
          row["estimate_ms"] = est * 1e3;
          row["ratio"] = measured / est;
        } else {
          row["estimate_ms"] = nullptr;  // naive program: never measured by the tuner
        }
      }
      partitions.push_back(row);
      if (!json) {
        const std::string group = steps[k].group >= 0 ? std::to_string(steps[k].group) : "-";
        if (est > 0)
          std::printf("%-5s %-48s %12.3f %12.3f %7.2f\n", group.c_str(), label.c_str(), measured * 1e3, est * 1e3,
                      measured / est);
        else
          std::printf("%-5s %-48s %12.3f %12s %7s\n", group.c_str(), label.c_str(), measured * 1e3, "-", "-");
      }
    }
  }

  if (json) {
    nlohmann::json j = {
        {"model", model},
        {"tessel_ms", tessel.median * 1e3},
        {"tessel_ms_min", tessel.min * 1e3},
        {"tessel_ms_median", tessel.median * 1e3},
        {"tessel_ms_max", tessel.max * 1e3},
        {"libtorch_ms", torch.median * 1e3},
        {"libtorch_ms_min", torch.min * 1e3},
        {"libtorch_ms_median", torch.median * 1e3},
        {"libtorch_ms_max", torch.max * 1e3},
        {"estimate_ms", haveEstimate ? nlohmann::json(estimate * 1e3) : nlohmann::json()},
        {"repeats", repeats},
        {"threads", executor.threads()},
        {"speedup", tessel.median > 0 ? torch.median / tessel.median : 0},
        {"disturbed", !disturbance.empty()},
        {"contention", {{"tessel", contentionJson(tesselContention)}, {"libtorch", contentionJson(torchContention)}}},
        {"max_abs_err", maxAbs},
        {"max_abs_ref", maxRef},
        {"correct", correct},
        {"tasks", tasks.size()},
        {"tasks_tuned", tuned},
        {"tasks_naive", naive},
        {"memory",
         {{"arena_bytes", mem.arenaBytes},
          {"unshared_bytes", mem.unsharedBytes},
          {"constant_bytes", mem.constantBytes}}},
        {"fusion", fusionName}};
    if (!disturbance.empty()) j["disturbance"] = disturbance;
    if (profile) j["partitions"] = partitions;
    std::puts(j.dump().c_str());
  } else {
    std::printf("tessel   %.3f ms (median of %d; min %.3f, max %.3f; %d of %zu tasks tuned)\n", tessel.median * 1e3,
                repeats, tessel.min * 1e3, tessel.max * 1e3, tuned, tasks.size());
    if (haveEstimate)
      std::printf("estimate %.3f ms (sum of weight x best measured latency; run / estimate %.2f)\n", estimate * 1e3,
                  tessel.median / estimate);
    std::printf("libtorch %.3f ms (median of %d; min %.3f, max %.3f): Tessel at %.2fx LibTorch's speed\n",
                torch.median * 1e3, repeats, torch.min * 1e3, torch.max * 1e3, torch.median / tessel.median);
    std::printf("max abs error %.3g (outputs up to %.3g): %s\n", maxAbs, maxRef, correct ? "correct" : "WRONG");
    std::printf("memory: activations %.1f MiB in one arena (%.1f MiB unshared), constants %.1f MiB\n",
                double(mem.arenaBytes) / 1048576, double(mem.unsharedBytes) / 1048576,
                double(mem.constantBytes) / 1048576);
    if (!disturbance.empty()) std::printf("disturbed: %s; run again on a quiet machine\n", disturbance.c_str());
  }
  if (!disturbance.empty() && json) std::fprintf(stderr, "disturbed: %s\n", disturbance.c_str());
  return correct ? 0 : 1;
}

}  // namespace tessel::cli
