// Fuzz target: the worker protocol as both ends read it: the bytes through a
// pipe as a length-prefixed frame (readMessage), and as JSON text, into the
// request and response parsers. A malformed message must be an IoStatus or a
// parse error with a reason, never a crash or an unbounded allocation.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "measure/worker_protocol.h"

namespace protocol = tessel::measure::protocol;

namespace {

void parseBoth(const nlohmann::json& j) {
  protocol::Request request;
  protocol::Response response;
  std::string error;
  protocol::fromJson(j, request, &error);
  protocol::fromJson(j, response, &error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Within a pipe's buffer, so one write needs no reader thread.
  if (size > 60000) return 0;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return 0;
  (void)!::write(fds[1], data, size);
  ::close(fds[1]);
  nlohmann::json message;
  std::string error;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  if (protocol::readMessage(fds[0], message, deadline, &error) == protocol::IoStatus::Ok) parseBoth(message);
  ::close(fds[0]);

  const nlohmann::json text = nlohmann::json::parse(data, data + size, nullptr, false);
  if (!text.is_discarded()) parseBoth(text);
  return 0;
}
