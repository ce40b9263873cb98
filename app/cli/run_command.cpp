// tessel run MODEL --db FILE: the whole model with the best stored kernels,
// checked and timed against LibTorch's ATen ops on the same weights and inputs.
#include <omp.h>
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

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel run MODEL [--db FILE] [--fusion rule|dp|none] [--repeats N] [--json]\n"
    "\n"
    "Runs the model with the best kernels stored for its tasks (the naive program\n"
    "where a task has none) and with LibTorch (ATen ops, threads = cores) on the\n"
    "same weights and inputs; reports both latencies and the largest difference.\n"
    "Use the fusion the model was tuned with (default dp).\n"
    "\n"
    "  --json   tessel_ms, libtorch_ms, max_abs_err, correct, tasks_tuned, tasks_naive\n"
    "  --input-shapes A,B;C,D  shapes of a TorchScript model's inputs\n";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int runCommand(const std::vector<std::string>& argv) {
  Args args(argv, {"db", "fusion", "repeats", "target", "input-shapes"}, {"json", "help"});
  if (args.has("help")) {
    std::fputs(kHelp, stdout);
    return 0;
  }
  const std::string target = args.get("target", "cpu");
  if (target != "cpu") throw UsageError("run executes on the cpu only (--target " + target + ")");
  const int repeats = int(args.getInt("repeats", 10, 1, 10000));
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));

  PreparedModel prepared = prepareModel(args, target);
  const std::string& model = prepared.name;
  const std::string& fusionName = prepared.fusion;
  const graph::Graph& g = prepared.graph;
  const fusion::FusionPlan& plan = prepared.plan;
  const graph::LoweringOptions& lowering = prepared.lowering;
  const std::vector<fusion::GraphTask>& tasks = prepared.tasks;

  runtime::ExecutorOptions eo;
  eo.groups = plan.groups;
  eo.lowering = lowering;
  eo.jobs = cores;
  int tuned = 0, naive = 0;
  std::unique_ptr<store::Database> db;
  const std::string dbPath = args.get("db", store::defaultDatabasePath());
  if (args.has("db") || std::filesystem::exists(dbPath))
    db = store::Database::open(dbPath, store::OpenMode::ReadOnly);
  else if (!args.has("json"))
    std::fprintf(stderr, "no database at %s: every task runs its naive program\n", dbPath.c_str());
  for (const fusion::GraphTask& t : tasks) {
    std::vector<store::BestRow> best;
    if (db)
      if (auto row = db->taskByKey(t.key, target)) best = db->best(row->id);
    if (best.empty()) {
      ++naive;
      continue;
    }
    ++tuned;
    std::vector<schedule::Step> steps = schedule::deserializeSteps(best.front().record.steps);
    for (size_t gi : t.groups)
      eo.schedules[gi] = steps;
  }
  if (!args.has("json"))
    std::fprintf(stderr, "%s: %zu partitions, %zu tasks (%d tuned, %d naive); building kernels...\n", model.c_str(),
                 plan.groups.size(), tasks.size(), tuned, naive);
  runtime::GraphExecutor executor(g, eo);

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
  reference::ReferenceRun ref = reference::runWithLibTorch(g, inputs, cores, repeats);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // LibTorch leaves OpenMP at its own thread count (1 by default in Debian's
  // build), which Tessel's kernels would inherit: give them every core.
  omp_set_num_threads(cores);
  std::map<std::string, runtime::HostTensor> ours = executor.run(inputs);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    ours = executor.run(inputs);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  const double tesselSeconds = median(times);

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
  if (args.has("json")) {
    nlohmann::json j = {{"model", model},
                        {"tessel_ms", tesselSeconds * 1e3},
                        {"libtorch_ms", ref.seconds * 1e3},
                        {"speedup", tesselSeconds > 0 ? ref.seconds / tesselSeconds : 0},
                        {"max_abs_err", maxAbs},
                        {"max_abs_ref", maxRef},
                        {"correct", correct},
                        {"tasks", tasks.size()},
                        {"tasks_tuned", tuned},
                        {"tasks_naive", naive},
                        {"fusion", fusionName}};
    std::puts(j.dump().c_str());
  } else {
    std::printf(
        "tessel   %.3f ms (%d of %zu tasks tuned)\nlibtorch %.3f ms\nmax abs error %.3g (outputs up to %.3g): %s\n",
        tesselSeconds * 1e3, tuned, tasks.size(), ref.seconds * 1e3, maxAbs, maxRef, correct ? "correct" : "WRONG");
  }
  return correct ? 0 : 1;
}

}  // namespace tessel::cli
