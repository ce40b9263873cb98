// A connection to Redis (hiredis, synchronous): commands as argument lists
// (binary-safe, so no text is ever interpolated into a command), replies
// copied into plain values. Over TCP or a Unix socket hiredis does the I/O;
// over TLS (rediss://) hiredis formats and parses and a TlsStream carries the
// bytes. One per thread: a connection is not shared.
// A lost connection is an exception; the next command connects again (and
// authenticates and selects the database again), so the caller decides
// whether to wait for Redis and what to do again.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fleet/redis_url.h"

struct redisContext;
struct redisReader;

namespace tessel::fleet {

class TlsStream;

// Redis cannot be reached, or the connection broke mid-command.
struct RedisError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RedisReply {
  enum class Type { Nil, String, Status, Integer, Array, Error };
  Type type = Type::Nil;
  std::string str;  // String, Status, Error
  long long integer = 0;
  std::vector<RedisReply> elements;

  bool isNil() const { return type == Type::Nil; }
  bool isError() const { return type == Type::Error; }
  bool isArray() const { return type == Type::Array; }
  // The element, or a Nil reply past the end.
  const RedisReply& operator[](size_t i) const;
};

class RedisClient {
 public:
  // Connects (RedisError when it cannot). `timeoutSeconds` bounds every
  // command (a blocking read must ask for less), `connectSeconds` each
  // connect: short, so a host that drops packets delays a stop by that much.
  explicit RedisClient(RedisEndpoint endpoint, double timeoutSeconds = 10, double connectSeconds = 2);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // An error reply is returned, not thrown; RedisError when the connection
  // is lost (the command may or may not have run).
  RedisReply command(const std::vector<std::string>& args);
  // The same, throwing RedisError with the reply's message for an error reply.
  RedisReply checked(const std::vector<std::string>& args);
  // Commands sent together, their replies in order (one round trip).
  std::vector<RedisReply> pipeline(const std::vector<std::vector<std::string>>& commands);

  // Connections made so far (it grows when a lost one is made again).
  int connections() const { return connections_; }
  // The server's run_id: it changes when Redis restarts (and has lost what
  // it held unless it persists).
  std::string serverRunId();
  const RedisEndpoint& endpoint() const { return endpoint_; }

 private:
  void connect();
  void drop();
  // Why a TLS server may have refused us, when we sent no client certificate ("" otherwise).
  std::string clientCertificateHint() const;
  // Drops the connection; the error to throw for it.
  RedisError lostConnection(const std::string& why);
  // `count` commands already formatted, sent and answered over TLS.
  std::vector<RedisReply> tlsPipeline(const std::string& formatted, size_t count);
  RedisEndpoint endpoint_;
  double timeoutSeconds_, connectSeconds_;
  redisContext* c_ = nullptr;       // plain TCP or a Unix socket
  std::unique_ptr<TlsStream> tls_;  // TLS: the bytes go through this,
  redisReader* reader_ = nullptr;   // and the replies are parsed by this
  int connections_ = 0;
};

}  // namespace tessel::fleet
