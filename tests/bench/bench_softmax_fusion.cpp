// AutoGTCO's softmax-into-batch-matmul sketch rule on the CPU: the attention
// task of a zoo transformer (softmax(scores / scale) V, one DP-fused task)
// tuned with and without the rule, same trials and seeds, best latencies
// printed side by side.
//
//   build/bin/bench_softmax_fusion [--target T] [MODEL] [TRIALS] [SEED...]
//   e.g. build/bin/bench_softmax_fusion bert_tiny 200 1 2
// (defaults: cpu, bert_tiny, 200 trials, seeds 1 and 2; T a CPU target string,
// e.g. "cpu -threads=1")
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "fusion/fusion_plan.h"
#include "fusion/task_extraction.h"
#include "graph/zoo.h"
#include "schedule/sketch.h"
#include "schedule/softmax_fusion_rule.h"
#include "search/tuner.h"

using namespace tessel;

namespace {

const char* const kRule = "fuse_softmax_into_batch_matmul";

search::TuneResult tune(const task::SearchTask& task, int trials, uint64_t seed, const char* label) {
  search::TuneOptions o = search::tuneOptionsFor(task.target);
  o.trials = trials;
  o.batchSize = 64;
  o.seed = seed;
  o.measurer.run.workerPath = TESSEL_WORKER_PATH;
  o.onBatch = [&](int t, double best) {
    std::fprintf(stderr, "  %-12s seed %llu %4d trials  best %.4f ms\n", label, (unsigned long long)seed, t,
                 best * 1e3);
  };
  return search::tuneTask(task, o);
}

// Whether the best program is one of the rule's: its row max computed at the matmul (the output).
bool rulesProgram(const search::TuneResult& r, const task::SearchTask& task) {
  const schedule::State s = schedule::replay(task.dag, r.bestSteps);
  for (const schedule::Stage& st : s.stages)
    if (st.op.reduce == te::ReduceKind::Max && st.location == schedule::ComputeLocation::At &&
        s.isOutput(st.attachStage))
      return true;
  return false;
}

}  // namespace

static int run(int argc, char** argv) {
  target::Target target = target::Target::host();
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--target" && i + 1 < argc)
      target = target::parseTarget(argv[++i]);
    else
      args.push_back(argv[i]);
  const std::string model = args.size() > 0 ? args[0] : "bert_tiny";
  const int trials = args.size() > 1 ? std::atoi(args[1].c_str()) : 200;
  std::vector<uint64_t> seeds;
  for (size_t i = 2; i < args.size(); ++i)
    seeds.push_back(std::strtoull(args[i].c_str(), nullptr, 10));
  if (seeds.empty()) seeds = {1, 2};

  graph::Graph g = graph::makeZooModel(model);
  graph::foldConstants(g);
  graph::foldBatchNorm(g);
  fusion::FusionPlan plan = fusion::makeFusionPlan(g, "dp");
  // Only the groups with a softmax become tasks (the others, the embedding's
  // gathers of token ids among them, need not be lowered).
  std::vector<std::vector<size_t>> groups;
  for (const std::vector<size_t>& group : plan.groups)
    for (size_t n : group)
      if (g.nodes[n].op == "Softmax") {
        groups.push_back(group);
        break;
      }
  plan.groups = groups;
  const fusion::GraphTask* attention = nullptr;
  const std::vector<fusion::GraphTask> tasks = fusion::extractTasks(g, plan);
  for (const fusion::GraphTask& t : tasks)
    if (t.name.find("softmax_batch_matmul") != std::string::npos) attention = &t;
  if (!attention) {
    std::fprintf(stderr, "%s has no task with a softmax fused into a batch matmul\n", model.c_str());
    return 1;
  }
  const task::SearchTask task = fusion::toSearchTask(*attention, target);
  std::printf("%s on %s: task %s (%s), %.2f MFLOP\n%s", model.c_str(), task.target.str().c_str(),
              fusion::taskLabel(*attention).c_str(), attention->key.c_str(), task.flops * 1e-6,
              schedule::State(task.dag).toString().c_str());
  // The CPU's list leaves the rule out (it did not pay there): added here,
  // and taken out for each "without" tuning.
  if (target.isCpu())
    schedule::registerSketchRule(target::Target::Kind::Cpu, schedule::makeSoftmaxFusionRule(), "add_cache_write");
  search::TuneOptions probe = search::tuneOptionsFor(task.target);
  std::printf("sketches with the rule:");
  for (const schedule::Sketch& sk : schedule::generateSketches(task.dag, probe.hardware)) {
    std::string rules;
    for (const std::string& r : sk.rules)
      rules += (rules.empty() ? "" : "+") + r;
    std::printf(" [%s]", rules.c_str());
  }
  std::printf("\n%d trials per tuning, %u hardware threads\n", trials, std::thread::hardware_concurrency());

  std::vector<double> with, without;
  std::vector<bool> fused;
  for (uint64_t seed : seeds) {
    search::TuneResult r = tune(task, trials, seed, "with rule");
    with.push_back(r.bestSeconds);
    fused.push_back(rulesProgram(r, task));
    schedule::removeSketchRule(target.kind, kRule);
    without.push_back(tune(task, trials, seed, "without rule").bestSeconds);
    schedule::registerSketchRule(target.kind, schedule::makeSoftmaxFusionRule(), "add_cache_write");
  }
  std::printf("%-6s %14s %16s %8s  %s\n", "seed", "with rule (ms)", "without (ms)", "ratio", "best is the rule's");
  for (size_t i = 0; i < seeds.size(); ++i)
    std::printf("%-6llu %14.4f %16.4f %8.2f  %s\n", (unsigned long long)seeds[i], with[i] * 1e3, without[i] * 1e3,
                without[i] / with[i], fused[i] ? "yes" : "no");
  return 0;
}

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "bench_softmax_fusion: %s\n(usage: bench_softmax_fusion [--target T] [MODEL] [TRIALS] [SEED...])\n",
                 e.what());
    return 1;
  }
}
