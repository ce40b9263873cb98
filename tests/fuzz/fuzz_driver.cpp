// The main of a fuzz target where libFuzzer is not linked (a GCC build, CI):
// runs every corpus input, then random mutations of them (bit flips, bytes
// set, inserted, erased, duplicated, truncated, inputs spliced) until the time
// or run budget is spent. Not coverage-guided: scripts/fuzz.sh builds the same
// targets with clang's libFuzzer for that. Accepts libFuzzer's flags that CTest
// uses, so one command line fits both:
//   fuzz_X [-max_total_time=S] [-runs=N] [-seed=N] [-max_len=N] CORPUS_DIR_OR_FILE...
// A crash writes the input to ./crash-<target>-<hash> before the signal goes on.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input in flight, for the crash handler.
const uint8_t* gInput = nullptr;
size_t gInputSize = 0;
char gCrashPath[512] = "crash-input";

void onCrash(int sig) {
  const int fd = ::open(gCrashPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    if (gInput) (void)!::write(fd, gInput, gInputSize);
    ::close(fd);
  }
  const char note[] = "fuzz driver: crashed; the input is in ";
  (void)!::write(STDERR_FILENO, note, sizeof note - 1);
  (void)!::write(STDERR_FILENO, gCrashPath, std::strlen(gCrashPath));
  (void)!::write(STDERR_FILENO, "\n", 1);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

uint64_t fnv1a(const std::vector<uint8_t>& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : bytes)
    h = (h ^ b) * 1099511628211ull;
  return h;
}

void runOne(const std::string& target, const std::vector<uint8_t>& input) {
  std::snprintf(gCrashPath, sizeof gCrashPath, "crash-%s-%016llx", target.c_str(),
                static_cast<unsigned long long>(fnv1a(input)));
  gInput = input.data();
  gInputSize = input.size();
  LLVMFuzzerTestOneInput(input.data(), input.size());
  gInput = nullptr;
}

std::vector<uint8_t> readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One random edit (or a few) of `in`, at most maxLen bytes.
std::vector<uint8_t> mutate(std::vector<uint8_t> in, const std::vector<std::vector<uint8_t>>& corpus,
                            std::mt19937_64& rng, size_t maxLen) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : size_t(0); };
  static const uint8_t kInteresting[] = {0, 1, 0x7f, 0x80, 0xff, 0xfe, '0', '9', '-', '[', ']', '{', '}', '"', ','};
  const int edits = 1 + int(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 8) {
      case 0:  // flip a bit
        if (!in.empty()) in[pick(in.size())] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1:  // set a byte to an interesting value
        if (!in.empty()) in[pick(in.size())] = kInteresting[pick(sizeof kInteresting)];
        break;
      case 2:  // set a random byte
        if (!in.empty()) in[pick(in.size())] = uint8_t(rng());
        break;
      case 3: {  // insert random bytes
        const size_t at = pick(in.size() + 1), n = 1 + pick(8);
        std::vector<uint8_t> bytes(n);
        for (uint8_t& b : bytes)
          b = uint8_t(rng());
        in.insert(in.begin() + long(at), bytes.begin(), bytes.end());
        break;
      }
      case 4: {  // erase a range
        if (in.empty()) break;
        const size_t at = pick(in.size()), n = 1 + pick(std::min<size_t>(in.size() - at, 64));
        in.erase(in.begin() + long(at), in.begin() + long(at + n));
        break;
      }
      case 5: {  // duplicate a range
        if (in.empty()) break;
        const size_t at = pick(in.size()), n = 1 + pick(std::min<size_t>(in.size() - at, 64));
        std::vector<uint8_t> range(in.begin() + long(at), in.begin() + long(at + n));
        in.insert(in.begin() + long(pick(in.size() + 1)), range.begin(), range.end());
        break;
      }
      case 6:  // truncate
        in.resize(pick(in.size() + 1));
        break;
      case 7: {  // splice with another input
        const std::vector<uint8_t>& other = corpus[pick(corpus.size())];
        if (other.empty()) break;
        const size_t cut = pick(in.size() + 1), from = pick(other.size());
        in.resize(cut);
        in.insert(in.end(), other.begin() + long(from), other.end());
        break;
      }
    }
  }
  if (in.size() > maxLen) in.resize(maxLen);
  return in;
}

bool flag(const std::string& arg, const char* name, long long& value) {
  const std::string prefix = std::string("-") + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  value = std::atoll(arg.c_str() + prefix.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  long long seconds = 10, runs = -1, seed = 1, maxLen = 1 << 20;
  std::vector<std::vector<uint8_t>> corpus;
  const std::string target = std::filesystem::path(argv[0]).filename().string();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (flag(arg, "max_total_time", seconds) || flag(arg, "runs", runs) || flag(arg, "seed", seed) ||
        flag(arg, "max_len", maxLen))
      continue;
    if (arg.rfind("-", 0) == 0) continue;  // other libFuzzer flags mean nothing here
    const std::filesystem::path p(arg);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) corpus.push_back(readFile(e.path()));
    } else if (std::filesystem::is_regular_file(p)) {
      corpus.push_back(readFile(p));
    } else {
      std::fprintf(stderr, "%s: no corpus at %s\n", target.c_str(), arg.c_str());
      return 2;
    }
  }
  if (corpus.empty()) corpus.emplace_back();
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL})
    ::signal(sig, onCrash);

  const auto start = std::chrono::steady_clock::now();
  long long executed = 0;
  for (const auto& input : corpus) {
    runOne(target, input);
    ++executed;
  }
  std::mt19937_64 rng{static_cast<uint64_t>(seed)};
  while (runs < 0 || executed < runs) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (runs < 0 && elapsed >= double(seconds)) break;
    runOne(target, mutate(corpus[rng() % corpus.size()], corpus, rng, size_t(maxLen)));
    ++executed;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %lld inputs (%zu from the corpus) in %.1f s, no crash\n", target.c_str(), executed, corpus.size(),
              elapsed);
  return 0;
}
