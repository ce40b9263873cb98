#include "fleet/tls_stream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "support/sigpipe_blocker.h"

namespace tessel::fleet {

namespace {

// OpenSSL's queued errors of this thread, oldest first, as one line.
std::string openSslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    // "error:0A000086:SSL routines::certificate verify failed": keep the reason.
    const char* reason = std::strrchr(buf, ':');
    out += (out.empty() ? "" : "; ") + std::string(reason && reason[1] ? reason + 1 : buf);
  }
  return out;
}

bool isIpAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// A TCP connection to one of the host's addresses within `seconds`.
int connectTcp(const std::string& host, int port, double seconds) {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    throw TlsError("cannot resolve '" + host + "': " + gai_strerror(rc));
  std::string why = "no address";
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int err = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      // Wait for the connect, through signals (Ctrl-C in the CLI), for what is left of `seconds`.
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      pollfd p = {fd, POLLOUT, 0};
      int ready = -1;
      do {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        ready = ::poll(&p, 1, int(std::max<long long>(0, left.count())));
      } while (ready < 0 && errno == EINTR);
      socklen_t len = sizeof err;
      if (ready == 0)
        err = ETIMEDOUT;
      else if (ready < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    }
    if (err != 0) {
      why = std::strerror(err);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd < 0) throw TlsError(why);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // commands are small
  return fd;
}

}  // namespace

TlsStream::TlsStream(const std::string& host, int port, const TlsFiles& files, double connectSeconds,
                     double timeoutSeconds) {
  ERR_clear_error();
  ctx_ = SSL_CTX_new(TLS_client_method());
  if (!ctx_) throw TlsError("cannot set up TLS: " + openSslErrors());
  try {
    SSL_CTX_set_min_proto_version(ctx_, TLS1_2_VERSION);
    // An encrypted key must not make OpenSSL ask for its passphrase on the terminal.
    SSL_CTX_set_default_passwd_cb(ctx_, [](char*, int, int, void*) { return 0; });
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (files.caFile.empty() ? SSL_CTX_set_default_verify_paths(ctx_) != 1
                             : SSL_CTX_load_verify_locations(ctx_, files.caFile.c_str(), nullptr) != 1)
      throw TlsError("cannot read the CA certificates " +
                     (files.caFile.empty() ? "of the system" : "in '" + files.caFile + "'") + ": " + openSslErrors());
    if (!files.certFile.empty()) {
      const std::string key = files.keyFile.empty() ? files.certFile : files.keyFile;
      if (SSL_CTX_use_certificate_chain_file(ctx_, files.certFile.c_str()) != 1)
        throw TlsError("cannot read the client certificate '" + files.certFile + "': " + openSslErrors());
      if (SSL_CTX_use_PrivateKey_file(ctx_, key.c_str(), SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ctx_) != 1)
        throw TlsError("cannot use the client key '" + key + "': " + openSslErrors() +
                       " (a key protected by a passphrase is not supported: decrypt it with openssl pkey)");
    }
    fd_ = connectTcp(host, port, connectSeconds);
    ssl_ = SSL_new(ctx_);
    if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) throw TlsError("cannot set up TLS: " + openSslErrors());
    // The certificate must name the host we asked for, not just any host the CA vouches for.
    const bool nameSet =
        isIpAddress(host) ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.c_str()) == 1
                          : SSL_set_tlsext_host_name(ssl_, host.c_str()) == 1 && SSL_set1_host(ssl_, host.c_str()) == 1;
    if (!nameSet) throw TlsError("cannot check the server's certificate for '" + host + "': " + openSslErrors());
    setTimeout(connectSeconds);
    support::SigpipeBlocker blocker;
    int rc = 0;
    errno = 0;
    while ((rc = SSL_connect(ssl_)) != 1 && interrupted(rc)) {
    }
    if (rc != 1) {
      blocker.noteEpipe();  // a fatal alert written to a closed connection raises SIGPIPE
      if (const long v = SSL_get_verify_result(ssl_); v != X509_V_OK) {
        ERR_clear_error();
        const bool wrongName = v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH;
        throw TlsError(std::string("the server's certificate is not accepted: ") + X509_verify_cert_error_string(v) +
                       (wrongName              ? " (it does not name '" + host + "')"
                        : files.caFile.empty() ? " (name the CA that signed it with ?cacert=FILE)"
                                               : ""));
      }
      fail(rc, "the TLS handshake failed");
    }
    setTimeout(timeoutSeconds);
  } catch (...) {
    release();
    throw;
  }
}

TlsStream::~TlsStream() {
  release();
}

void TlsStream::release() {
  if (ssl_) SSL_free(ssl_);  // no close_notify: the connection is simply dropped
  if (fd_ >= 0) ::close(fd_);
  if (ctx_) SSL_CTX_free(ctx_);
  ssl_ = nullptr;
  fd_ = -1;
  ctx_ = nullptr;
}

void TlsStream::setTimeout(double seconds) {
  timeval tv;
  tv.tv_sec = time_t(seconds);
  tv.tv_usec = suseconds_t((seconds - double(tv.tv_sec)) * 1e6);
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

bool TlsStream::interrupted(int result) {
  const int kind = SSL_get_error(ssl_, result);
  // A signal ends a blocking read or write on a socket with a timeout (SO_RCVTIMEO
  // sockets are never restarted), which OpenSSL reports as "want to read" again.
  const bool eintr = (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) && errno == EINTR;
  if (eintr) {
    ERR_clear_error();
    errno = 0;
  }
  return eintr;
}

void TlsStream::fail(int result, const char* doing) {
  const int savedErrno = errno;
  const int kind = SSL_get_error(ssl_, result);
  std::string why = openSslErrors();
  if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE)
    why = "timed out";  // the socket's timeout ended a blocking read or write
  else if (kind == SSL_ERROR_ZERO_RETURN || (kind == SSL_ERROR_SYSCALL && savedErrno == 0) ||
           why.find("unexpected eof") != std::string::npos)
    why = "the server closed the connection";
  else if (why.empty())
    why = savedErrno ? std::strerror(savedErrno) : "unknown TLS error";
  throw TlsError(std::string(doing) + ": " + why);
}

void TlsStream::writeAll(const char* data, size_t size) {
  support::SigpipeBlocker blocker;
  ERR_clear_error();
  errno = 0;
  while (size > 0) {
    size_t written = 0;
    const int rc = SSL_write_ex(ssl_, data, size, &written);
    if (rc != 1 && interrupted(rc)) continue;
    if (rc != 1) {
      blocker.noteEpipe();
      fail(rc, "writing");
    }
    data += written;
    size -= written;
  }
}

size_t TlsStream::readSome(char* data, size_t capacity) {
  support::SigpipeBlocker blocker;  // a read may write (TLS 1.3 key updates)
  ERR_clear_error();
  size_t read = 0;
  errno = 0;
  int rc = 0;
  while ((rc = SSL_read_ex(ssl_, data, capacity, &read)) != 1 && interrupted(rc)) {
  }
  if (rc != 1) {
    blocker.noteEpipe();
    fail(rc, "reading");
  }
  return read;
}

}  // namespace tessel::fleet
