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
#include "reference/onednn_executor.h"
#include "runtime/graph_executor.h"
#include "schedule/steps.h"
#include "store/database.h"
#include "store/task_rows.h"
#include "support/cpu_contention.h"
#include "support/tolerances.h"
#include "target/target.h"
#include "tuning_options.h"
#include "user_data.h"

namespace tessel::cli {

namespace {

const char* kHelp =
    "usage: tessel run MODEL [--db FILE] [--inputs X.npz|X.npy] [--expect Y.npz] [--save-outputs Z.npz]\n"
    "                  [--fusion rule|dp|none] [--compare onednn] [--repeats N] [--profile] [--json]\n"
    "\n"
    "Runs the model with the best kernels stored for its tasks (the naive program\n"
    "where a task has none) and with LibTorch (ATen ops, threads = cores) on the\n"
    "same weights and inputs; reports both latencies, the tuner's estimate (sum of\n"
    "weight x best measured latency) and the largest difference. With --compare\n"
    "onednn, also with oneDNN's primitives (weights reordered once, fused post-ops).\n"
    "\n"
    "options:\n"
    "  --db FILE    the tuning database with the model's kernels (default: $TESSEL_DB,\n"
    "               else ~/.local/share/tessel/tessel.db)\n"
    "  --fusion rule|dp|none  the fusion the model was tuned with (default dp)\n"
    "  --target T   the CPU target the model was tuned for (default cpu: this machine);\n"
    "               its kernels are built and run as it says, e.g. \"cpu -threads=1\"\n"
    "  --arch A     the target's arch, as -arch=A in --target\n"
    "  --inputs F   the inputs, from NumPy: an .npz (np.savez) with an array per\n"
    "               input, by the input's name or in order; an .npy for one input\n"
    "               (default: seeded random values in [-1, 1))\n"
    "  --expect F   an .npz of the outputs to compare with (e.g. your framework's):\n"
    "               reports the largest error; wrong beyond 1e-3 x the largest output\n"
    "  --save-outputs F  writes Tessel's outputs to an .npz\n"
    "  --compare onednn  runs the graph with oneDNN too, as ONNX Runtime's and\n"
    "               OpenVINO's CPU paths do: weights reordered once into oneDNN's\n"
    "               layouts, conv/matmul with bias, sum and element-wise post-ops;\n"
    "               checked against LibTorch like Tessel (\"libtorch\" is always run)\n"
    "  --repeats N  timed runs of each side after a warm-up (default 10)\n"
    "  --profile    per partition: its time in the run, its tuned estimate, their ratio\n"
    "  --json       tessel_ms (median), tessel_ms_min/median/max, libtorch_ms and its\n"
    "               min/median/max, estimate_ms, speedup, max_abs_err, correct, disturbed\n"
    "               (and disturbance, why), contention (others_share, steal_share),\n"
    "               tasks_tuned, tasks_naive, memory; with --profile, partitions;\n"
    "               with --compare onednn, onednn_ms and its min/median/max,\n"
    "               onednn_speedup (oneDNN / Tessel), onednn_max_abs_err, onednn_correct\n"
    "               (onednn_ms null and onednn_note where this build has no oneDNN)\n"
    "  --input-shapes A,B;C,D  the shapes of the model's inputs: needed for a\n"
    "               TorchScript model, and to size an ONNX model's symbolic dimensions\n"
    "\n"
    "examples:\n"
    "  tessel run resnet18 --db r18.db --profile\n"
    "  tessel run mobilenet_v2 --db m.db --compare onednn\n"
    "  tessel run model.onnx --inputs x.npz --expect y.npz --save-outputs ours.npz\n";

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

using support::kDisturbedSpread;  // support/tolerances.h: the figures are flagged

// The tuner's view of the model: per task its best stored schedule, per
// group the task's best measured latency, and their weighted sum.
struct StoredSchedules {
  std::map<size_t, std::vector<schedule::Step>> schedules;    // group -> steps
  std::map<size_t, std::pair<size_t, double>> groupEstimate;  // group -> (task, seconds)
  double estimateSeconds = 0;
  int tuned = 0, naive = 0;
  int64_t damagedSkipped = 0;  // better records whose steps do not replay
  bool haveEstimate() const { return naive == 0 && tuned > 0; }
};

StoredSchedules storedSchedules(const store::Database* db, const std::vector<fusion::GraphTask>& tasks,
                                const target::Target& target) {
  StoredSchedules out;
  for (size_t ti = 0; ti < tasks.size(); ++ti) {
    const fusion::GraphTask& t = tasks[ti];
    std::optional<store::BestRow> best;
    if (db)
      if (auto row = db->taskByKey(t.key, target.str())) {
        int64_t skipped = 0;  // damaged records: the next best that replays stands
        best = store::bestReplayable(*db, row->id, t.dag, &skipped);
        out.damagedSkipped += skipped;
      }
    if (!best) {
      ++out.naive;
      continue;
    }
    ++out.tuned;
    const double seconds = best->record.medianCost();
    out.estimateSeconds += double(t.weight) * seconds;
    std::vector<schedule::Step> steps = schedule::deserializeSteps(best->record.steps);
    for (size_t gi : t.groups) {
      out.schedules[gi] = steps;
      out.groupEstimate[gi] = {ti, seconds};
    }
  }
  return out;
}

// Seeded uniform [-1, 1) inputs, the same on every run.
std::map<std::string, runtime::HostTensor> randomInputs(const graph::Graph& g) {
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
  return inputs;
}

// One side's timed repeats and what else had the CPUs meanwhile.
struct SideTiming {
  Spread spread;
  support::Contention contention;
};

// A busy machine slows some runs of a side more than others (spread), or all
// of them alike (other processes' CPU time, the hypervisor's steal): say so
// rather than report a speed-up or an estimate error that is noise.
std::string disturbanceOf(const std::vector<std::pair<const char*, SideTiming>>& sides) {
  std::string disturbance;
  auto flag = [&](const std::string& why) { disturbance += (disturbance.empty() ? "" : "; ") + why; };
  for (const auto& [who, side] : sides) {
    const Spread& sp = side.spread;
    if (sp.min > 0 && sp.median > kDisturbedSpread * sp.min) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s's runs spread from %.3f to %.3f ms (median %.2fx the fastest)", who,
                    sp.min * 1e3, sp.max * 1e3, sp.median / sp.min);
      flag(buf);
    }
    if (const std::string why = support::describeContention(side.contention); !why.empty())
      flag(std::string("while ") + who + " ran, " + why);
  }
  return disturbance;
}

