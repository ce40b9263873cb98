// A TLS connection to a TCP server through OpenSSL, for a Redis that only
// speaks TLS (`rediss://`). Debian 12's hiredis (0.14) has no TLS of its own,
// so the Redis client formats and parses the protocol with hiredis and moves
// the bytes through this stream. The server's certificate is verified against
// the given CA file (or the system's store) and must name the host (DNS name
// or IP address); a client certificate is sent when one is given, as Redis
// asks for by default (`tls-auth-clients yes`). Reads and writes block, each
// bounded by the timeout; a timeout, a closed connection or a TLS error is a
// TlsError naming the cause.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

struct ssl_ctx_st;
struct ssl_st;

namespace tessel::fleet {

struct TlsError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TlsFiles {
  std::string caFile;    // PEM certificates to trust; empty: the system's store
  std::string certFile;  // PEM client certificate (chain); empty: none sent
  std::string keyFile;   // PEM private key of certFile; empty: read from certFile (ignored without certFile)
};

class TlsStream {
 public:
  // Connects (each of the host's addresses within `connectSeconds`) and
  // completes the handshake (each read or write of it within `connectSeconds`);
  // later reads and writes wait at most `timeoutSeconds` each. Signals do not
  // end a wait early.
  TlsStream(const std::string& host, int port, const TlsFiles& files, double connectSeconds, double timeoutSeconds);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  void writeAll(const char* data, size_t size);
  // Waits for at least one byte and returns how many were read (> 0).
  size_t readSome(char* data, size_t capacity);

 private:
  void setTimeout(double seconds);
  void release();
  // Whether an operation that gave `result` was cut short by a signal and is to be repeated.
  bool interrupted(int result);
  [[noreturn]] void fail(int result, const char* doing);
  int fd_ = -1;
  ssl_ctx_st* ctx_ = nullptr;
  ssl_st* ssl_ = nullptr;
};

}  // namespace tessel::fleet
