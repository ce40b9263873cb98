// The wire protocol between the Runner and a tessel-worker process.
//
// Each message is a 4-byte little-endian length followed by that many bytes of
// JSON text. The runner sends one request per kernel; the worker answers each
// with one response. The worker exits when its input reaches end of file.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "measure/cache_state.h"
#include "measure/measure_types.h"
#include "measure/timing_rule.h"
#include "target/target.h"

namespace tessel::measure::protocol {

// Larger messages are refused as corrupt (requests and responses are tiny).
constexpr uint32_t kMaxMessageBytes = 64u << 20;

enum class IoStatus {
  Ok,
  Eof,      // the other end closed the pipe before the first byte (or, writing, at any time)
  Timeout,  // the deadline passed first
  Error,    // a read/write error, a truncated or malformed message
};

// Writes all of `size` bytes, retrying after EINTR and partial writes. SIGPIPE
// is blocked in the calling thread meanwhile, so a dead reader gives EPIPE
// instead of killing the process.
IoStatus writeAll(int fd, const void* data, size_t size, std::string* error = nullptr);
// Reads exactly `size` bytes. Without a deadline it blocks; with one it polls.
IoStatus readAll(int fd, void* data, size_t size,
                 std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                 std::string* error = nullptr);

IoStatus writeMessage(int fd, const nlohmann::json& message, std::string* error = nullptr);
IoStatus readMessage(int fd, nlohmann::json& message,
                     std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt,
                     std::string* error = nullptr);

// One kernel to check and time (see runner.h for the meaning of the fields).
// An empty referenceLibrary skips the comparison (outputs must still be finite).
struct Request {
  // Where the kernel runs: the CPU (library is a shared library, symbol its
  // entry) or CUDA (library is a CUDA program's manifest, cuda_manifest.h);
  // "cpu" or "cuda" on the wire.
  target::Target::Kind device = target::Target::Kind::Cpu;
  std::string library;
  std::string symbol;
  std::string packSymbol;            // empty: no input is packed
  std::vector<int64_t> packedSizes;  // per input, 0: plain
  std::string taskKey;
  std::vector<int64_t> bufferSizes;
  size_t numInputs = 0;
  std::string referenceLibrary;
  std::string referenceSymbol;
  double tolerance = 1e-4;
  int warmup = kDefaultTiming.warmup;
  int repeats = kDefaultTiming.repeats;
  double minRepeatSeconds = kDefaultTiming.minRepeatSeconds;  // measure/timing_rule.h
  CacheState cacheState = CacheState::Warm;
  std::vector<size_t> constantInputs;  // input indices: the weights, for CacheState::Model
  unsigned seed = 1;
};

struct Response {
  ErrorCode error = ErrorCode::None;
  std::string message;
  std::vector<double> costs;  // seconds per kernel call, one per repeat
  double maxAbsError = 0;     // +inf when an output was not finite
  // The worker exits after this response (its GPU context is lost): the
  // runner starts another for the next kernel instead of blaming that one.
  bool workerExits = false;
};

nlohmann::json toJson(const Request& request);
nlohmann::json toJson(const Response& response);
// Return false (with a reason in *error) when a field is missing or mistyped.
bool fromJson(const nlohmann::json& j, Request& request, std::string* error);
bool fromJson(const nlohmann::json& j, Response& response, std::string* error);

}  // namespace tessel::measure::protocol
