// Where the fleet's Redis is, as a URL: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`
// (TCP, port 6379 by default), `rediss://...` (the same over TLS) or
// `unix:///PATH/redis.sock[?password=PASSWORD&db=DB]` (a Unix socket on this
// machine). A password may be percent-encoded (%40 for '@'). A `rediss://` URL
// may name its certificates: `?cacert=CA.pem` (the CA to trust instead of the
// system's), `&cert=CLIENT.pem&key=CLIENT.key` (the client's, which Redis asks
// for unless it is set `tls-auth-clients no`).
#pragma once

#include <string>

namespace tessel::fleet {

struct RedisEndpoint {
  std::string host;  // TCP; empty for a Unix socket
  int port = 6379;
  std::string socketPath;  // Unix socket; empty for TCP
  std::string user;        // empty: Redis's default user
  std::string password;    // empty: no AUTH
  int database = 0;
  bool tls = false;
  std::string caFile, certFile, keyFile;  // TLS only; empty: the system's CAs, no client certificate
  // The URL without its password, for messages and the fleet's view.
  std::string str() const;
};

// Throws std::invalid_argument naming what is wrong with the URL.
RedisEndpoint parseRedisUrl(const std::string& url);

}  // namespace tessel::fleet