nlohmann::json contentionJson(const support::Contention& c) {
  if (!c.known) return nullptr;
  return {{"others_share", c.othersShare}, {"steal_share", c.stealShare}};
}

// --profile: per step of the run, its median time and, for a tuned group,
// its task's estimate; printed as a table unless `json`.
nlohmann::json profileTable(const runtime::GraphExecutor& executor, const std::vector<std::vector<double>>& stepTimes,
                            const StoredSchedules& stored, const std::vector<fusion::GraphTask>& tasks, bool json) {
  nlohmann::json partitions = nlohmann::json::array();
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
      auto e = stored.groupEstimate.find(size_t(steps[k].group));
      if (e != stored.groupEstimate.end()) {
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
    if (json) continue;
    const std::string group = steps[k].group >= 0 ? std::to_string(steps[k].group) : "-";
    if (est > 0)
      std::printf("%-5s %-48s %12.3f %12.3f %7.2f\n", group.c_str(), label.c_str(), measured * 1e3, est * 1e3,
                  measured / est);
    else
      std::printf("%-5s %-48s %12.3f %12s %7s\n", group.c_str(), label.c_str(), measured * 1e3, "-", "-");
  }
  return partitions;
}

}  // namespace

OptionSpec runOptions() {
  return {{"db", "fusion", "repeats", "target", "arch", "input-shapes", "inputs", "expect", "save-outputs", "compare"},
          {"json", "help", "profile"}};
}

std::string runHelp() {
  return kHelp;
}

