// Qt Test suite of the NVIDIA driver access (measure/cuda_driver.h). Without
// a GPU (the build machines) it checks that asking for one is a clear error;
// with one, a kernel compiled by NVRTC runs on it and computes the right numbers.
#include <QTest>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/nvrtc_compiler.h"
#include "measure/cuda_driver.h"
#include "target/target.h"
#include "tessel_test.h"

using namespace tessel;
namespace cuda = tessel::measure::cuda;

class TestCudaDriver : public QObject {
  Q_OBJECT

 private slots:
  // No driver: every entry point says why, the same way, and nothing crashes.
  void withoutAGpuTheErrorSaysWhy() {
    const std::string why = cuda::unavailableReason();
    if (why.empty())
      QSKIP("checks the answer where there is no driver; this machine has one (runsAKernelOnTheGpu runs)");
    QVERIFY2(why.find("NVIDIA driver") != std::string::npos, why.c_str());
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, cuda::driver());
    try {
      cuda::gpus();
      QFAIL("gpus() answered without a driver");
    } catch (const std::runtime_error& e) {
      QCOMPARE(std::string(e.what()), why);
    }
  }

  // With a GPU: its properties, and y = 2x + 1 computed by a kernel.
  void runsAKernelOnTheGpu() {
    if (const std::string why = cuda::unavailableReason(); !why.empty()) {
      // scripts/gpu-check.sh sets TESSEL_REQUIRE=gpu on a GPU machine: there a missing driver fails.
      TESSEL_SKIP(
          "gpu",
          "needs an NVIDIA GPU and its driver, which the build machines lack (scripts/gpu-check.sh runs it on one)");
    }
    const std::vector<cuda::GpuInfo> gpus = cuda::gpus();
    QVERIFY(!gpus.empty());
    QCOMPARE(target::parseTarget("cuda -arch=" + gpus[0].arch()).arch, gpus[0].arch());
    QVERIFY(gpus[0].memoryBytes > 0 && gpus[0].l2Bytes > 0 && gpus[0].maxThreadsPerBlock >= 1024);
    std::string why;
    if (!codegen::nvrtcAvailable(&why))
      QFAIL(("a GPU machine without NVRTC cannot compile its kernel: " + why).c_str());
    codegen::CudaCompileOptions o;
    o.arch = gpus[0].arch();
    const auto built = codegen::compileCuda({"extern \"C\" __global__ void axpb(const float* x, float* y, int n) {\n"
                                             "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                                             "  if (i < n) y[i] = 2.0f * x[i] + 1.0f;\n}\n"},
                                            o);
    QVERIFY2(built[0].error == support::ErrorCode::None, built[0].message.c_str());
    const cuda::Driver& d = cuda::driver();
    cuda::Device dev = 0;
    cuda::Context ctx = nullptr;
    d.check(d.deviceGet(&dev, 0), "cuDeviceGet");
    d.check(d.primaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    d.check(d.ctxSetCurrent(ctx), "cuCtxSetCurrent");
    cuda::Module module = nullptr;
    cuda::Function f = nullptr;
    d.check(d.moduleLoadData(&module, built[0].cubin.data()), "cuModuleLoadData");
    d.check(d.moduleGetFunction(&f, module, "axpb"), "cuModuleGetFunction");
    int n = 1000;
    std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n), 0.0f);
    for (int i = 0; i < n; ++i)
      x[size_t(i)] = float(i) * 0.5f;
    cuda::DevicePtr dx = 0, dy = 0;
    d.check(d.memAlloc(&dx, x.size() * 4), "cuMemAlloc");
    d.check(d.memAlloc(&dy, y.size() * 4), "cuMemAlloc");
    d.check(d.memcpyHtoD(dx, x.data(), x.size() * 4), "cuMemcpyHtoD");
    void* args[] = {&dx, &dy, &n};
    d.check(d.launchKernel(f, unsigned((n + 127) / 128), 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), "cuLaunchKernel");
    d.check(d.ctxSynchronize(), "cuCtxSynchronize");
    d.check(d.memcpyDtoH(y.data(), dy, y.size() * 4), "cuMemcpyDtoH");
    for (int i = 0; i < n; ++i)
      QCOMPARE(y[size_t(i)], 2.0f * x[size_t(i)] + 1.0f);
    d.memFree(dx);
    d.memFree(dy);
    d.moduleUnload(module);
    d.primaryCtxRelease(dev);
  }

  // Errors name the call and the driver's code; context-losing ones are sticky.
  void driverErrorsNameTheCall() {
    const cuda::DriverError e("cuLaunchKernel", 700, "an illegal memory access was encountered");
    QVERIFY(std::string(e.what()).find("cuLaunchKernel") != std::string::npos);
    QVERIFY(std::string(e.what()).find("700") != std::string::npos);
    QVERIFY(e.sticky());
    QVERIFY(!cuda::DriverError("cuMemAlloc", 2, "out of memory").sticky());
  }
};

QTEST_GUILESS_MAIN(TestCudaDriver)
#include "test_cuda_driver.moc"
