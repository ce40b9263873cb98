#include "frontend/conformance.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx_import.h"
#include "frontend/onnx_import_options.h"
#include "graph/op_registry.h"
#include "runtime/graph_executor.h"

namespace fs = std::filesystem;

namespace tessel::frontend {

const char* caseStatusName(CaseStatus s) {
  switch (s) {
    case CaseStatus::Pass:
      return "pass";
    case CaseStatus::Fail:
      return "fail";
    case CaseStatus::Unsupported:
      return "unsupported";
  }
  return "fail";
}

namespace {

using graph::DType;

std::string shapeText(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

std::string floatText(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

// prefix_0.pb, prefix_1.pb, ... in index order.
std::vector<LoadedTensor> loadTensors(const fs::path& dir, const std::string& prefix) {
  std::map<int, fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(prefix + "_", 0) != 0 || e.path().extension() != ".pb") continue;
    const std::string index = f.substr(prefix.size() + 1, f.size() - prefix.size() - 4);
    if (index.empty() || !std::all_of(index.begin(), index.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    files[std::stoi(index)] = e.path();
  }
  std::vector<LoadedTensor> out;
  for (const auto& [i, path] : files)
    out.push_back(loadTensorProto(path.string()));
  return out;
}

bool isIntegerDType(DType t) {
  return t == DType::Int64 || t == DType::Int32 || t == DType::Bool;
}

class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The expected tensor of each graph input / output: by name where the test
// data names them, else by position.
const LoadedTensor* match(const std::vector<LoadedTensor>& data, const std::string& name, size_t position) {
  for (const LoadedTensor& t : data)
    if (t.name == name) return &t;
  if (position < data.size() && data[position].name.empty()) return &data[position];
  return nullptr;
}

// A constant integer or boolean output against the expected values, exactly.
std::string compareInts(const std::string& name, const graph::Initializer& got, const LoadedTensor& want) {
  if (got.info.shape != want.shape)
    return "output '" + name + "' has shape " + shapeText(got.info.shape) + ", expected " + shapeText(want.shape);
  const bool boolean = want.dtype == DType::Bool;
  for (size_t i = 0; i < want.ints.size() && i < got.ints.size(); ++i)
    if (boolean ? (got.ints[i] != 0) != (want.ints[i] != 0) : got.ints[i] != want.ints[i])
      return "output '" + name + "' differs at index " + std::to_string(i) + ": got " + std::to_string(got.ints[i]) +
             ", expected " + std::to_string(want.ints[i]);
  if (got.ints.size() != want.ints.size()) return "output '" + name + "' holds another number of values";
  return "";
}

std::string compare(const std::string& name, const runtime::HostTensor& got, const LoadedTensor& want,
                    const ConformanceOptions& o) {
  if (got.shape != want.shape)
    return "output '" + name + "' has shape " + shapeText(got.shape) + ", expected " + shapeText(want.shape);
  if (got.data.size() != want.floats.size())
    return "output '" + name + "' holds " + std::to_string(got.data.size()) + " values, expected " +
           std::to_string(want.floats.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.data.size(); ++i) {
    const double g = got.data[i], w = want.floats[i];
    bool ok;
    if (std::isnan(w) || std::isnan(g))
      ok = std::isnan(w) && std::isnan(g);
    else if (std::isinf(w) || std::isinf(g))
      ok = g == w;
    else
      ok = std::fabs(g - w) <= o.atol + o.rtol * std::fabs(w);
    if (!ok && bad++ == 0) first = i;
  }
  if (!bad) return "";
  return "output '" + name + "': " + std::to_string(bad) + " of " + std::to_string(got.data.size()) +
         " values differ; first at index " + std::to_string(first) + ": got " + floatText(got.data[first]) +
         ", expected " + floatText(want.floats[first]);
}

void runCase(const fs::path& dir, const ConformanceOptions& options) {
  const fs::path data = dir / "test_data_set_0";
  // The test data is read once the model's inputs and outputs are known to
  // be tensors Tessel handles (sequences' data are not TensorProtos).
  auto load = [&](const std::string& prefix) {
    try {
      return loadTensors(data, prefix);
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(std::string("test data: ") + e.what());
    }
  };
  std::vector<LoadedTensor> inputs, outputs;

  std::map<std::string, runtime::HostTensor> feeds;
  ImportOptions io;
  io.minOpset = 1;
  io.maxOpset = 17;
  std::set<std::string> loadTime;  // inputs read when the model is loaded
  io.beforeShapes = [&](graph::Graph& g) {
    inputs = load("input");
    for (const graph::Node& n : g.nodes)
      if (const graph::OpDef* def = graph::findOp(n.op))
        for (size_t i : def->loadTimeInputs)
          if (i < n.inputs.size() && !n.inputs[i].empty()) loadTime.insert(n.inputs[i]);
    std::vector<graph::ValueInfo> kept;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      graph::ValueInfo v = g.inputs[i];
      const LoadedTensor* t = match(inputs, v.name, i);
      if (!t) throw std::runtime_error("no test data for input '" + v.name + "'");
      if (t->dtype != v.dtype)
        throw std::runtime_error("input '" + v.name + "' is " + graph::dtypeName(v.dtype) + " but its data is " +
                                 graph::dtypeName(t->dtype));
      if (v.dtype == DType::Float64)
        throw UnsupportedError("input '" + v.name + "' is float64; Tessel computes in float32");
      v.shape = t->shape;  // the data's shape (symbolic dimensions were taken as 1)
      g.values[v.name] = v;
      if (isIntegerDType(v.dtype)) {
        graph::Initializer init;
        init.info = v;
        init.ints = t->ints;
        g.initializers[v.name] = std::move(init);
      } else if (loadTime.count(v.name)) {
        graph::Initializer init;
        init.info = v;
        init.data = t->floats;
        g.initializers[v.name] = std::move(init);
      } else {
        feeds[v.name] = runtime::HostTensor{t->shape, t->floats};
        kept.push_back(v);
      }
    }
    g.inputs = kept;
  };
  graph::Graph g;
  try {
    g = importOnnxBytes(
        [&] {
          std::FILE* f = std::fopen((dir / "model.onnx").c_str(), "rb");
          if (!f) throw std::runtime_error("cannot read " + (dir / "model.onnx").string());
          std::string bytes;
          char buf[65536];
          for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
            bytes.append(buf, n);
          std::fclose(f);
          return bytes;
        }(),
        "model.onnx", io);
    graph::foldConstants(g);  // Shape and other constant subgraphs, as before tuning
  } catch (const UnsupportedError& e) {
    throw Unsupported(e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("import: ") + e.what());
  }

  try {
    outputs = load("output");
  } catch (const UnsupportedError& e) {
    throw Unsupported(e.what());
  }
  if (outputs.empty()) throw std::runtime_error("no expected outputs in " + data.string());
  for (const auto& [name, v] : g.values)
    if (std::find(v.shape.begin(), v.shape.end(), 0) != v.shape.end() &&
        !(g.isInitializer(name) && (g.initializers.at(name).isInt() || loadTime.count(name))))  // empty axes, roi
      throw Unsupported("value '" + name + "' has shape " + shapeText(v.shape) +
                        "; zero-size tensors are not supported");

  // Integer and boolean outputs: those known at load time (folded into
  // constants) are compared here; booleans computed by kernels come back as
  // 0 / 1 floats. Integers computed at run time are not supported.
  std::vector<std::pair<std::string, LoadedTensor>> expected;  // outputs the executor computes
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string& name = g.outputs[i];
    const LoadedTensor* t = match(outputs, name, i);
    if (!t) throw std::runtime_error("no expected data for output '" + name + "'");
    const DType ours = g.value(name).dtype;
    if (t->dtype == DType::Other || t->dtype == DType::Float64 || ours == DType::Float64)
      throw Unsupported("output '" + name + "' is not float32, an integer or bool");
    if (isIntegerDType(t->dtype) != isIntegerDType(ours))
      throw std::runtime_error("output '" + name + "' is " + graph::dtypeName(ours) + ", expected " +
                               graph::dtypeName(t->dtype));
    LoadedTensor want = *t;
    if (isIntegerDType(ours)) {
      auto init = g.initializers.find(name);
      if (init != g.initializers.end() && init->second.hasData()) {
        const std::string diff = compareInts(name, init->second, want);
        if (!diff.empty()) throw std::runtime_error(diff);
        continue;
      }
      if (ours != DType::Bool)
        throw Unsupported(std::string("output '") + name + "' is " + graph::dtypeName(ours) +
                          " computed at run time; the executor computes float32");
      want.floats.assign(want.ints.begin(), want.ints.end());
    }
    expected.emplace_back(name, std::move(want));
  }
  if (expected.empty()) return;

  graph::Graph run = g;
  run.outputs.clear();
  for (const auto& [name, want] : expected)
    run.outputs.push_back(name);
  std::map<std::string, runtime::HostTensor> got;
  try {
    runtime::ExecutorOptions eo;
    eo.jobs = options.jobs;
    runtime::GraphExecutor exec(run, eo);
    got = exec.run(feeds);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("executor: ") + e.what());
  }
  for (const auto& [name, want] : expected) {
    auto it = got.find(name);
    if (it == got.end()) throw std::runtime_error("the executor returned no output '" + name + "'");
    std::string diff = compare(name, it->second, want, options);
    if (!diff.empty()) throw std::runtime_error(diff);
  }
}

CaseResult runInProcess(const std::string& dir, const ConformanceOptions& options) {
  CaseResult r;
  r.dir = dir;
  r.name = fs::path(dir).filename().string();
  if (r.name.empty()) r.name = fs::path(dir).parent_path().filename().string();
  const auto start = std::chrono::steady_clock::now();
  try {
    runCase(fs::path(dir), options);
    r.status = CaseStatus::Pass;
  } catch (const Unsupported& e) {
    r.status = CaseStatus::Unsupported;
    r.reason = e.what();
  } catch (const std::exception& e) {
    r.status = CaseStatus::Fail;
    r.reason = e.what();
  } catch (...) {
    r.status = CaseStatus::Fail;
    r.reason = "unknown exception";
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// A case running in a forked child; the child writes "<status digit><reason>" to the pipe.
struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  std::chrono::steady_clock::time_point start;
  bool timedOut = false;
};

bool startChild(Child& c, const std::string& dir, const ConformanceOptions& options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return false;
  }
  if (pid == 0) {
    setpgid(0, 0);  // its compilers die with it on a timeout
    close(fds[0]);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);  // keep the runner's stdout (--json) clean
    CaseResult r = runInProcess(dir, options);
    std::string msg = std::to_string(int(r.status)) + r.reason;
    const char* p = msg.data();
    size_t left = msg.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= size_t(n);
    }
    _exit(0);
  }
  setpgid(pid, pid);
  close(fds[1]);
  c.pid = pid;
  c.fd = fds[0];
  c.start = std::chrono::steady_clock::now();
  return true;
}

