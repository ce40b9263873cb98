// The kernel cache under the C++ builder, with the real compiler: a kernel
// built once is loaded (not compiled) the next time and computes the same,
// even when it was built in a unit with others; a
// change of flags or source is another entry; a key file that does not match
// is never trusted; a failed build is not kept; the cache trims to its size;
// TESSEL_KERNEL_CACHE chooses or switches it off.
#include <dlfcn.h>

#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "codegen/cpp_builder.h"
#include "codegen/kernel_cache.h"
#include "tessel_test.h"

using namespace tessel;
namespace fs = std::filesystem;

namespace {

const char* kScale =
    "extern \"C\" int scale(float* const* a) {\n  for (int i = 0; i < 64; ++i) a[1][i] = 3 * a[0][i];\n  return "
    "0;\n}\n";

int entries(const QString& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir.toStdString(), ec))
    n += e.path().extension() == ".so";
  return n;
}

// Builds `code` in a fresh folder under `root` with the cache at `cache`.
codegen::BuildOutput build(const QString& root, const QString& cache, const std::string& code,
                           std::vector<std::string> flags = {"-O1", "-w"}) {
  static int n = 0;
  const std::string work = (root + "/work" + QString::number(n++)).toStdString();
  fs::create_directories(work);
  codegen::BuildOptions o;
  o.workDir = work;
  o.jobs = 1;
  o.flags = std::move(flags);
  o.cacheDir = cache.toStdString();
  return codegen::buildCandidates({{code, "scale"}}, o)[0];
}

// Runs the built `scale` on 0..63: every output is three times its input.
bool computesTriple(const std::string& library) {
  void* h = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) return false;
  auto fn = reinterpret_cast<int (*)(float* const*)>(dlsym(h, "scale"));
  std::vector<float> in(64), out(64);
  for (int i = 0; i < 64; ++i)
    in[i] = float(i);
  float* args[] = {in.data(), out.data()};
  bool ok = fn && fn(args) == 0;
  for (int i = 0; ok && i < 64; ++i)
    ok = out[i] == 3.f * float(i);
  dlclose(h);
  return ok;
}

}  // namespace

class TestKernelCache : public QObject {
  Q_OBJECT

 private slots:
  void aUnitBuiltOnceIsLoadedNextTime() {
    QTemporaryDir dir;
    const QString cache = dir.filePath("cache");
    const codegen::BuildOutput first = build(dir.path(), cache, kScale);
    QVERIFY2(first.error == support::ErrorCode::None, first.message.c_str());
    QVERIFY(first.seconds > 0);
    QCOMPARE(entries(cache), 1);
    const codegen::BuildOutput again = build(dir.path(), cache, kScale);
    QVERIFY2(again.error == support::ErrorCode::None, again.message.c_str());
    QCOMPARE(again.seconds, 0.0);             // not compiled
    QVERIFY(again.library != first.library);  // its own copy, in its own folder
    QVERIFY(computesTriple(again.library));
    QCOMPARE(entries(cache), 1);
  }

  void otherFlagsOrSourceAreAnotherEntry() {
    QTemporaryDir dir;
    const QString cache = dir.filePath("cache");
    QVERIFY(build(dir.path(), cache, kScale).seconds > 0);
    QVERIFY(build(dir.path(), cache, kScale, {"-O2", "-w"}).seconds > 0);
    QVERIFY(build(dir.path(), cache, std::string(kScale) + "// another\n").seconds > 0);
    QCOMPARE(entries(cache), 3);
  }

  // Same name, other text (a collision, or a damaged file): compiled again.
  void aKeyThatDoesNotMatchIsNotTrusted() {
    QTemporaryDir dir;
    const QString cache = dir.filePath("cache");
    QVERIFY(build(dir.path(), cache, kScale).seconds > 0);
    for (const auto& e : fs::directory_iterator(cache.toStdString()))
      if (e.path().extension() == ".key") std::ofstream(e.path()) << "something else";
    const codegen::BuildOutput again = build(dir.path(), cache, kScale);
    QVERIFY(again.seconds > 0);
    QVERIFY(computesTriple(again.library));
  }

  void aFailedBuildIsNotKept() {
    QTemporaryDir dir;
    const QString cache = dir.filePath("cache");
    const codegen::BuildOutput bad = build(dir.path(), cache, "extern \"C\" int scale(float* const* a) { return }");
    QCOMPARE(bad.error, support::ErrorCode::CompileHost);
    QCOMPARE(entries(cache), 0);
  }

