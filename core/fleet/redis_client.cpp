#include "fleet/redis_client.h"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <memory>

#include "fleet/tls_stream.h"
#include "support/sigpipe_blocker.h"

namespace tessel::fleet {

namespace {

timeval toTimeval(double seconds) {
  timeval tv;
  tv.tv_sec = time_t(seconds);
  tv.tv_usec = suseconds_t((seconds - double(tv.tv_sec)) * 1e6);
  return tv;
}

RedisReply copied(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = RedisReply::Type::String;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      out.type = RedisReply::Type::Status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = RedisReply::Type::Error;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = RedisReply::Type::Integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::Array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i)
        out.elements.push_back(copied(r->element[i]));
      break;
    default:
      out.type = RedisReply::Type::Nil;
  }
  return out;
}

// The commands in Redis's wire protocol, one after the other (binary-safe:
// each argument goes with its length).
std::string formattedCommands(const std::vector<std::vector<std::string>>& commands) {
  std::string out;
  for (const std::vector<std::string>& args : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    char* formatted = nullptr;
    const int size = redisFormatCommandArgv(&formatted, int(argv.size()), argv.data(), lens.data());
    if (size < 0) throw std::bad_alloc();
    out.append(formatted, size_t(size));
    redisFreeCommand(formatted);
  }
  return out;
}

struct ReplyFree {
  void operator()(void* r) const { freeReplyObject(r); }
};

}  // namespace

const RedisReply& RedisReply::operator[](size_t i) const {
  static const RedisReply nil;
  return i < elements.size() ? elements[i] : nil;
}

RedisClient::RedisClient(RedisEndpoint endpoint, double timeoutSeconds, double connectSeconds)
    : endpoint_(std::move(endpoint)), timeoutSeconds_(timeoutSeconds), connectSeconds_(connectSeconds) {
  connect();
}

RedisClient::~RedisClient() {
  drop();
}

void RedisClient::drop() {
  if (c_) redisFree(c_);
  c_ = nullptr;
  if (reader_) redisReaderFree(reader_);
  reader_ = nullptr;
  tls_.reset();
}

std::string RedisClient::clientCertificateHint() const {
  if (!endpoint_.certFile.empty()) return "";
  return " (a Redis server asks for a client certificate unless set tls-auth-clients no: give cert=FILE&key=FILE)";
}

void RedisClient::connect() {
  drop();
  if (endpoint_.tls) {
    try {
      tls_ = std::make_unique<TlsStream>(endpoint_.host, endpoint_.port,
                                         TlsFiles{endpoint_.caFile, endpoint_.certFile, endpoint_.keyFile},
                                         std::min(connectSeconds_, timeoutSeconds_), timeoutSeconds_);
    } catch (const TlsError& e) {
      // TLS 1.2 refuses a missing client certificate in the handshake, with an alert.
      const std::string why = e.what();
      throw RedisError("cannot reach Redis at " + endpoint_.str() + ": " + why +
                       (why.find("alert") != std::string::npos ? clientCertificateHint() : ""));
    }
    reader_ = redisReaderCreate();
    if (!reader_) {
      drop();
      throw RedisError("cannot reach Redis at " + endpoint_.str() + ": out of memory");
    }
  } else {
    const timeval connectTv = toTimeval(std::min(connectSeconds_, timeoutSeconds_));
    c_ = endpoint_.socketPath.empty() ? redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, connectTv)
                                      : redisConnectUnixWithTimeout(endpoint_.socketPath.c_str(), connectTv);
    if (!c_ || c_->err) {
      const std::string why = c_ ? c_->errstr : "out of memory";
      drop();
      throw RedisError("cannot reach Redis at " + endpoint_.str() + ": " + why);
    }
    // The connect timeout is not a command timeout in hiredis 0.14.
    redisSetTimeout(c_, toTimeval(timeoutSeconds_));
  }
  ++connections_;
  auto send = [&](const std::vector<std::string>& args) {
    RedisReply r = command(args);
    if (r.isError()) {
      drop();
      throw RedisError("Redis at " + endpoint_.str() + " refused " + args[0] + ": " + r.str);
    }
  };
  if (tls_) {
    // TLS 1.3 lets the server refuse the client's certificate only after the
    // handshake: the first exchange is where that shows, so make it here.
    try {
      command({"PING"});  // any reply will do (before AUTH it is NOAUTH)
    } catch (const RedisError& e) {
      const std::string why = e.what();
      if (why.find("timed out") != std::string::npos) throw;
      throw RedisError(why + clientCertificateHint());
    }
  }
  if (!endpoint_.password.empty()) {
    if (endpoint_.user.empty())
      send({"AUTH", endpoint_.password});
    else
      send({"AUTH", endpoint_.user, endpoint_.password});
  }
  if (endpoint_.database) send({"SELECT", std::to_string(endpoint_.database)});
}

RedisReply RedisClient::command(const std::vector<std::string>& args) {
  return pipeline({args}).at(0);
}

RedisReply RedisClient::checked(const std::vector<std::string>& args) {
  RedisReply r = command(args);
  if (r.isError()) throw RedisError("Redis at " + endpoint_.str() + " refused " + args.at(0) + ": " + r.str);
  return r;
}

std::vector<RedisReply> RedisClient::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (!c_ && !tls_) connect();
  const std::string formatted = formattedCommands(commands);
  if (tls_) return tlsPipeline(formatted, commands.size());
  // hiredis writes with write(): a server gone mid-command must not kill the
  // tuner or the studio with SIGPIPE.
  support::SigpipeBlocker blocker;
  auto lost = [&](const std::string& why) {
    blocker.noteEpipe();
    return lostConnection(why);
  };
  if (redisAppendFormattedCommand(c_, formatted.data(), formatted.size()) != REDIS_OK) throw lost(c_->errstr);
  std::vector<RedisReply> replies;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    if (redisGetReply(c_, &raw) != REDIS_OK || !raw) throw lost(c_->err ? c_->errstr : "no reply");
    std::unique_ptr<void, ReplyFree> owned(raw);
    replies.push_back(copied(static_cast<redisReply*>(raw)));
  }
  return replies;
}

RedisError RedisClient::lostConnection(const std::string& why) {
  drop();
  return RedisError("lost Redis at " + endpoint_.str() + ": " + why);
}

std::vector<RedisReply> RedisClient::tlsPipeline(const std::string& formatted, size_t count) {
  std::vector<RedisReply> replies;
  try {
    tls_->writeAll(formatted.data(), formatted.size());
    char buffer[16384];
    while (replies.size() < count) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader_, &raw) != REDIS_OK)
        throw lostConnection(std::string("bad reply: ") + reader_->errstr);
      if (raw) {
        std::unique_ptr<void, ReplyFree> owned(raw);
        replies.push_back(copied(static_cast<redisReply*>(raw)));
        continue;
      }
      const size_t got = tls_->readSome(buffer, sizeof buffer);
      if (redisReaderFeed(reader_, buffer, got) != REDIS_OK)
        throw lostConnection(std::string("bad reply: ") + reader_->errstr);
    }
  } catch (const TlsError& e) {
    throw lostConnection(e.what());
  }
  return replies;
}

std::string RedisClient::serverRunId() {
  const RedisReply info = checked({"INFO", "server"});
  const size_t at = info.str.find("run_id:");
  if (at == std::string::npos) return "";
  const size_t end = info.str.find_first_of("\r\n", at);
  return info.str.substr(at + 7, end - at - 7);
}

}  // namespace tessel::fleet
