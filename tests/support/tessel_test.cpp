#include "tessel_test.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tessel::testing {

namespace {

std::vector<std::string> requiredNeeds() {
  std::vector<std::string> needs;
  std::stringstream list(std::getenv("TESSEL_REQUIRE") ? std::getenv("TESSEL_REQUIRE") : "");
  for (std::string n; std::getline(list, n, ',');)
    if (!n.empty()) needs.push_back(n);
  return needs;
}

bool requiresAll() {
  for (const std::string& n : requiredNeeds())
    if (n == "all") return true;
  return false;
}

}  // namespace

bool required(const char* need) {
  if (std::strcmp(need, "gpu") == 0 && std::getenv("TESSEL_REQUIRE_GPU")) return true;
  for (const std::string& n : requiredNeeds())
    if (n == need || n == "all") return true;
  return false;
}

std::string requiredMessage(const char* need, const char* why) {
  return std::string("TESSEL_REQUIRE names ") + need + ", which this machine or build lacks: " + why;
}

SuiteRun::SuiteRun() {
  // CTest's TIMEOUT bounds the suite; Qt's own 300 s per function would
  // otherwise fail a long case on a slow or shared machine.
  setenv("QTEST_FUNCTION_TIMEOUT", "86400000", 0);
}

void SuiteRun::prepare(int argc, char** argv) {
  for (int i = 0; i < argc; ++i)
    storage_.emplace_back(argv[i]);
  bool ownLog = false;
  for (int i = 1; i < argc; ++i)
    ownLog |= std::strcmp(argv[i], "-o") == 0;
  if (!ownLog) {
    char path[] = "/tmp/tessel-test-log-XXXXXX";
    const int fd = mkstemp(path);
    if (fd >= 0) {
      close(fd);
      log_ = path;
      // The usual text on standard output, and a copy to read back.
      storage_.insert(storage_.begin() + 1, {"-o", "-,txt", "-o", log_ + ",txt"});
    }
  }
  for (std::string& s : storage_)
    args_.push_back(s.data());
  args_.push_back(nullptr);
}

SuiteRun::~SuiteRun() {
  if (!log_.empty()) std::remove(log_.c_str());
}

int SuiteRun::finish(int qtExitCode) {
  if (log_.empty()) return qtExitCode;
  std::ifstream f(log_);
  int passed = 0, skipped = 0;
  std::string firstSkip;
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("PASS   : ", 0) == 0 && line.find("::initTestCase()") == std::string::npos &&
        line.find("::cleanupTestCase()") == std::string::npos)
      ++passed;
    if (line.rfind("SKIP   : ", 0) == 0 && skipped++ == 0) firstSkip = line;
  }
  if (skipped > 0 && requiresAll()) {
    std::printf("TESSEL_REQUIRE=all: %d case(s) skipped, the first: %s\n", skipped, firstSkip.c_str());
    return qtExitCode != 0 ? qtExitCode : 1;
  }
  if (qtExitCode != 0) return qtExitCode;
  if (passed == 0 && skipped > 0) {
    std::printf("Every case of this suite skipped (%d): reported to CTest as skipped (exit 77)\n", skipped);
    return 77;
  }
  return 0;
}

}  // namespace tessel::testing
