// Qt Test suite of measurement on the GPU: CUDA programs built by the CUDA
// builder (NVRTC, CUBIN, launch manifest) and measured by real tessel-worker
// processes. What needs no GPU runs everywhere: manifests are checked before
// anything is launched, and a machine without a driver gets an error record
// naming it from a worker that lives on. The rest needs an NVIDIA GPU
// (scripts/gpu-check.sh runs it there with TESSEL_REQUIRE=gpu, which turns
// a missing driver into a failure).
#include <QTest>
#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "../core/gpu_samples.h"
#include "codegen/nvrtc_compiler.h"
#include "measure/cuda_driver.h"
#include "measure/cuda_manifest.h"
#include "measure/cuda_program_builder.h"
#include "measure/program_measurer.h"
#include "measure/runner.h"
#include "task/search_task.h"
#include "tessel_test.h"

#ifndef TESSEL_WORKER_PATH
#error "TESSEL_WORKER_PATH must name the tessel-worker executable"
#endif

using namespace tessel;

namespace {

// matmul 64 x 48 x 40: A [64, 40], B [40, 48], C [64, 48].
const std::vector<int64_t> kShape = {64, 48, 40};
constexpr int64_t kOutput = 64 * 48;

measure::MeasurerOptions gpuOptions() {
  measure::MeasurerOptions o;
  o.run.workerPath = TESSEL_WORKER_PATH;
  o.run.repeats = 2;
  o.run.minRepeatSeconds = 0.002;
  o.run.timeoutSeconds = 20;
  return o;
}

// A hand-written kernel of the matmul task, compiled for `arch`, with a
// manifest of one launch over the task's three buffers.
measure::KernelRef handWritten(const std::string& dir, const std::string& name, const std::string& body,
                               const std::string& arch, std::array<int64_t, 3> grid = {1, 1, 1},
                               std::array<int64_t, 3> block = {1, 1, 1}) {
  codegen::CudaCompileOptions o;
  o.arch = arch;
  const std::string source =
      "extern \"C\" __global__ void " + name + "(const float* a, const float* b, float* c) {\n" + body + "\n}\n";
  const auto built = codegen::compileCuda({source}, o);
  if (built[0].error != measure::ErrorCode::None) throw std::runtime_error(built[0].message);
  std::ofstream(dir + "/" + name + ".cubin", std::ios::binary) << built[0].cubin;
  measure::CudaManifest m;
  m.arch = arch;
  m.cubin = name + ".cubin";
  m.buffers = {{"A", 64 * 40}, {"B", 40 * 48}, {"C", kOutput}};
  m.kernels = {{name, grid, block, 0, {0, 1, 2}, 0, 0}};
  measure::writeCudaManifest(dir + "/" + name + ".json", m);
  return {dir + "/" + name + ".json", name, "", {}};
}

// The GPU's arch, or "" where there is none.
std::string gpuArch() {
  if (!measure::cuda::unavailableReason().empty()) return "";
  return measure::cuda::gpus().at(0).arch();
}

// Skips where there is no driver (fails instead under TESSEL_REQUIRE=gpu).
#define REQUIRE_GPU(arch)                                                                                          \
  const std::string arch = gpuArch();                                                                              \
  if (arch.empty())                                                                                                \
    TESSEL_SKIP("gpu", ("needs an NVIDIA GPU and its driver, which the build machines lack (scripts/gpu-check.sh " \
                        "runs it on one): " +                                                                      \
                        measure::cuda::unavailableReason())                                                        \
                           .c_str());                                                                              \
  if (std::string nvrtcWhy; !codegen::nvrtcAvailable(&nvrtcWhy))                                                   \
  QFAIL(("a GPU machine needs NVRTC: " + nvrtcWhy).c_str())

}  // namespace

class TestCudaRunner : public QObject {
  Q_OBJECT

 private slots:
  // A manifest is a file: a damaged one is an error record naming the problem,
  // found before any GPU is asked for, and the worker lives on.
  void manifestsAreCheckedFirst() {
    std::string why;
    if (!codegen::nvrtcAvailable(&why)) TESSEL_SKIP("nvrtc", ("NVRTC is not installed: " + why).c_str());
    const task::SearchTask task = task::makeOperatorTask("matmul", kShape, tessel::target::Target::cuda("sm_80"));
    measure::MeasurerOptions o = gpuOptions();
    std::unique_ptr<measure::ProgramBuilder> builder = measure::makeBuilder(task, o);
    const measure::RunTask rt = measure::makeRunTask(task, *builder);
    const testing::GpuSample sample = testing::sampleGpuPrograms("matmul", "64,48,40");
    const auto built = builder->build({sample.programs.front()});
    QVERIFY2(built[0].error == measure::ErrorCode::None, built[0].message.c_str());
    const std::string good = built[0].kernel.library;
    const measure::CudaManifest m = measure::readCudaManifest(good);
    const std::string dir = builder->workDir();

    auto variant = [&](const std::string& name, auto change) {
      measure::CudaManifest v = m;
      change(v);
      measure::writeCudaManifest(dir + "/" + name + ".json", v);
      return measure::KernelRef{dir + "/" + name + ".json", name, "", {}};
    };
    std::ofstream(dir + "/other-format.json") << R"({"format": "tessel-cuda-program 99"})";
    const std::vector<measure::KernelRef> kernels = {
        {dir + "/other-format.json", "x", "", {}},
        variant("bad-param", [](measure::CudaManifest& v) { v.kernels[0].params.push_back(99); }),
        variant("huge-block",
                [](measure::CudaManifest& v) {
                  v.kernels[0].block = {2048, 1, 1};
                }),
        variant("no-cubin", [](measure::CudaManifest& v) { v.cubin = "missing.cubin"; }),
        variant("other-task", [](measure::CudaManifest& v) { v.buffers[2].size = 7; }),
        {good, built[0].kernel.symbol, "", {}},
    };
    measure::RunOptions ro = o.run;
    ro.device = tessel::target::Target::Kind::Cuda;
    measure::Runner runner(ro);
    const std::vector<measure::MeasureResult> r = runner.run(rt, kernels);
    const std::vector<std::string> expected = {"format 'tessel-cuda-program 99'", "names buffer 99 of 3", "2048",
                                               "cannot read the CUBIN", "does not fit the task"};
    for (size_t i = 0; i < expected.size(); ++i) {
      QCOMPARE(r[i].error, measure::ErrorCode::Runtime);
      QVERIFY2(r[i].message.find(expected[i]) != std::string::npos, r[i].message.c_str());
    }
    // The valid one: measured where there is a GPU of that arch, else the reason.
    if (const std::string noDriver = measure::cuda::unavailableReason(); !noDriver.empty()) {
      QCOMPARE(r.back().error, measure::ErrorCode::Runtime);
      QCOMPARE(r.back().message, noDriver);
    }
    QCOMPARE(runner.workersStarted(), 1);
  }