CaseResult finishChild(Child& c, const std::string& dir) {
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  CaseResult r;
  r.dir = dir;
  r.name = fs::path(dir).filename().string();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.start).count();
  if (c.timedOut) {
    r.status = CaseStatus::Fail;
    r.reason = "timed out after " + floatText(r.seconds) + " s";
  } else if (WIFSIGNALED(status)) {
    r.status = CaseStatus::Fail;
    r.reason = "crashed: signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  } else if (c.buffer.empty() || c.buffer[0] < '0' || c.buffer[0] > '2') {
    r.status = CaseStatus::Fail;
    r.reason = "the case's process exited without a result (status " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    r.status = CaseStatus(c.buffer[0] - '0');
    r.reason = c.buffer.substr(1);
  }
  return r;
}

}  // namespace

CaseResult runConformanceCase(const std::string& dir, const ConformanceOptions& options) {
  ConformanceOptions one = options;
  one.parallel = 1;
  return runConformance({dir}, one).cases.at(0);
}

std::vector<std::string> findConformanceCases(const std::vector<std::string>& paths, const std::string& filter) {
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) throw graph::GraphError("'" + p + "' is not a folder");
    std::vector<std::string> found;
    if (fs::exists(fs::path(p) / "model.onnx", ec)) {
      found.push_back(p);
    } else {
      for (const fs::directory_entry& e : fs::directory_iterator(p, ec))
        if (e.is_directory(ec) && fs::exists(e.path() / "model.onnx", ec)) found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) throw graph::GraphError("'" + p + "' holds no ONNX test case (no model.onnx in it or below)");
    }
    for (const std::string& f : found) {
      std::string name = fs::path(f).filename().string();
      if (name.empty()) name = fs::path(f).parent_path().filename().string();
      if (filter.empty() || name.find(filter) != std::string::npos) out.push_back(f);
    }
  }
  return out;
}