namespace {

// The model as the run needs it: prepared for the target, with the user's
// inputs (integer ones bound as constants when it is prepared) and expected outputs.
struct RunModel {
  PreparedModel prepared;
  UserInputs user;
  std::map<std::string, runtime::HostTensor> expected;
};

RunModel loadRunModel(const Args& args, const target::Target& target) {
  RunModel m;
  if (args.has("inputs")) {
    graph::Graph loaded = frontend::loadModel(modelArgument(args), args.get("input-shapes"));
    m.user = readUserInputs(args.get("inputs"), loaded.inputs);
    m.prepared = prepareModel(std::move(loaded), modelArgument(args), fusionArgument(args), target, m.user.ints);
  } else {
    m.prepared = prepareModel(args, target);
  }
  if (args.has("expect")) m.expected = readExpectedOutputs(args.get("expect"), m.prepared.graph);
  return m;
}

// The best stored schedule of each task, from --db or the default database
// where there is one.
StoredSchedules schedulesFor(const Args& args, const std::vector<fusion::GraphTask>& tasks,
                             const target::Target& target, bool json) {
  std::unique_ptr<store::Database> db;
  const std::string dbPath = args.get("db", store::defaultDatabasePath());
  if (args.has("db") || std::filesystem::exists(dbPath))
    db = store::Database::open(dbPath, store::OpenMode::ReadOnly);
  else if (!json)
    std::fprintf(stderr, "no database at %s: every task runs its naive program\n", dbPath.c_str());
  StoredSchedules stored = storedSchedules(db.get(), tasks, target);
  if (stored.damagedSkipped)
    std::fprintf(stderr, "warning: skipped %lld records whose steps do not replay on their task; took the next best\n",
                 (long long)stored.damagedSkipped);
  return stored;
}

// --compare: the peers besides LibTorch (always run: it is the reference
// the outputs are checked against).
struct Peers {
  bool onednn = false;
};

Peers peersOf(const Args& args) {
  Peers peers;
  for (const std::string& peer : parseList(args.get("compare", ""))) {
    if (peer == "onednn")
      peers.onednn = true;
    else if (peer != "libtorch")
      throw UsageError("option --compare: unknown peer '" + peer + "' (libtorch, onednn)");
  }
  return peers;
}

// The oneDNN executor's run, when --compare asked for it.
struct OnednnSide {
  std::optional<reference::ReferenceRun> run;  // none: not built with oneDNN
  SideTiming timing;
  std::string note;  // why there is no run
  double maxAbs = 0;
  bool correct = false;
};

// Every side timed, LibTorch first, and what each computed.
struct RunTimings {
  reference::ReferenceRun ref;
  SideTiming torch, tessel;
  std::optional<OnednnSide> onednn;  // --compare onednn
  std::map<std::string, runtime::HostTensor> ours;
  std::vector<std::vector<double>> stepTimes;  // per step, per repeat (--profile)
};

RunTimings timeSides(runtime::GraphExecutor& executor, const graph::Graph& g,
                     const std::map<std::string, runtime::HostTensor>& inputs, int threads, int repeats, bool profile,
                     const Peers& peers) {
  RunTimings t;
  // LibTorch first, in a process where no Tessel kernel has run yet: OpenMP
  // threads left spinning by Tessel's kernels slowed LibTorch 15-60x when it
  // ran second. (Passive waiting, the other cure, halved LibTorch's speed.)
  const support::CpuSample torchBefore = support::sampleCpu();
  t.ref = reference::runWithLibTorch(g, inputs, threads, repeats);
  t.torch = {spreadOf(t.ref.times), support::contentionBetween(torchBefore, support::sampleCpu())};
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // oneDNN next: it shares LibTorch's OpenMP runtime (libgomp) and pool.
  if (peers.onednn) {
    OnednnSide side;
    if (reference::onednnAvailable()) {
      const support::CpuSample before = support::sampleCpu();
      side.run = reference::runWithOnednn(g, inputs, threads, repeats);
      side.timing = {spreadOf(side.run->times), support::contentionBetween(before, support::sampleCpu())};
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    } else {
      side.note = "this build has no oneDNN (install libdnnl-dev and rebuild)";
    }
    t.onednn = std::move(side);
  }
  // The executor gives its kernels every core again (LibTorch leaves OpenMP
  // at its own thread count), on a pinned team like the measuring worker's.
  t.ours = executor.run(inputs);  // warm-up
  std::vector<double> times;
  t.stepTimes.resize(executor.steps().size());
  const support::CpuSample tesselBefore = support::sampleCpu();
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    t.ours = executor.run(inputs);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (profile)
      for (size_t k = 0; k < t.stepTimes.size(); ++k)
        t.stepTimes[k].push_back(executor.stepSeconds().at(k));
  }
  t.tessel = {spreadOf(times), support::contentionBetween(tesselBefore, support::sampleCpu())};
  return t;
}

