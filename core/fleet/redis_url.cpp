#include "fleet/redis_url.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace tessel::fleet {

namespace {

std::string percentDecoded(const std::string& s, const std::string& url) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    int v = 0;
    if (i + 2 >= s.size() || std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16).ptr != s.data() + i + 3)
      throw std::invalid_argument("bad percent-encoding in Redis URL '" + url + "'");
    out += char(v);
    i += 2;
  }
  return out;
}

int integerIn(const std::string& text, int lo, int hi, const char* what, const std::string& url) {
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || v < lo || v > hi)
    throw std::invalid_argument(std::string("the ") + what + " of Redis URL '" + url + "' is not a number in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

// "KEY=VALUE&..." of a unix:// URL (password, user, db) or a rediss:// one
// (certificate files).
void readQuery(const std::string& query, RedisEndpoint* e, const std::string& url) {
  size_t at = 0;
  while (at < query.size()) {
    size_t end = query.find('&', at);
    if (end == std::string::npos) end = query.size();
    const std::string item = query.substr(at, end - at);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (e->tls && key == "cacert")
      e->caFile = percentDecoded(value, url);
    else if (e->tls && key == "cert")
      e->certFile = percentDecoded(value, url);
    else if (e->tls && key == "key")
      e->keyFile = percentDecoded(value, url);
    else if (!e->tls && key == "password")
      e->password = percentDecoded(value, url);
    else if (!e->tls && key == "user")
      e->user = percentDecoded(value, url);
    else if (!e->tls && key == "db")
      e->database = integerIn(value, 0, 1 << 20, "database", url);
    else
      throw std::invalid_argument("Redis URL '" + url + "' has an unknown parameter '" + key + "' (" +
                                  (e->tls ? "cacert, cert, key" : "password, user, db") + ")");
    at = end + 1;
  }
}

// The URL as error messages show it: the user and password before '@', and a
// password= parameter, replaced by "***".
std::string redacted(const std::string& url) {
  std::string out = url;
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos && out.rfind("unix://", 0) != 0) {
    const size_t start = scheme + 3;
    const size_t end = std::min(out.find_first_of("/?", start), out.size());
    const size_t at = out.rfind('@', end == 0 ? 0 : end - 1);
    if (at != std::string::npos && at >= start) out.replace(start, at - start, "***");
  }
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=", p + 1)) {
    const size_t value = p + 9;
    out.replace(value, std::min(out.find('&', value), out.size()) - value, "***");
  }
  return out;
}

}  // namespace

std::string RedisEndpoint::str() const {
  std::string s;
  if (!socketPath.empty()) {
    s = "unix://" + socketPath;
  } else {
    const bool ipv6 = host.find(':') != std::string::npos;
    s = std::string(tls ? "rediss://" : "redis://") + (user.empty() ? "" : user + "@") + (ipv6 ? "[" : "") + host +
        (ipv6 ? "]" : "") + ":" + std::to_string(port);
  }
  if (database) s += (socketPath.empty() ? "/" : "?db=") + std::to_string(database);
  return s;
}

RedisEndpoint parseRedisUrl(const std::string& given) {
  // Messages name the URL without its password; `given` is only parsed.
  const std::string url = redacted(given);
  RedisEndpoint e;
  std::string rest;
  if (given.rfind("redis://", 0) == 0) {
    rest = given.substr(8);
  } else if (given.rfind("rediss://", 0) == 0) {
    rest = given.substr(9);
    e.tls = true;
  } else if (given.rfind("unix://", 0) == 0) {
    rest = given.substr(7);
    const size_t q = rest.find('?');
    e.socketPath = rest.substr(0, q);
    if (e.socketPath.empty() || e.socketPath[0] != '/')
      throw std::invalid_argument("Redis URL '" + url + "' does not name a socket by its absolute path");
    if (q != std::string::npos) readQuery(rest.substr(q + 1), &e, url);
    return e;
  } else {
    throw std::invalid_argument("'" + url + "' is not a Redis URL (redis://HOST:PORT, rediss://HOST:PORT or " +
                                "unix:///PATH)");
  }
  // [[USER]:PASSWORD@]HOST[:PORT][/DB][?PARAMETERS], the parameters of rediss:// only.
  // As in RFC 3986 the host part ends at the first '/' or '?' (percent-encode
  // them in a password), so a parameter's value may hold any of '@', '/', '?'.
  const size_t authorityEnd = rest.find_first_of("/?");
  if (authorityEnd != std::string::npos) {
    const std::string tail = rest.substr(authorityEnd);
    rest.resize(authorityEnd);
    const size_t query = tail.find('?');
    if (query != std::string::npos) {
      if (!e.tls)
        throw std::invalid_argument("Redis URL '" + url +
                                    "' has parameters; only a rediss:// URL takes them (cacert, cert, key)");
      readQuery(tail.substr(query + 1), &e, url);
    }
    const std::string path = tail.substr(0, query);  // "" or "/" or "/DB"
    if (path.size() > 1) e.database = integerIn(path.substr(1), 0, 1 << 20, "database", url);
  }
  if (!e.keyFile.empty() && e.certFile.empty())
    throw std::invalid_argument("Redis URL '" + url + "' names a client key without its certificate (cert=FILE)");
  const size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    const std::string auth = rest.substr(0, at);
    const size_t colon = auth.find(':');
    if (colon == std::string::npos) {
      e.password = percentDecoded(auth, url);  // redis://PASSWORD@HOST, as redis-cli reads it
    } else {
      e.user = percentDecoded(auth.substr(0, colon), url);
      e.password = percentDecoded(auth.substr(colon + 1), url);
    }
    rest = rest.substr(at + 1);
  }
  std::string host = rest;
  if (!host.empty() && host[0] == '[') {  // [IPv6]:PORT
    const size_t close = host.find(']');
    if (close == std::string::npos) throw std::invalid_argument("Redis URL '" + url + "' has an unclosed '['");
    e.host = host.substr(1, close - 1);
    host = host.substr(close + 1);
    if (!host.empty()) {
      if (host[0] != ':') throw std::invalid_argument("Redis URL '" + url + "' has text after its host");
      e.port = integerIn(host.substr(1), 1, 65535, "port", url);
    }
  } else {
    const size_t colon = host.rfind(':');
    if (colon != std::string::npos) {
      e.port = integerIn(host.substr(colon + 1), 1, 65535, "port", url);
      host.resize(colon);
    }
    e.host = host;
  }
  if (e.host.empty()) throw std::invalid_argument("Redis URL '" + url + "' names no host");
  return e;
}

}  // namespace tessel::fleet
