// Qt Test suite of the build-and-measure seam (measure/backend.h): the
// measurer drives its target's builder and runner, hands the runner only what
// was built, and keeps every result in its program's place; CUDA programs
// build without a GPU. Real kernels, the real compilers (NVRTC too) and real
// worker processes.
#include <QTest>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../core/gpu_samples.h"
#include "codegen/nvrtc_compiler.h"
#include "measure/backend.h"
#include "measure/cuda_driver.h"
#include "measure/cuda_manifest.h"
#include "measure/cuda_program_builder.h"
#include "measure/program_measurer.h"
#include "target/target.h"
#include "task/search_task.h"
#include "tessel_test.h"

#ifndef TESSEL_WORKER_PATH
#error "TESSEL_WORKER_PATH must name the tessel-worker executable"
#endif

using namespace tessel;

namespace {

// The CPU's own runner, noting the kernels it is given.
class NotingRunner final : public measure::ProgramRunner {
 public:
  explicit NotingRunner(measure::RunOptions o) : runner_(std::move(o)) {}
  std::vector<measure::MeasureResult> run(const measure::RunTask& task,
                                          const std::vector<measure::KernelRef>& kernels) override {
    for (const measure::KernelRef& k : kernels)
      symbols.push_back(k.symbol);
    referenceSymbol = task.reference.symbol;
    return runner_.run(task, kernels);
  }
  std::vector<std::string> symbols;
  std::string referenceSymbol;

 private:
  measure::Runner runner_;
};

measure::MeasurerOptions hostOptions() {
  measure::MeasurerOptions o = measure::measurerOptionsFor(target::parseTarget("cpu"));
  o.run.workerPath = TESSEL_WORKER_PATH;
  o.run.repeats = 1;
  o.run.minRepeatSeconds = 0.001;
  return o;
}

// Splits the matmul's first loop in two: a real schedule that replays.
std::vector<schedule::Step> splitFirstLoop(const task::SearchTask& task) {
  const int stage = int(task.dag.ops().size()) - 1;  // placeholders A and B come first
  return {schedule::SplitStep{stage, 0, {8}}};
}

}  // namespace

class TestProgramMeasurer : public QObject {
  Q_OBJECT

 private slots:
  // The measurer passes the runner the built kernels only; a program that
  // does not replay is an instantiation error in its own place.
  void onlyBuiltKernelsAreRun() {
    const task::SearchTask task = task::makeOperatorTask("matmul", {32, 32, 32}, tessel::target::Target::host());
    const measure::MeasurerOptions o = hostOptions();
    auto runner = std::make_unique<NotingRunner>(o.run);
    NotingRunner* noted = runner.get();
    measure::ProgramMeasurer m(task, measure::makeBuilder(task, o), std::move(runner));
    const std::vector<schedule::Step> broken = {schedule::SplitStep{99, 0, {4}}};
    const auto results = m.measure({{}, broken, splitFirstLoop(task)});
    QCOMPARE(results.size(), size_t(3));
    QVERIFY2(results[0].result.ok(), results[0].result.message.c_str());
    QCOMPARE(results[1].result.error, measure::ErrorCode::Instantiation);
    QVERIFY(results[1].source.empty());
    QVERIFY2(results[2].result.ok(), results[2].result.message.c_str());
    QVERIFY(!results[2].result.costs.empty());
    // Two kernels of the first batch reached the runner, checked against the naive program.
    QCOMPARE(noted->symbols, (std::vector<std::string>{"tessel_b1_0", "tessel_b1_2"}));
    QCOMPARE(noted->referenceSymbol, std::string("tessel_reference"));
  }

  // source() is the code measure() builds, but for the kernel's name.
  void sourceIsWhatIsBuilt() {
    const task::SearchTask task = task::makeOperatorTask("matmul", {32, 32, 32}, tessel::target::Target::host());
    measure::ProgramMeasurer m(task, hostOptions());
    const auto program = splitFirstLoop(task);
    const auto results = m.measure({program});
    QVERIFY2(results[0].result.ok(), results[0].result.message.c_str());
    std::string built = results[0].source;
    for (size_t at = built.find("tessel_b1_0"); at != std::string::npos; at = built.find("tessel_b1_0"))
      built.replace(at, 11, "tessel_b0_0");
    QCOMPARE(m.source(program), built);
  }