  // Each kernel of a unit is found alone, whatever it was built beside; the
  // unit's library is held once.
  void aKernelBuiltBesideAnotherIsFoundAlone() {
    QTemporaryDir dir;
    const QString cache = dir.filePath("cache");
    const std::string work = dir.filePath("pair").toStdString();
    fs::create_directories(work);
    codegen::BuildOptions o;
    o.workDir = work;
    o.jobs = 1;
    o.flags = {"-O1", "-w"};
    o.cacheDir = cache.toStdString();
    const std::string kDouble = "extern \"C\" int twice(float* const* a) { a[1][0] = 2 * a[0][0]; return 0; }\n";
    const std::vector<codegen::BuildOutput> pair = codegen::buildCandidates({{kScale, "scale"}, {kDouble, "twice"}}, o);
    QCOMPARE(pair[0].library, pair[1].library);  // one unit
    QCOMPARE(entries(cache), 2);
    uintmax_t links = 0;
    for (const auto& e : fs::directory_iterator(cache.toStdString()))
      if (e.path().extension() == ".so") links = std::max(links, e.hard_link_count());
    QVERIFY(links >= 2);  // one file, two keys
    const codegen::BuildOutput alone = build(dir.path(), cache, kScale);
    QVERIFY2(alone.error == support::ErrorCode::None, alone.message.c_str());
    QCOMPARE(alone.seconds, 0.0);
    QVERIFY(computesTriple(alone.library));
  }

  // A library shared by several keys counts once against the size.
  void keysThatShareALibraryCountItOnce() {
    QTemporaryDir dir;
    const std::string lib = dir.filePath("lib.so").toStdString();
    std::ofstream(lib) << std::string(1000, 'x');
    const codegen::KernelCache cache(dir.filePath("cache").toStdString(), 1500);
    QVERIFY(cache.store(std::vector<std::string>{"a", "b", "c"}, lib));  // 1000 bytes, not 3000
    for (const char* key : {"a", "b", "c"})
      QVERIFY(cache.fetch(key, dir.filePath(QString(key) + ".so").toStdString()));
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
    fs::last_write_time(dir.filePath("a.so").toStdString(), old);  // the keys share one time too
    QVERIFY(cache.store("d", lib));                                // 2000 bytes: past 1500, down to 1125
    QVERIFY(!cache.fetch("b", dir.filePath("b2.so").toStdString()));
    QVERIFY(cache.fetch("d", dir.filePath("d.so").toStdString()));
  }

  // Past its size, the least recently used entries go first.
  void theCacheTrimsTheLeastRecentlyUsed() {
    QTemporaryDir dir;
    const std::string cacheDir = dir.filePath("cache").toStdString();
    const std::string lib = dir.filePath("lib.so").toStdString();
    std::ofstream(lib) << std::string(1000, 'x');
    const codegen::KernelCache cache(cacheDir, 2800);  // trimmed to three quarters: 2100
    QVERIFY(cache.store("a", lib));
    QVERIFY(cache.store("b", lib));
    const auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
    for (const auto& e : fs::directory_iterator(cacheDir))
      if (e.path().extension() == ".so") fs::last_write_time(e.path(), old);
    QVERIFY(cache.fetch("a", dir.filePath("a.so").toStdString()));  // "a" used: "b" is the oldest
    QVERIFY(cache.store("c", lib));                                 // 3000 bytes: past 2800
    QVERIFY(!cache.fetch("b", dir.filePath("b.so").toStdString()));
    QVERIFY(cache.fetch("a", dir.filePath("a2.so").toStdString()));
    QVERIFY(cache.fetch("c", dir.filePath("c.so").toStdString()));
  }

  void theEnvironmentChoosesTheFolder() {
    qputenv("TESSEL_KERNEL_CACHE", "off");
    QCOMPARE(codegen::KernelCache::defaultDir(), std::string());
    qputenv("TESSEL_KERNEL_CACHE", "/some/where");
    QCOMPARE(codegen::KernelCache::defaultDir(), std::string("/some/where"));
    qunsetenv("TESSEL_KERNEL_CACHE");
    qputenv("XDG_CACHE_HOME", "/x");
    QCOMPARE(codegen::KernelCache::defaultDir(), std::string("/x/tessel/kernels"));
  }
};

QTEST_GUILESS_MAIN(TestKernelCache)
#include "test_kernel_cache.moc"
