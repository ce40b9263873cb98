// Targets as strings and as what they imply: canonical strings that parse back
// to the same target ("cpu" stays "cpu"), a clear message for every way a
// string can be wrong, each arch's compiler flags (compiled for real, and
// checked for what they do to register tiles) and vectors, the hardware parameters the tuner takes, and the tasks and
// tuner options that follow a target.
#include <QtTest>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "codegen/cpp_builder.h"
#include "codegen/cpp_codegen.h"
#include "codegen/cpu_features.h"
#include "lower/layout_rewrite.h"
#include "lower/loop_nest.h"
#include "measure/cuda_driver.h"
#include "measure/target_check.h"
#include "schedule/hardware_params.h"
#include "schedule/sketch.h"
#include "search/space_summary.h"
#include "search/tuner.h"
#include "support/subprocess.h"
#include "target/target.h"
#include "task/search_task.h"
#include "te/operators.h"
#include "tessel_test.h"

using namespace tessel;
using target::parseTarget;
using target::Target;

namespace {

std::vector<std::string> cpuFlags(const std::string& march) {
  return {"-O3", "-march=" + march, "-fno-predictive-commoning", "-fopenmp", "-std=c++17"};
}

}  // namespace

class TestTarget : public QObject {
  Q_OBJECT

 private slots:
  void canonicalString_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("canonical");
    QTest::newRow("this machine") << "cpu"
                                  << "cpu";
    QTest::newRow("spaces") << "  cpu  "
                            << "cpu";
    QTest::newRow("defaults spelled out") << "cpu -arch=native -threads=0"
                                          << "cpu";
    QTest::newRow("options reordered") << "cpu -threads=1 -arch=x86-64-v2"
                                       << "cpu -arch=x86-64-v2 -threads=1";
    QTest::newRow("v3") << "cpu -arch=x86-64-v3"
                        << "cpu -arch=x86-64-v3";
    QTest::newRow("v4, 8 threads") << "cpu  -threads=8   -arch=x86-64-v4"
                                   << "cpu -arch=x86-64-v4 -threads=8";
    QTest::newRow("baseline x86-64") << "cpu -arch=x86-64"
                                     << "cpu -arch=x86-64";
    QTest::newRow("most threads") << "cpu -threads=1024"
                                  << "cpu -threads=1024";
    QTest::newRow("cuda") << "cuda"
                          << "cuda";
    QTest::newRow("cuda native") << "cuda -arch=native"
                                 << "cuda";
    QTest::newRow("cuda sm_90") << "cuda -arch=sm_90"
                                << "cuda -arch=sm_90";
    QTest::newRow("cuda sm_90a") << "cuda -arch=sm_90a"
                                 << "cuda -arch=sm_90a";
    QTest::newRow("cuda sm_100") << "cuda -arch=sm_100"
                                 << "cuda -arch=sm_100";
  }
  void canonicalString() {
    QFETCH(QString, text);
    QFETCH(QString, canonical);
    const Target t = parseTarget(text.toStdString());
    QCOMPARE(QString::fromStdString(t.str()), canonical);
    QVERIFY(parseTarget(t.str()) == t);  // parse(str(t)) == t
    QCOMPARE(parseTarget(t.str()).str(), t.str());
  }

  // "cpu" is this machine, exactly as before targets had options: existing
  // databases and workload keys name it so.
  void cpuIsThisMachine() {
    const Target host = Target::host();
    QCOMPARE(host.str(), std::string("cpu"));
    QVERIFY(parseTarget("cpu") == host);
    QCOMPARE(host.arch, std::string("native"));
    QCOMPARE(host.threads, 0);
    QCOMPARE(host.effectiveThreads(), int(std::max(1u, std::thread::hardware_concurrency())));
    QVERIFY(host.runsOnHost());
    // One source of truth for this machine's vectors.
    QCOMPARE(codegen::nativeVectorIsa().lanes, host.vectorLanes);
    QCOMPARE(codegen::nativeVectorIsa().registers, host.vectorRegisters);
    QCOMPARE(codegen::kernelCompilerFlags(), host.compilerFlags());
    QVERIFY(parseTarget("cpu -threads=1") != host);
    QVERIFY(parseTarget("cpu -arch=x86-64-v3") != host);
  }

  void errors_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("empty") << ""
                           << "empty target (expected cpu or cuda, e.g. \"cpu -arch=x86-64-v2 -threads=1\")";
    QTest::newRow("blank") << "   "
                           << "empty target";
    QTest::newRow("unknown kind") << "tpu"
                                  << "unknown target kind 'tpu' (known: cpu, cuda)";
    QTest::newRow("kind not first") << "-arch=x86-64 cpu"
                                    << "unknown target kind '-arch=x86-64' (known: cpu, cuda)";
    QTest::newRow("no dash") << "cpu arch=x86-64"
                             << "target option 'arch=x86-64' is not of the form -name=value (e.g. -arch=x86-64-v3)";
    QTest::newRow("no value") << "cpu -arch"
                              << "target option '-arch' is not of the form -name=value";
    QTest::newRow("a second kind") << "cpu cuda"
                                   << "target option 'cuda' is not of the form -name=value";
    QTest::newRow("unknown cpu option") << "cpu -mcpu=skylake"
                                        << "unknown target option '-mcpu' for cpu (known: -arch, -threads)";
    QTest::newRow("threads on cuda") << "cuda -threads=1"
                                     << "unknown target option '-threads' for cuda (known: -arch)";
    QTest::newRow("twice") << "cpu -arch=x86-64 -arch=x86-64-v2"
                           << "target option -arch given twice";
    QTest::newRow("threads twice") << "cpu -threads=1 -threads=1"
                                   << "target option -threads given twice";
    QTest::newRow("unknown cpu arch") << "cpu -arch=haswell"
                                      << "unknown cpu arch 'haswell' (known: native, x86-64, x86-64-v2, x86-64-v3, "
                                         "x86-64-v4)";
    QTest::newRow("empty arch") << "cpu -arch="
                                << "unknown cpu arch ''";
    QTest::newRow("cuda arch on cpu") << "cpu -arch=sm_90"
                                      << "unknown cpu arch 'sm_90'";
    QTest::newRow("cpu arch on cuda") << "cuda -arch=x86-64"
                                      << "unknown cuda arch 'x86-64' (known: native, sm_XX such as sm_80, sm_90)";
    QTest::newRow("short sm") << "cuda -arch=sm_9"
                              << "unknown cuda arch 'sm_9'";
    QTest::newRow("sm letters") << "cuda -arch=sm_abc"
                                << "unknown cuda arch 'sm_abc'";
    QTest::newRow("too many threads") << "cpu -threads=1025"
                                      << "target option -threads=1025 is not a number from 0 (every core) to 1024";
    QTest::newRow("negative threads") << "cpu -threads=-1"
                                      << "target option -threads=-1 is not a number";
    QTest::newRow("empty threads") << "cpu -threads="
                                   << "target option -threads= is not a number";
    QTest::newRow("huge threads") << "cpu -threads=99999999999"
                                  << "target option -threads=99999999999 is not a number";
    QTest::newRow("hex threads") << "cpu -threads=0x2"
                                 << "target option -threads=0x2 is not a number";
  }
  void errors() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    try {
      parseTarget(text.toStdString());
      QFAIL(qPrintable("no error for '" + text + "'"));
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QString::fromStdString(e.what()).startsWith(message), e.what());
    }
  }

  // Each arch's flags and vectors: SSE for x86-64 and v2, AVX2 for v3,
  // AVX-512 (preferred at 512 bits) for v4.
  void flagsOfEachArch_data() {
    QTest::addColumn<QString>("arch");
    QTest::addColumn<int>("lanes");
    QTest::addColumn<int>("registers");
    QTest::addColumn<QString>("isa");
    QTest::newRow("x86-64") << "x86-64" << 4 << 16 << "sse";
    QTest::newRow("x86-64-v2") << "x86-64-v2" << 4 << 16 << "sse";
    QTest::newRow("x86-64-v3") << "x86-64-v3" << 8 << 16 << "avx2";
    QTest::newRow("x86-64-v4") << "x86-64-v4" << 16 << 32 << "avx512";
  }
  void flagsOfEachArch() {
    QFETCH(QString, arch);
    QFETCH(int, lanes);
    QFETCH(int, registers);
    QFETCH(QString, isa);
    const Target t = parseTarget("cpu -arch=" + arch.toStdString());
    std::vector<std::string> flags = cpuFlags(arch.toStdString());
    if (lanes == 16) flags.push_back("-mprefer-vector-width=512");
    QCOMPARE(t.compilerFlags(), flags);
    QCOMPARE(codegen::kernelCompilerFlags(t), flags);
    QCOMPARE(t.vectorLanes, lanes);
    QCOMPARE(t.vectorRegisters, registers);
    const codegen::VectorIsa v = codegen::vectorIsa(t);
    QCOMPARE(QString::fromStdString(v.name), isa);
    QCOMPARE(v.lanes, lanes);
    QCOMPARE(v.registers, registers);
    QCOMPARE(codegen::CppOptions(t).isa.lanes, lanes);

    // The system compiler takes them (compiling needs no such CPU).
    const std::string dir = support::makeTempDir("tessel-target-test");
    codegen::BuildOptions o = measure::measurerOptionsFor(t).build;
    o.workDir = dir;
    QCOMPARE(o.flags, codegen::withoutWarnings(flags));
    const auto built = codegen::buildCandidates(
        {{"extern \"C\" int k(float* const* a) {\n#pragma omp parallel for\n  for (int i = 0; i < 64; ++i) a[1][i] = "
          "2 * a[0][i];\n  return 0;\n}\n",
          "k"}},
        o);
    support::removeTree(dir);
    QVERIFY2(built[0].error == support::ErrorCode::None, built[0].message.c_str());
  }

  // Once the search unrolls a convolution's register tile's reduction loop
  // (auto_unroll_max_step), GCC's predictive commoning at -O3 keeps the
  // input values the next iteration reuses in registers, spills them and
  // broadcasts from registers instead of from memory: 1.7-4.8x slower. The
  // kernel flags turn it off. Random convolution schedules (no padding, so
  // every broadcast operand is a plain load) whose tiles carry an unroll
  // pragma are compiled to assembly, once with the target's flags and once
  // with predictive commoning turned back on, which shows that the check sees
  // the problem.
  void flagsKeepRegisterTileOperandsInMemory() {
    const Target t = parseTarget("cpu -arch=x86-64-v3");
    te::ComputeDAG dag = te::makeOperator("conv2d", {1, 64, 14, 14, 64, 3, 3, 1, 0}, te::Layout::NHWC);
    const schedule::HardwareParams hw = schedule::hardwareParams(t);
    const std::vector<schedule::Sketch> sketches = schedule::generateSketches(dag, hw);
    std::mt19937_64 rng(2);
    std::string unit = codegen::cppPrelude();
    int tiles = 0;
    for (int i = 0; i < 400 && tiles < 60; ++i) {
      std::vector<schedule::Step> p;
      try {
        p = schedule::annotateSketch(sketches[size_t(i) % sketches.size()], hw, rng);
      } catch (const schedule::ScheduleError&) {
        continue;
      }
      for (schedule::Step& s : p)
        if (auto* pragma = std::get_if<schedule::PragmaStep>(&s)) pragma->autoUnrollMaxStep = 512;
      lower::LoweredFunc f = lower::lowerState(schedule::replay(dag, p));
      lower::rewriteLayouts(&f);
      std::string symbol = "k";
      symbol += std::to_string(i);
      const std::string code = codegen::emitCppKernel(f, symbol, codegen::CppOptions(t));
      const size_t tile = code.find("register tile");
      if (tile == std::string::npos || code.find("#pragma GCC unroll", tile) > code.find("tessel_store", tile))
        continue;
      unit += code;
      ++tiles;
    }
    QVERIFY2(tiles >= 30, qPrintable(QString::number(tiles)));
    const std::string dir = support::makeTempDir("tessel-target-test");
    std::ofstream(dir + "/tiles.cpp") << unit;
    auto registerBroadcasts = [&](std::vector<std::string> flags) {
      const char* cxx = std::getenv("TESSEL_CXX");
      std::vector<std::string> cmd = {cxx && *cxx ? cxx : "c++"};
      cmd.insert(cmd.end(), flags.begin(), flags.end());
      cmd.insert(cmd.end(), {"-w", "-S", "-o", dir + "/tiles.s", dir + "/tiles.cpp"});
      const support::ProcessResult r = support::runProcess(cmd, 300);
      if (!r.ok()) return -1;
      std::ifstream in(dir + "/tiles.s");
      const std::regex fromRegister(R"(vbroadcastss\s+%xmm)");
      int n = 0;
      for (std::string line; std::getline(in, line);)
        n += std::regex_search(line, fromRegister);
      return n;
    };
    std::vector<std::string> flags = t.compilerFlags();
    const int withFlags = registerBroadcasts(flags);
    flags.push_back("-fpredictive-commoning");
    const int commoned = registerBroadcasts(flags);
    support::removeTree(dir);
    qInfo("%d tiles with an unrolled reduction: %d broadcasts from registers, %d with predictive commoning", tiles,
          withFlags, commoned);
    QCOMPARE(withFlags, 0);
    QVERIFY2(commoned > 0, "the check did not see predictive commoning");
  }

  void nativeFlags() {
    const Target t = parseTarget("cpu -threads=1");
    std::vector<std::string> flags = cpuFlags("native");
    if (t.vectorLanes >= 16) flags.push_back("-mprefer-vector-width=512");
    QCOMPARE(t.compilerFlags(), flags);
    QCOMPARE(t.vectorLanes, Target::host().vectorLanes);
  }

  void cudaLimits() {
    const Target t = parseTarget("cuda -arch=sm_90");
    QVERIFY(!t.isCpu());
    QCOMPARE(t.kindName(), std::string("cuda"));
    QCOMPARE(t.maxThreadsPerBlock, 1024);
    QCOMPARE(t.sharedMemoryPerBlock, 48 * 1024);
    QCOMPARE(t.registersPerThread, 255);
    QCOMPARE(t.warpSize, 32);
    QCOMPARE(t.compilerFlags(), (std::vector<std::string>{"-O3", "-arch=sm_90"}));
    QVERIFY(!t.runsOnHost());  // its kernels run on the GPU, not on this CPU
    const schedule::HardwareParams hw = schedule::hardwareParams(t);
    QCOMPARE(hw.target, t);  // the limits are the target's, held once
    QCOMPARE(Target::cuda("sm_90"), t);
    QCOMPARE(Target::cuda().str(), std::string("cuda"));
    QVERIFY(Target::cuda().isCuda() && !Target::host().isCuda());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Target::cuda("x86-64-v2"));
    QCOMPARE(Target::cpu("x86-64-v2"), parseTarget("cpu -arch=x86-64-v2"));
    QCOMPARE(Target::cpu(), Target::host());
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, Target::cpu("sm_90"));
  }

  // The targets a user is offered (the studio's box): this machine's CPU
  // first, each x86-64 level, then its GPU; a level this CPU cannot run and
  // a GPU without a driver say why, and a measurable target names its arch.
  void targetChoicesSayWhatThisMachineMeasures() {
    const auto choices = measure::targetChoices();
    QCOMPARE(choices.size(), target::cpuArchs().size() + 1);
    QCOMPARE(choices.front().target, Target::host());
    QVERIFY(choices.front().unavailable.empty());
    QVERIFY(choices.back().target.isCuda());
    QCOMPARE(choices.back().unavailable, measure::cuda::unavailableReason());
    for (const measure::TargetChoice& c : choices) {
      QCOMPARE(c.unavailable, measure::unmeasurableReason(c.target));
      if (c.target.isCpu()) {
        QCOMPARE(c.unavailable.empty(), c.target.runsOnHost());
        QCOMPARE(measure::resolvedHere(c.target), c.target);
        if (!c.unavailable.empty()) QVERIFY(c.unavailable.find(c.target.arch) != std::string::npos);
      } else if (c.unavailable.empty()) {
        QVERIFY(measure::resolvedHere(c.target).arch.starts_with("sm_"));
      }
    }
  }

  // What this machine can run: every level up to its own, none above.
  void runsOnHost() {
    const int lanes = Target::host().vectorLanes;
    QVERIFY(parseTarget("cpu -arch=x86-64").runsOnHost());
    QVERIFY(parseTarget("cpu -arch=x86-64-v2").runsOnHost());  // any x86-64 server of the last 12 years
    if (lanes < 8) QVERIFY(!parseTarget("cpu -arch=x86-64-v3").runsOnHost());
    if (lanes < 16) QVERIFY(!parseTarget("cpu -arch=x86-64-v4").runsOnHost());
    if (parseTarget("cpu -arch=x86-64-v4").runsOnHost()) QCOMPARE(lanes, 16);
  }

  void hardwareParams() {
    const schedule::HardwareParams one = schedule::hardwareParams(parseTarget("cpu -arch=x86-64-v2 -threads=1"));
    QCOMPARE(one.target, parseTarget("cpu -arch=x86-64-v2 -threads=1"));
    QCOMPARE(one.cores, 1);
    QCOMPARE(one.maxVectorLanes, 16);
    const schedule::HardwareParams host = schedule::hardwareParams(Target::host());
    QCOMPARE(host.cores, int(std::max(1u, std::thread::hardware_concurrency())));
    QCOMPARE(schedule::hardwareParams(parseTarget("cpu -threads=3")).cores, 3);
    // As the tuner takes it.
    QCOMPARE(search::tuneOptionsFor(parseTarget("cpu -threads=1 -arch=x86-64-v2")).hardware.cores, 1);
    QCOMPARE(search::tuneOptionsFor(Target::host()).hardware.cores, host.cores);
  }

  // A task carries its target; its workload key does not depend on the
  // target (the database keys tasks by both, the target as its string).
  void tasksFollowTheirTarget() {
    const task::SearchTask plain = task::makeOperatorTask("matmul", {8, 8, 8}, tessel::target::Target::host());
    const task::SearchTask one =
        task::makeOperatorTask("matmul", {8, 8, 8}, parseTarget("cpu -threads=1  -arch=x86-64-v2"));
    QCOMPARE(plain.target.str(), std::string("cpu"));
    QCOMPARE(one.target.str(), std::string("cpu -arch=x86-64-v2 -threads=1"));
    QCOMPARE(one.key, plain.key);
    QCOMPARE(task::recordKey(plain.key, plain.target), plain.key);
    QCOMPARE(task::recordKey(one.key, one.target), one.key + "@cpu -arch=x86-64-v2 -threads=1");
    QCOMPARE(task::defaultLayout(parseTarget("cpu -threads=1")), std::string("nhwc"));
    QCOMPARE(task::defaultLayout(Target::cuda("sm_90")), std::string("nchw"));
    try {
      task::makeOperatorTask("matmul", {8, 8, 8}, parseTarget("gpu"));
      QFAIL("no error for target gpu");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QByteArray(e.what()).contains("unknown target kind 'gpu'"), e.what());
    }
  }

  // The tuner's options for a target carry it to every stage; a task tuned
  // with another target's options is refused rather than recorded under a
  // target its kernels were not built for.
  void tuneOptionsFollowTheTarget() {
    const Target t = parseTarget("cpu -arch=x86-64-v2 -threads=1");
    const search::TuneOptions o = search::tuneOptionsFor(t);
    QCOMPARE(o.hardware.cores, 1);
    QCOMPARE(o.measurer.run.threads, 1);
    QCOMPARE(o.measurer.build.flags, codegen::withoutWarnings(cpuFlags("x86-64-v2")));
    QCOMPARE(o.measurer.cpp.isa.lanes, 4);
    const search::TuneOptions plain = search::tuneOptionsFor(Target::host());
    QCOMPARE(plain.measurer.build.flags, search::TuneOptions().measurer.build.flags);  // "cpu" is the default
    QCOMPARE(plain.measurer.run.threads, 0);

    const task::SearchTask task = task::makeOperatorTask("matmul", {8, 8, 8}, t);
    try {
      search::TaskTuner tuner(task, search::TuneOptions());
      QFAIL("a -threads=1 task was tuned with the options of cpu");
    } catch (const std::invalid_argument& e) {
      QVERIFY2(QByteArray(e.what()).contains("not those of the task's target 'cpu -arch=x86-64-v2 -threads=1'"),
               e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestTarget)
#include "test_target.moc"