// The largest difference of `outputs` (computed by `who`) from LibTorch's
// (`ref`), and the largest value of LibTorch's.
std::pair<double, double> differenceFromLibTorch(const reference::ReferenceRun& ref,
                                                 const std::map<std::string, runtime::HostTensor>& outputs,
                                                 const std::string& who) {
  double maxAbs = 0, maxRef = 0;
  for (const auto& [name, want] : ref.outputs) {
    auto it = outputs.find(name);
    if (it == outputs.end() || it->second.data.size() != want.data.size())
      throw std::runtime_error("output '" + name + "' differs in size between " + who + " and LibTorch");
    for (size_t i = 0; i < want.data.size(); ++i) {
      double d = std::fabs(double(it->second.data[i]) - double(want.data[i]));
      maxAbs = std::isnan(d) ? INFINITY : std::max(maxAbs, d);
      maxRef = std::max(maxRef, std::fabs(double(want.data[i])));
    }
  }
  return {maxAbs, maxRef};
}

// Correct: the largest difference at most 1e-3 of the largest reference output.
bool withinModelTolerance(double maxAbs, double maxRef) {
  return maxAbs <= support::kModelRelativeTolerance * std::max(1.0, maxRef);
}

// The oneDNN side's outputs checked against LibTorch's, as Tessel's are; a
// warning where they differ (its figure would not be a comparison).
void checkOnednn(RunTimings& t) {
  if (!t.onednn || !t.onednn->run) return;
  double maxRef = 0;
  std::tie(t.onednn->maxAbs, maxRef) = differenceFromLibTorch(t.ref, t.onednn->run->outputs, "oneDNN");
  t.onednn->correct = withinModelTolerance(t.onednn->maxAbs, maxRef);
  if (!t.onednn->correct)
    std::fprintf(stderr, "warning: the oneDNN executor's outputs differ from LibTorch's by %.3g\n", t.onednn->maxAbs);
}

// What a run reports, as --json or as text.
struct RunReport {
  const PreparedModel& prepared;
  const StoredSchedules& stored;
  const RunTimings& timings;
  const runtime::GraphExecutor& executor;
  int repeats = 0;
  double maxAbs = 0, maxRef = 0;
  bool correct = false;
  std::string disturbance;
  const char* expectFile = nullptr;  // --expect, when given
  OutputComparison vsExpected;
  std::optional<nlohmann::json> partitions;  // --profile
};

// --compare onednn's fields of --json.
void addOnednnJson(nlohmann::json& j, const OnednnSide& side, double tesselSeconds) {
  if (!side.run) {
    j["onednn_ms"] = nullptr;
    j["onednn_note"] = side.note;
    return;
  }
  const Spread& s = side.timing.spread;
  j["onednn_ms"] = s.median * 1e3;
  j["onednn_ms_min"] = s.min * 1e3;
  j["onednn_ms_median"] = s.median * 1e3;
  j["onednn_ms_max"] = s.max * 1e3;
  j["onednn_speedup"] = tesselSeconds > 0 ? s.median / tesselSeconds : 0;
  j["onednn_max_abs_err"] = side.maxAbs;
  j["onednn_correct"] = side.correct;
  j["contention"]["onednn"] = contentionJson(side.timing.contention);
}

