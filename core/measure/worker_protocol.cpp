#include "measure/worker_protocol.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

#include "support/sigpipe_blocker.h"

namespace tessel::measure::protocol {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

void setError(std::string* error, const std::string& text) {
  if (error) *error = text;
}

// Non-finite doubles have no JSON form: send them as strings.
json encodeDouble(double v) {
  if (std::isfinite(v)) return v;
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

bool decodeDouble(const json& j, double& out) {
  if (j.is_number()) {
    out = j.get<double>();
    return true;
  }
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    const double inf = std::numeric_limits<double>::infinity();
    if (s != "nan" && s != "inf" && s != "-inf") return false;
    out = s == "nan" ? std::numeric_limits<double>::quiet_NaN() : s == "inf" ? inf : -inf;
    return true;
  }
  return false;
}

// Field readers: false with a message naming the field when it is absent or mistyped.
template <typename T>
bool getField(const json& j, const char* name, T& out, std::string* error) {
  auto it = j.find(name);
  if (it == j.end()) {
    setError(error, std::string("missing field '") + name + "'");
    return false;
  }
  try {
    out = it->get<T>();
  } catch (const json::exception&) {
    setError(error, std::string("field '") + name + "' has the wrong type");
    return false;
  }
  return true;
}

bool getDouble(const json& j, const char* name, double& out, std::string* error) {
  auto it = j.find(name);
  if (it == j.end() || !decodeDouble(*it, out)) {
    setError(error, std::string("missing or invalid number '") + name + "'");
    return false;
  }
  return true;
}

}  // namespace

IoStatus writeAll(int fd, const void* data, size_t size, std::string* error) {
  support::SigpipeBlocker blocker;
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (err == EPIPE) {
        blocker.noteEpipe();
        setError(error, "the reader closed the pipe");
        return IoStatus::Eof;
      }
      setError(error, std::string("write failed: ") + std::strerror(err));
      return IoStatus::Error;
    }
    p += n;
    size -= size_t(n);
  }
  return IoStatus::Ok;
}

IoStatus readAll(int fd, void* data, size_t size, std::optional<Clock::time_point> deadline, std::string* error) {
  char* p = static_cast<char*>(data);
  const size_t wanted = size;
  while (size > 0) {
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) {
        setError(error, "timed out");
        return IoStatus::Timeout;
      }
      pollfd pfd{fd, POLLIN, 0};
      const int timeoutMs = int(std::min<int64_t>(left.count(), std::numeric_limits<int>::max()));
      const int r = ::poll(&pfd, 1, timeoutMs);
      if (r < 0) {
        if (errno == EINTR) continue;
        setError(error, std::string("poll failed: ") + std::strerror(errno));
        return IoStatus::Error;
      }
      if (r == 0) continue;  // re-check the deadline at the top
      // POLLHUP/POLLERR fall through: read() then reports EOF or the error.
    }
    const ssize_t n = ::read(fd, p, size);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      setError(error, std::string("read failed: ") + std::strerror(errno));
      return IoStatus::Error;
    }
    if (n == 0) {
      if (size == wanted) {
        setError(error, "end of file");
        return IoStatus::Eof;
      }
      setError(error,
               "end of file after " + std::to_string(wanted - size) + " of " + std::to_string(wanted) + " bytes");
      return IoStatus::Error;
    }
    p += n;
    size -= size_t(n);
  }
  return IoStatus::Ok;
}

IoStatus writeMessage(int fd, const nlohmann::json& message, std::string* error) {
  // Replace invalid UTF-8 (e.g. from a dlerror() naming an odd path) rather than throw.
  const std::string text = message.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kMaxMessageBytes) {
    setError(error, "message too large");
    return IoStatus::Error;
  }
  const auto len = uint32_t(text.size());
  std::string frame(4, '\0');
  for (int i = 0; i < 4; ++i)
    frame[size_t(i)] = char((len >> (8 * i)) & 0xffu);
  frame += text;  // one write() for header and body: fewer syscalls, no torn header
  return writeAll(fd, frame.data(), frame.size(), error);
}

IoStatus readMessage(int fd, nlohmann::json& message, std::optional<Clock::time_point> deadline, std::string* error) {
  unsigned char header[4];
  IoStatus st = readAll(fd, header, sizeof header, deadline, error);
  if (st != IoStatus::Ok) return st;
  const uint32_t len =
      uint32_t(header[0]) | uint32_t(header[1]) << 8 | uint32_t(header[2]) << 16 | uint32_t(header[3]) << 24;
  if (len > kMaxMessageBytes) {
    setError(error, "corrupt message header (length " + std::to_string(len) + ")");
    return IoStatus::Error;
  }
  std::string text(len, '\0');
  st = readAll(fd, text.data(), len, deadline, error);
  if (st == IoStatus::Eof) {
    setError(error, "end of file inside a message");
    return IoStatus::Error;
  }
  if (st != IoStatus::Ok) return st;
  try {
    message = json::parse(text);
  } catch (const json::exception& e) {
    setError(error, std::string("malformed message: ") + e.what());
    return IoStatus::Error;
  }
  return IoStatus::Ok;
}