  // CUDA programs build without a GPU: CUDA C, NVRTC, a CUBIN and its launch
  // manifest per program; one that cannot be a kernel is an error result.
  void cudaProgramsBuildWithoutAGpu() {
    std::string why;
    // Only a machine without the CUDA toolkit (scripts/setup.sh expects it in /usr/local/cuda).
    if (!codegen::nvrtcAvailable(&why)) TESSEL_SKIP("nvrtc", ("NVRTC is not installed: " + why).c_str());
    const task::SearchTask task = task::makeOperatorTask("matmul", {64, 48, 40}, tessel::target::Target::cuda("sm_90"));
    measure::MeasurerOptions o = hostOptions();
    std::unique_ptr<measure::ProgramBuilder> builder = measure::makeBuilder(task, o);
    const testing::GpuSample sample = testing::sampleGpuPrograms("matmul", "64,48,40");
    std::vector<std::vector<schedule::Step>> programs = sample.programs;
    // 64 x 48 = 3072 threads in one block: over every GPU's 1024.
    programs.push_back({schedule::FuseStep{2, {0, 1}}, schedule::AnnotationStep{2, 0, schedule::Annotation::ThreadX}});
    const auto built = builder->build(programs);
    QCOMPARE(built.size(), programs.size());
    for (size_t i = 0; i + 1 < built.size(); ++i) {
      QVERIFY2(built[i].error == measure::ErrorCode::None, built[i].message.c_str());
      // The manifest reads back valid: every parameter names a buffer, the args come first.
      const measure::CudaManifest manifest = measure::readCudaManifest(built[i].kernel.library);
      QCOMPARE(manifest.arch, std::string("sm_90"));
      QVERIFY(!manifest.kernels.empty());
      QVERIFY(manifest.buffers.size() >= 3);
      QCOMPARE(manifest.buffers[2].size, int64_t(64 * 48));
      for (const auto& k : manifest.kernels)
        QVERIFY(k.registers > 0 && k.block[0] <= 1024);
      const std::string cubin = measure::readCudaCubin(built[i].kernel.library, manifest);
      QCOMPARE(cubin.substr(0, 4), std::string("\x7f"
                                               "ELF"));  // an ELF file
      QVERIFY(built[i].source.find("__global__") != std::string::npos);
    }
    QVERIFY(built.back().error != measure::ErrorCode::None);
    QVERIFY2(built.back().message.find("1024") != std::string::npos, built.back().message.c_str());
    // The reference is the naive program built for the host.
    const measure::KernelRef ref = builder->buildReference();
    QVERIFY(ref.library.ends_with(".so"));
  }

  // Measuring for a GPU where there is no driver: an error that says so, when
  // the measurer is made (never a crash).
  void cudaWithoutADriverSaysSo() {
    if (measure::cuda::unavailableReason().empty())
      QSKIP("checks the error where there is no driver; this machine has one (test_cuda_driver runs a kernel)");
    const task::SearchTask task = task::makeOperatorTask("matmul", {32, 32, 32}, tessel::target::Target::cuda("sm_90"));
    try {
      measure::ProgramMeasurer m(task, hostOptions());
      QFAIL("a cuda task got a measurer without a driver");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::string(e.what()).find("NVIDIA driver") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("cuda -arch=sm_90") != std::string::npos, e.what());
    }
    // "native" cannot be resolved without a GPU either.
    const task::SearchTask native = task::makeOperatorTask("matmul", {32, 32, 32}, tessel::target::Target::cuda());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, measure::makeBuilder(native, hostOptions()));
  }
};

QTEST_GUILESS_MAIN(TestProgramMeasurer)
#include "test_program_measurer.moc"