void printRunJson(const RunReport& rep) {
  const Spread& ts = rep.timings.tessel.spread;
  const Spread& tt = rep.timings.torch.spread;
  const runtime::MemoryStats mem = rep.executor.memory();
  nlohmann::json j = {
      {"model", rep.prepared.name},
      {"tessel_ms", ts.median * 1e3},
      {"tessel_ms_min", ts.min * 1e3},
      {"tessel_ms_median", ts.median * 1e3},
      {"tessel_ms_max", ts.max * 1e3},
      {"libtorch_ms", tt.median * 1e3},
      {"libtorch_ms_min", tt.min * 1e3},
      {"libtorch_ms_median", tt.median * 1e3},
      {"libtorch_ms_max", tt.max * 1e3},
      {"estimate_ms", rep.stored.haveEstimate() ? nlohmann::json(rep.stored.estimateSeconds * 1e3) : nlohmann::json()},
      {"repeats", rep.repeats},
      {"threads", rep.executor.threads()},
      {"speedup", ts.median > 0 ? tt.median / ts.median : 0},
      {"disturbed", !rep.disturbance.empty()},
      {"contention",
       {{"tessel", contentionJson(rep.timings.tessel.contention)},
        {"libtorch", contentionJson(rep.timings.torch.contention)}}},
      {"max_abs_err", rep.maxAbs},
      {"max_abs_ref", rep.maxRef},
      {"correct", rep.correct},
      {"tasks", rep.prepared.tasks.size()},
      {"tasks_tuned", rep.stored.tuned},
      {"tasks_naive", rep.stored.naive},
      {"memory",
       {{"arena_bytes", mem.arenaBytes}, {"unshared_bytes", mem.unsharedBytes}, {"constant_bytes", mem.constantBytes}}},
      {"fusion", rep.prepared.fusion}};
  if (rep.timings.onednn) addOnednnJson(j, *rep.timings.onednn, ts.median);
  if (!rep.disturbance.empty()) j["disturbance"] = rep.disturbance;
  if (rep.partitions) j["partitions"] = *rep.partitions;
  if (rep.expectFile) {
    j["expect_max_abs_err"] = rep.vsExpected.maxAbsErr;
    j["expect_max_abs_ref"] = rep.vsExpected.maxAbsRef;
    j["expect_correct"] = rep.vsExpected.withinTolerance();
  }
  std::puts(j.dump().c_str());
  if (!rep.disturbance.empty()) std::fprintf(stderr, "disturbed: %s\n", rep.disturbance.c_str());
}

void printRunText(const RunReport& rep) {
  const Spread& ts = rep.timings.tessel.spread;
  const Spread& tt = rep.timings.torch.spread;
  const double estimate = rep.stored.estimateSeconds;
  std::printf("tessel   %.3f ms (median of %d; min %.3f, max %.3f; %d of %zu tasks tuned)\n", ts.median * 1e3,
              rep.repeats, ts.min * 1e3, ts.max * 1e3, rep.stored.tuned, rep.prepared.tasks.size());
  if (rep.stored.haveEstimate())
    std::printf("estimate %.3f ms (sum of weight x best measured latency; run / estimate %.2f)\n", estimate * 1e3,
                ts.median / estimate);
  std::printf("libtorch %.3f ms (median of %d; min %.3f, max %.3f): Tessel at %.2fx LibTorch's speed\n",
              tt.median * 1e3, rep.repeats, tt.min * 1e3, tt.max * 1e3, tt.median / ts.median);
  std::printf("max abs error %.3g against LibTorch (outputs up to %.3g): %s\n", rep.maxAbs, rep.maxRef,
              withinModelTolerance(rep.maxAbs, rep.maxRef) ? "correct" : "WRONG");
  if (const std::optional<OnednnSide>& o = rep.timings.onednn; o && o->run) {
    const Spread& s = o->timing.spread;
    std::printf("onednn   %.3f ms (median of %d; min %.3f, max %.3f): Tessel at %.2fx oneDNN's speed\n", s.median * 1e3,
                rep.repeats, s.min * 1e3, s.max * 1e3, s.median / ts.median);
    std::printf("max abs error %.3g of oneDNN against LibTorch: %s\n", o->maxAbs, o->correct ? "correct" : "WRONG");
  } else if (o) {
    std::printf("onednn   not run: %s\n", o->note.c_str());
  }
  if (rep.expectFile)
    std::printf("max abs error %.3g against %s (outputs up to %.3g, largest in '%s'): %s\n", rep.vsExpected.maxAbsErr,
                rep.expectFile, rep.vsExpected.maxAbsRef, rep.vsExpected.worstOutput.c_str(),
                rep.vsExpected.withinTolerance() ? "correct" : "WRONG");
  const runtime::MemoryStats mem = rep.executor.memory();
  std::printf("memory: activations %.1f MiB in one arena (%.1f MiB unshared), constants %.1f MiB\n",
              double(mem.arenaBytes) / 1048576, double(mem.unsharedBytes) / 1048576,
              double(mem.constantBytes) / 1048576);
  if (!rep.disturbance.empty()) std::printf("disturbed: %s; run again on a quiet machine\n", rep.disturbance.c_str());
}

}  // namespace

