// The export of CUDA kernels, verified without a GPU: a cuda task's best
// programs (a one-kernel matmul, a softmax whose kernels hand temporaries to
// one another) are exported from a real database; nvcc compiles the library,
// and the same sources, compiled for the host with the emulation header, compute
// the naive program's numbers through their typed entry points.
#include <dlfcn.h>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "../core/gpu_samples.h"
#include "../core/kernel_harness.h"
#include "codegen/cuda_codegen.h"
#include "export/kernel_export.h"
#include "lower/loop_nest.h"
#include "store/database.h"
#include "store/record_store.h"
#include "store/session_store.h"
#include "store/task_rows.h"
#include "support/subprocess.h"
#include "task/search_task.h"
#include "tessel_test.h"

#ifndef TESSEL_CUDA_EMULATION_H
#error "TESSEL_CUDA_EMULATION_H must name core/codegen/cuda_emulation.h"
#endif

using namespace tessel;

namespace {

const char* const kTarget = "cuda -arch=sm_90";
const tessel::target::Target kCuda = tessel::target::Target::cuda("sm_90");
const char* const kNvcc = "/usr/local/cuda/bin/nvcc";

// A sampled GPU program of the op: the first whose kernels number `kernels` or more.
std::vector<schedule::Step> programWith(const QString& op, const QString& shape, size_t kernels) {
  const testing::GpuSample s = testing::sampleGpuPrograms(op, shape);
  for (const auto& p : s.programs)
    if (codegen::emitCudaProgram(lower::lowerState(schedule::replay(s.dag, p)), "x").kernels.size() >= kernels)
      return p;
  return {};
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

class TestCudaExport : public QObject {
  Q_OBJECT

 private slots:
  void exportsCompileAndComputeTheNaiveProgram() {
    QTemporaryDir dir;
    auto db = store::Database::open(dir.filePath("cuda.db").toStdString(), store::OpenMode::ReadWrite);
    const std::vector<std::pair<task::SearchTask, std::vector<schedule::Step>>> tasks = {
        {task::makeOperatorTask("matmul", {64, 48, 40}, kCuda), programWith("matmul", "64,48,40", 1)},
        {task::makeOperatorTask("softmax", {4, 200}, kCuda), programWith("softmax", "4,200", 2)},
    };
    const int64_t session = db->sessions().start("task", 0, 0, "{}", 2);
    for (const auto& [t, program] : tasks) {
      QVERIFY(!program.empty());
      store::RecordRow r;
      r.taskId = db->ensureTask(store::taskRowOf(t));
      r.sessionId = session;
      r.steps = schedule::serializeSteps(program);
      r.decisions = "{\"sketch\":0,\"choices\":{}}";
      r.costs = {2e-5, 2.1e-5};
      db->records().add({r});
    }
    const std::string out = dir.filePath("kernels").toStdString();
    exporter::KernelExportOptions options;
    options.compile = QFile::exists(kNvcc);
    const exporter::ExportResult res = exporter::exportKernels(*db, db->tasks(), out, options);
    QCOMPARE(res.kernels.size(), size_t(2));

    const nlohmann::json manifest = nlohmann::json::parse(readText(out + "/manifest.json"));
    QCOMPARE(manifest["target"].get<std::string>(), std::string(kTarget));
    QCOMPARE(manifest["arch"].get<std::string>(), std::string("sm_90"));
    size_t launches = 0;
    for (const auto& k : manifest["kernels"])
      launches = std::max(launches, k["launches"].size());
    QVERIFY(launches >= 2);
    const std::string header = readText(out + "/" + res.header);
    const std::string cmake = readText(out + "/CMakeLists.txt");
    QVERIFY(cmake.find("project(tessel_kernels CUDA)") != std::string::npos);
    QVERIFY(cmake.find("CUDA_ARCHITECTURES 90") != std::string::npos);

    // Under the emulation: every entry point computes what the naive program does.
    testing::KernelHarness harness;
    for (size_t i = 0; i < tasks.size(); ++i) {
      const exporter::ExportedKernel& k = res.kernels[i];
      QVERIFY2(header.find("int " + k.function + "(") != std::string::npos, header.c_str());
      const std::string so = dir.filePath(QString::fromStdString(k.function) + ".so").toStdString();
      const support::ProcessResult built = support::runProcess(
          {"c++", "-std=c++17", "-O1", "-w", "-shared", "-fPIC", "-include", TESSEL_CUDA_EMULATION_H, "-x", "c++",
           "-I" + out + "/include", out + "/" + k.source, "-o", so},
          300);
      QVERIFY2(built.ok(), built.output.substr(0, 3000).c_str());
      void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
      QVERIFY2(lib, dlerror());
      const te::ComputeDAG& dag = tasks[i].first.dag;
      const lower::LoweredFunc naive = lower::lowerState(schedule::State(dag));
      std::mt19937 rng(3);
      std::uniform_real_distribution<float> u(-1.f, 1.f);
      std::vector<std::vector<float>> inputs;
      for (size_t a = 0; a < naive.numInputs; ++a) {
        inputs.emplace_back(size_t(naive.args[a].size));
        for (float& x : inputs.back())
          x = u(rng);
      }
      const std::vector<std::vector<float>> want = harness.runNaive(dag, inputs);
      QCOMPARE(want.size(), size_t(1));
      std::vector<float> got(want[0].size(), NAN);
      int rc = -1;
      if (naive.numInputs == 2) {
        auto fn = reinterpret_cast<int (*)(const float*, const float*, float*)>(dlsym(lib, k.function.c_str()));
        QVERIFY(fn);
        rc = fn(inputs[0].data(), inputs[1].data(), got.data());
      } else {
        auto fn = reinterpret_cast<int (*)(const float*, float*)>(dlsym(lib, k.function.c_str()));
        QVERIFY(fn);
        rc = fn(inputs[0].data(), got.data());
      }
      QCOMPARE(rc, 0);
      for (size_t e = 0; e < got.size(); ++e)
        QVERIFY2(
            std::fabs(got[e] - want[0][e]) <= 1e-4f * (1 + std::fabs(want[0][e])),
            qPrintable(QString("%1 element %2: %3 vs %4").arg(k.function.c_str()).arg(e).arg(got[e]).arg(want[0][e])));
      dlclose(lib);
    }

    // The library as a user gets it, built by nvcc for sm_90.
    if (!options.compile)
      TESSEL_SKIP("nvcc", "the sources run under the emulation; nvcc is not installed to build the library");
    QCOMPARE(res.library, std::string("lib/libtessel_kernels.so"));
    const support::ProcessResult nm = support::runProcess({"nm", "-D", "--defined-only", out + "/" + res.library}, 60);
    QVERIFY2(nm.ok(), nm.output.c_str());
    for (const exporter::ExportedKernel& k : res.kernels)
      QVERIFY2(nm.output.find(k.function) != std::string::npos, nm.output.c_str());
  }

  // `db show --code` of a cuda task is its CUDA C.
  void bestSourceIsCuda() {
    QTemporaryDir dir;
    auto db = store::Database::open(dir.filePath("cuda.db").toStdString(), store::OpenMode::ReadWrite);
    const task::SearchTask t = task::makeOperatorTask("matmul", {64, 48, 40}, kCuda);
    store::RecordRow r;
    r.taskId = db->ensureTask(store::taskRowOf(t));
    r.sessionId = db->sessions().start("task", 0, 0, "{}", 1);
    r.steps = schedule::serializeSteps(programWith("matmul", "64,48,40", 1));
    r.decisions = "{\"sketch\":0,\"choices\":{}}";
    r.costs = {1e-5};
    db->records().add({r});
    const std::string code = exporter::bestKernelSource(*db, db->tasks().at(0));
    QVERIFY2(code.find("__global__") != std::string::npos, code.c_str());
    QVERIFY2(code.find("cuda -arch=sm_90") != std::string::npos, code.c_str());
  }
};

QTEST_GUILESS_MAIN(TestCudaExport)
#include "test_cuda_export.moc"