ConformanceSummary runConformance(const std::vector<std::string>& caseDirs, const ConformanceOptions& options,
                                  const std::function<void(const CaseResult&)>& onCase) {
  ConformanceSummary s;
  std::vector<CaseResult> results(caseDirs.size());
  std::vector<bool> done(caseDirs.size(), false);
  size_t reported = 0;
  auto complete = [&](size_t i, CaseResult r) {
    results[i] = std::move(r);
    done[i] = true;
    while (reported < results.size() && done[reported]) {
      if (onCase) onCase(results[reported]);
      ++reported;
    }
  };

  if (!options.isolate) {
    for (size_t i = 0; i < caseDirs.size(); ++i)
      complete(i, runInProcess(caseDirs[i], options));
  } else {
    const size_t width = size_t(std::max(1, options.parallel));
    std::vector<Child> running;
    size_t next = 0;
    while (next < caseDirs.size() || !running.empty()) {
      while (next < caseDirs.size() && running.size() < width) {
        Child c;
        c.index = next;
        if (startChild(c, caseDirs[next], options)) {
          running.push_back(c);
        } else {  // no fork: run it here
          complete(next, runInProcess(caseDirs[next], options));
        }
        ++next;
      }
      if (running.empty()) continue;
      std::vector<pollfd> fds;
      for (const Child& c : running)
        fds.push_back({c.fd, POLLIN, 0});
      poll(fds.data(), nfds_t(fds.size()), 200);
      for (size_t k = running.size(); k-- > 0;) {
        Child& c = running[k];
        bool finished = false;
        if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
          char buf[4096];
          ssize_t n = read(c.fd, buf, sizeof buf);
          if (n > 0)
            c.buffer.append(buf, size_t(n));
          else if (n == 0 || errno != EINTR)
            finished = true;
        }
        const double age = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.start).count();
        if (!finished && age > options.timeoutSeconds) {
          kill(-c.pid, SIGKILL);
          kill(c.pid, SIGKILL);
          c.timedOut = true;
          finished = true;
        }
        if (finished) {
          const size_t index = c.index;
          CaseResult r = finishChild(c, caseDirs[index]);
          running.erase(running.begin() + std::ptrdiff_t(k));
          complete(index, std::move(r));
        }
      }
    }
  }

  s.cases = std::move(results);
  for (const CaseResult& r : s.cases) {
    if (r.status == CaseStatus::Pass)
      ++s.pass;
    else if (r.status == CaseStatus::Fail)
      ++s.fail;
    else
      ++s.unsupported;
  }
  return s;
}

}  // namespace tessel::frontend