int runCommand(const std::vector<std::string>& argv) {
  Args args(argv, runOptions());
  const target::Target target = targetOption(args, false);
  const int repeats = int(args.getInt("repeats", 10, 1, 10000));
  const bool json = args.has("json"), profile = args.has("profile");
  const Peers peers = peersOf(args);
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));

  const RunModel model = loadRunModel(args, target);
  const PreparedModel& prepared = model.prepared;
  const graph::Graph& g = prepared.graph;
  const std::vector<fusion::GraphTask>& tasks = prepared.tasks;
  const StoredSchedules stored = schedulesFor(args, tasks, target, json);
  if (!json)
    std::fprintf(stderr, "%s: %zu partitions, %zu tasks (%d tuned, %d naive); building kernels...\n",
                 prepared.name.c_str(), prepared.plan.groups.size(), tasks.size(), stored.tuned, stored.naive);
  runtime::ExecutorOptions eo;
  eo.groups = prepared.plan.groups;
  eo.lowering = prepared.lowering;
  eo.jobs = cores;
  eo.target = target;
  eo.schedules = stored.schedules;
  runtime::GraphExecutor executor(g, eo);
  executor.setProfiling(profile);
  const std::map<std::string, runtime::HostTensor> inputs = args.has("inputs") ? model.user.floats : randomInputs(g);
  RunTimings timings = timeSides(executor, g, inputs, eo.target.effectiveThreads(), repeats, profile, peers);
  checkOnednn(timings);

  RunReport rep{prepared, stored, timings, executor, repeats, 0, 0, false, {}, nullptr, {}, std::nullopt};
  std::tie(rep.maxAbs, rep.maxRef) = differenceFromLibTorch(timings.ref, timings.ours, "Tessel");
  if (args.has("save-outputs")) saveOutputs(args.get("save-outputs"), g, timings.ours);
  const std::string expectFile = args.get("expect", "");
  if (args.has("expect")) {
    rep.expectFile = expectFile.c_str();
    rep.vsExpected = compareOutputs(timings.ours, model.expected);
  }
  rep.correct =
      withinModelTolerance(rep.maxAbs, rep.maxRef) && (!args.has("expect") || rep.vsExpected.withinTolerance());
  std::vector<std::pair<const char*, SideTiming>> sides = {{"Tessel", timings.tessel}, {"LibTorch", timings.torch}};
  if (timings.onednn && timings.onednn->run) sides.emplace_back("oneDNN", timings.onednn->timing);
  rep.disturbance = disturbanceOf(sides);
  if (profile) rep.partitions = profileTable(executor, timings.stepTimes, stored, tasks, json);
  if (json)
    printRunJson(rep);
  else
    printRunText(rep);
  return rep.correct ? 0 : 1;
}

}  // namespace tessel::cli