  // Generated programs of several operators, measured and checked on the GPU.
  void measuresGeneratedPrograms_data() { testing::addGpuSampleRows(); }
  void measuresGeneratedPrograms() {
    REQUIRE_GPU(arch);
    QFETCH(QString, op);
    QFETCH(QString, shape);
    const testing::GpuSample sample = testing::sampleGpuPrograms(op, shape);
    std::vector<int64_t> dims;
    for (const QString& s : shape.split(','))
      dims.push_back(s.toLongLong());
    const task::SearchTask task = task::makeOperatorTask(op.toStdString(), dims, tessel::target::Target::cuda(arch));
    measure::ProgramMeasurer m(task, gpuOptions());
    const auto results = m.measure(sample.programs);
    QVERIFY(!results.empty());
    for (const measure::ProgramResult& p : results) {
      QVERIFY2(p.result.ok(), p.result.message.c_str());
      QCOMPARE(p.result.costs.size(), size_t(2));
      QVERIFY(p.result.minCost() > 0 && p.result.minCost() < 0.1);
    }
  }

  // An illegal address loses the GPU context: an error record, a new worker,
  // and the next kernel measured as if nothing happened.
  void lostContextGetsANewWorker() {
    REQUIRE_GPU(arch);
    const task::SearchTask task = task::makeOperatorTask("matmul", kShape, tessel::target::Target::cuda(arch));
    measure::MeasurerOptions o = gpuOptions();
    auto builder = measure::makeBuilder(task, o);
    const measure::RunTask rt = measure::makeRunTask(task, *builder);
    const auto good = builder->build({testing::sampleGpuPrograms("matmul", "64,48,40").programs.front()});
    const std::string dir = builder->workDir();
    const std::vector<measure::KernelRef> kernels = {
        handWritten(dir, "wild_store", "  *(volatile float*)(c - (1 << 28)) = 1.0f;", arch),
        good[0].kernel,
        // Never ends: c is NaN-filled, so the loop's exit is never taken.
        handWritten(dir, "spin", "  while (((volatile float*)c)[0] != 1.0f) {}", arch),
        handWritten(dir, "one_past", "  c[64 * 48] = 1.0f;", arch),
        handWritten(dir, "zeros", "  for (int i = 0; i < 64 * 48; ++i) c[i] = 0.0f;", arch),
        good[0].kernel,
    };
    measure::RunOptions ro = o.run;
    ro.device = tessel::target::Target::Kind::Cuda;
    ro.timeoutSeconds = 3;
    measure::Runner runner(ro);
    const auto r = runner.run(rt, kernels);
    QCOMPARE(r[0].error, measure::ErrorCode::Runtime);
    QVERIFY2(r[0].message.find("CUDA error 7") != std::string::npos, r[0].message.c_str());
    QVERIFY2(r[1].ok(), r[1].message.c_str());
    QCOMPARE(r[2].error, measure::ErrorCode::RunTimeout);
    QCOMPARE(r[3].error, measure::ErrorCode::Runtime);
    QVERIFY2(r[3].message.find("out of bounds of output 0 (element 3072") != std::string::npos, r[3].message.c_str());
    QCOMPARE(r[4].error, measure::ErrorCode::WrongAnswer);
    QVERIFY2(r[5].ok(), r[5].message.c_str());
    // The first worker lost its context, the second was killed on the hang.
    QCOMPARE(runner.workersStarted(), 3);
  }

  // A program compiled for another GPU is refused by name, not launched.
  void otherArchIsRefused() {
    REQUIRE_GPU(arch);
    const std::string other = arch == "sm_80" ? "sm_90" : "sm_80";
    const task::SearchTask task = task::makeOperatorTask("matmul", kShape, tessel::target::Target::cuda(other));
    measure::MeasurerOptions o = gpuOptions();
    auto builder = measure::makeBuilder(task, o);
    const measure::RunTask rt = measure::makeRunTask(task, *builder);
    const auto built = builder->build({testing::sampleGpuPrograms("matmul", "64,48,40").programs.front()});
    measure::RunOptions ro = o.run;
    ro.device = tessel::target::Target::Kind::Cuda;
    measure::Runner runner(ro);
    const auto r = runner.run(rt, {built[0].kernel});
    QCOMPARE(r[0].error, measure::ErrorCode::Runtime);
    QVERIFY2(r[0].message.find("compiled for " + other) != std::string::npos, r[0].message.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCudaRunner)
#include "test_cuda_runner.moc"
