// What every Qt Test suite of Tessel includes after <QtTest>: its main
// (QTEST_MAIN and the others, unchanged in the test files) reports a suite
// whose every case skipped as skipped (exit 77, CTest's SKIP_RETURN_CODE),
// gives each test function as long as CTest gives the suite (instead of Qt's
// 300 s), and TESSEL_SKIP turns a missing dependency into a failure when
// TESSEL_REQUIRE names it:
//   TESSEL_REQUIRE=gpu,redis,libtorch   those needs must be met
//   TESSEL_REQUIRE=all                  every need, and no skip of any kind
// Needs: gpu, nvrtc, nvcc, redis, libtorch, xgboost, onednn, openblas, onnx,
// onnx-testdata, seccomp (TESSEL_REQUIRE_GPU=1, the older switch, is gpu).
#pragma once

#include <QtTest>
#include <string>
#include <vector>

namespace tessel::testing {

// True when TESSEL_REQUIRE (or TESSEL_REQUIRE_GPU, for "gpu") names `need`.
bool required(const char* need);

std::string requiredMessage(const char* need, const char* why);

// Runs the suite with a copy of its text log, and reads it back afterwards.
class SuiteRun {
 public:
  SuiteRun();
  ~SuiteRun();
  // The arguments for QTest::qExec: the application's, less what it took.
  void prepare(int argc, char** argv);
  int argc() const { return int(args_.size()) - 1; }
  char** argv() { return args_.data(); }
  // Qt Test's exit code, or 77 when every case skipped, or 1 when a case
  // skipped under TESSEL_REQUIRE=all.
  int finish(int qtExitCode);

 private:
  std::vector<std::string> storage_;
  std::vector<char*> args_;
  std::string log_;  // empty: the caller chose its own -o
};

}  // namespace tessel::testing

// QSKIP for a missing dependency: a failure instead where TESSEL_REQUIRE
// names it.
#define TESSEL_SKIP(need, why)                                                                 \
  do {                                                                                         \
    if (::tessel::testing::required(need)) {                                                   \
      QTest::qFail(::tessel::testing::requiredMessage(need, why).c_str(), __FILE__, __LINE__); \
      return;                                                                                  \
    }                                                                                          \
    QSKIP(why);                                                                                \
  } while (false)

// Qt 6's QTEST_MAIN, QTEST_GUILESS_MAIN and QTEST_APPLESS_MAIN all expand
// QTEST_MAIN_WRAPPER: the same main, with the run wrapped.
#ifndef QTEST_MAIN_WRAPPER
#error "tessel_test.h: this Qt has no QTEST_MAIN_WRAPPER to wrap"
#endif
#undef QTEST_MAIN_WRAPPER
#define QTEST_MAIN_WRAPPER(TestObject, ...)                                         \
  int main(int argc, char* argv[]) {                                                \
    ::tessel::testing::SuiteRun tesselRun;                                          \
    QT_PREPEND_NAMESPACE(QTest::Internal::callInitMain)<TestObject>();              \
    __VA_ARGS__                                                                     \
    TestObject tc;                                                                  \
    QTEST_SET_MAIN_SOURCE_PATH                                                      \
    tesselRun.prepare(argc, argv);                                                  \
    return tesselRun.finish(QTest::qExec(&tc, tesselRun.argc(), tesselRun.argv())); \
  }
