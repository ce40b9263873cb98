// The executor's memory plan and run plan: random lifetimes and every zoo
// model's fused plan (no kernel is compiled: the plan needs only the lowered
// interfaces), checked for live tensors sharing memory, buffers used outside
// their lifetime and kernels whose arguments overlap.
#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <QtTest>
#include <random>
#include <set>

#include "frontend/model_loader.h"
#include "graph/zoo.h"
#include "runtime/memory_plan.h"
#include "runtime/run_plan.h"
#include "runtime/thread_team.h"
#include "schedule/state.h"
#include "tessel_test.h"

using namespace tessel;
using runtime::MemoryPlan;
using runtime::TensorLifetime;

namespace {

// The plan the executor makes for a prepared model, from its naive kernels'
// interfaces (the tuned ones have the same).
runtime::RunPlan planOf(const frontend::PreparedModel& m) {
  std::vector<runtime::KernelInterface> interfaces;
  for (size_t gi = 0; gi < m.plan.groups.size(); ++gi) {
    graph::LoweredSubgraph ls = graph::lowerSubgraph(m.graph, m.plan.groups[gi], m.lowering);
    if (ls.outputValues.empty()) continue;
    lower::LoweredFunc f = lower::lowerState(schedule::State(ls.dag));
    std::string symbol = "k";  // appended: GCC 12 warns falsely (-Wrestrict) on "k" + std::to_string(gi)
    symbol += std::to_string(gi);
    interfaces.push_back(runtime::kernelInterface(m.graph, m.plan.groups[gi], gi, ls, f, symbol));
  }
  std::set<std::string> constants;
  for (const auto& [name, init] : m.graph.initializers)
    if (!init.isInt() && init.info.dtype == graph::DType::Float32) constants.insert(name);
  for (const graph::Node& n : m.graph.nodes)
    if (n.op == "Constant" && !n.outputs.empty()) {
      auto vi = m.graph.values.find(n.outputs[0]);
      if (vi == m.graph.values.end() || vi->second.dtype == graph::DType::Float32) constants.insert(n.outputs[0]);
    }
  return runtime::planRun(m.graph, interfaces, constants);
}

}  // namespace

class TestRunPlan : public QObject {
  Q_OBJECT