json toJson(const Request& r) {
  return json{{"type", "measure"},
              {"device", target::kindName(r.device)},
              {"library", r.library},
              {"symbol", r.symbol},
              {"packSymbol", r.packSymbol},
              {"packedSizes", r.packedSizes},
              {"taskKey", r.taskKey},
              {"bufferSizes", r.bufferSizes},
              {"numInputs", r.numInputs},
              {"referenceLibrary", r.referenceLibrary},
              {"referenceSymbol", r.referenceSymbol},
              {"tolerance", encodeDouble(r.tolerance)},
              {"warmup", r.warmup},
              {"repeats", r.repeats},
              {"minRepeatSeconds", encodeDouble(r.minRepeatSeconds)},
              {"cacheFlush", cacheStateName(r.cacheState)},
              {"constantInputs", r.constantInputs},
              {"seed", r.seed}};
}

json toJson(const Response& r) {
  json costs = json::array();
  for (double c : r.costs)
    costs.push_back(encodeDouble(c));
  return json{{"error", int(r.error)},
              {"message", r.message},
              {"costs", std::move(costs)},
              {"maxAbsError", encodeDouble(r.maxAbsError)},
              {"workerExits", r.workerExits}};
}

bool fromJson(const json& j, Request& r, std::string* error) {
  if (!j.is_object()) {
    setError(error, "a request must be a JSON object");
    return false;
  }
  std::string type;
  if (!getField(j, "type", type, error)) return false;
  if (type != "measure") {
    setError(error, "unknown request type '" + type + "'");
    return false;
  }
  // Optional: a request without a device is the CPU's.
  r.device = target::Target::Kind::Cpu;
  if (j.contains("device")) {
    std::string device;
    if (!getField(j, "device", device, error)) return false;
    const std::optional<target::Target::Kind> kind = target::parseKind(device);
    if (!kind) {
      setError(error, "field 'device' must be cpu or cuda, not '" + device + "'");
      return false;
    }
    r.device = *kind;
  }
  // Optional fields: without them every input is passed plain.
  if (j.contains("packSymbol") &&
      !(getField(j, "packSymbol", r.packSymbol, error) && getField(j, "packedSizes", r.packedSizes, error)))
    return false;
  std::string cacheFlush;
  if (!(getField(j, "cacheFlush", cacheFlush, error) && getField(j, "constantInputs", r.constantInputs, error)))
    return false;
  if (auto state = parseCacheState(cacheFlush)) {
    r.cacheState = *state;
  } else {
    setError(error, "field 'cacheFlush' must be off, on or model, not '" + cacheFlush + "'");
    return false;
  }
  return getField(j, "library", r.library, error) && getField(j, "symbol", r.symbol, error) &&
         getField(j, "taskKey", r.taskKey, error) && getField(j, "bufferSizes", r.bufferSizes, error) &&
         getField(j, "numInputs", r.numInputs, error) && getField(j, "referenceLibrary", r.referenceLibrary, error) &&
         getField(j, "referenceSymbol", r.referenceSymbol, error) && getDouble(j, "tolerance", r.tolerance, error) &&
         getField(j, "warmup", r.warmup, error) && getField(j, "repeats", r.repeats, error) &&
         getDouble(j, "minRepeatSeconds", r.minRepeatSeconds, error) && getField(j, "seed", r.seed, error);
}

bool fromJson(const json& j, Response& r, std::string* error) {
  if (!j.is_object()) {
    setError(error, "a response must be a JSON object");
    return false;
  }
  int code = 0;
  if (!getField(j, "error", code, error) || !getField(j, "message", r.message, error) ||
      !getDouble(j, "maxAbsError", r.maxAbsError, error)) {
    return false;
  }
  if (code < int(ErrorCode::None) || code > int(ErrorCode::Unknown)) {
    setError(error, "unknown error code " + std::to_string(code));
    return false;
  }
  r.error = ErrorCode(code);
  if (j.contains("workerExits") && !getField(j, "workerExits", r.workerExits, error)) return false;
  auto it = j.find("costs");
  if (it == j.end() || !it->is_array()) {
    setError(error, "missing field 'costs'");
    return false;
  }
  r.costs.clear();
  for (const json& c : *it) {
    double v = 0;
    if (!decodeDouble(c, v)) {
      setError(error, "invalid cost");
      return false;
    }
    r.costs.push_back(v);
  }
  return true;
}

}  // namespace tessel::measure::protocol