 private slots:
  // Random lifetimes: no two tensors alive at one step overlap, offsets are
  // aligned, and the arena is never larger than the tensors side by side.
  void randomLifetimes() {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 300; ++trial) {
      const int steps = 1 + int(rng() % 40);
      std::vector<TensorLifetime> ts;
      const int n = int(rng() % 60);
      for (int i = 0; i < n; ++i) {
        const int a = int(rng() % uint32_t(steps)), b = a + int(rng() % uint32_t(steps - a));
        ts.push_back({std::to_string(i), int64_t(rng() % 5000), a, b});
      }
      const MemoryPlan p = runtime::planMemory(ts);
      const std::string overlap = runtime::findOverlap(ts, p);
      QVERIFY2(overlap.empty(), qPrintable(QString("trial %1: %2").arg(trial).arg(QString::fromStdString(overlap))));
      for (int64_t o : p.offsets)
        QCOMPARE(o % 64, int64_t(0));
      QVERIFY(p.arenaBytes <= p.totalBytes);
      // At least the largest set of tensors alive at one step.
      for (int s = 0; s < steps; ++s) {
        int64_t live = 0;
        for (const TensorLifetime& t : ts)
          if (t.firstStep <= s && s <= t.lastStep) live += t.bytes;
        QVERIFY(p.arenaBytes >= live);
      }
    }
  }

  // A chain reuses memory: a -> b -> c -> d needs two buffers, not four.
  void chainReuses() {
    std::vector<TensorLifetime> ts = {{"a", 1000, 0, 1}, {"b", 1000, 1, 2}, {"c", 1000, 2, 3}, {"d", 1000, 3, 4}};
    const MemoryPlan p = runtime::planMemory(ts);
    QCOMPARE(p.arenaBytes, int64_t(2 * 1024));
    QCOMPARE(p.totalBytes, int64_t(4 * 1024));
    QVERIFY(runtime::findOverlap(ts, p).empty());
    // The checker itself finds a fault planted in a plan.
    MemoryPlan bad = p;
    bad.offsets[1] = bad.offsets[0];
    QCOMPARE(QString::fromStdString(runtime::findOverlap(ts, bad)), QString("a and b"));
  }

  // The executor's team: every core once, each OpenMP thread on its own core,
  // and the team size set again for the calling thread on each entry.
  void threadTeamPinsEachThread() {
    runtime::ThreadTeam team(0, true);
    const std::vector<int> cores = runtime::allowedCores();
    QCOMPARE(team.threads(), int(cores.size()));
    omp_set_num_threads(1);  // as another library might leave it
    auto coresOfThisThread = [] {
      cpu_set_t set;
      CPU_ZERO(&set);
      pthread_getaffinity_np(pthread_self(), sizeof set, &set);
      return CPU_COUNT(&set);
    };
    for (int round = 0; round < 2; ++round) {  // pinning once, then entering again
      {
        const runtime::ThreadTeam::Entered entered = team.enter();
        QCOMPARE(omp_get_max_threads(), team.threads());
        std::vector<int> pinnedTo(size_t(team.threads()), -1);
#pragma omp parallel
        {
          cpu_set_t set;
          CPU_ZERO(&set);
          pthread_getaffinity_np(pthread_self(), sizeof set, &set);
          if (CPU_COUNT(&set) == 1)
            for (int c = 0; c < CPU_SETSIZE; ++c)
              if (CPU_ISSET(c, &set)) pinnedTo[size_t(omp_get_thread_num())] = c;
        }
        QCOMPARE(pinnedTo, cores);
      }
      // Afterwards this thread (which starts compilers and workers) has every core back.
      QCOMPARE(coresOfThisThread(), int(cores.size()));
    }
  }

  void badLifetimes() {
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runtime::planMemory({{"x", 4, 3, 2}}));
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, runtime::planMemory({{"x", -4, 0, 2}}));
  }

  // Every zoo model under every fusion the CLI offers: the executor's plan is
  // sound, and sharing makes the arena smaller than the tensors side by side.
  void zooPlans_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("fusion");
    for (const graph::ZooEntry& z : graph::zooModels())
      for (const char* fusion : {"dp", "rule", "none"})
        QTest::newRow(qPrintable(QString::fromStdString(z.name) + "/" + fusion))
            << QString::fromStdString(z.name) << QString(fusion);
  }
  void zooPlans() {
    QFETCH(QString, model);
    QFETCH(QString, fusion);
    const frontend::PreparedModel m =
        frontend::prepareModel(model.toStdString(), "", fusion.toStdString(), tessel::target::Target::host());
    const runtime::RunPlan plan = planOf(m);
    const std::string fault = runtime::checkRunPlan(plan);
    QVERIFY2(fault.empty(), fault.c_str());
    QVERIFY(!plan.steps.empty());
    QVERIFY2(plan.memory.arenaBytes < plan.memory.totalBytes,
             qPrintable(QString("arena %1 of %2 bytes").arg(plan.memory.arenaBytes).arg(plan.memory.totalBytes)));
    // Activations of an image model stay NHWC from the first convolution to the
    // head: at most the input and the head change layout.
    int conversions = 0;
    for (const runtime::PlannedStep& s : plan.steps)
      conversions += s.convert;
    if (model.startsWith("resnet") || model.startsWith("mobilenet") || model == "tiny_cnn")
      QVERIFY2(conversions <= 2, qPrintable(QString("%1 layout conversions").arg(conversions)));
  }
};

QTEST_GUILESS_MAIN(TestRunPlan)
#include "test_run_plan.moc"
