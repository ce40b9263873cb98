#include "support/base64.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace tessel::support {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> decodeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t)
    v = -1;
  for (int i = 0; i < 64; ++i)
    t[uint8_t(kAlphabet[i])] = int8_t(i);
  return t;
}

}  // namespace

std::string toBase64(const std::string& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = uint32_t(uint8_t(bytes[i])) << 16;
    if (n > 1) v |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    if (n > 2) v |= uint32_t(uint8_t(bytes[i + 2]));
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += n > 1 ? kAlphabet[(v >> 6) & 63] : '=';
    out += n > 2 ? kAlphabet[v & 63] : '=';
  }
  return out;
}

std::optional<std::string> fromBase64(const std::string& text) {
  static constexpr std::array<int8_t, 256> table = decodeTable();
  if (text.size() % 4) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + size_t(k)];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        v[k] = 0, ++pad;
        continue;
      }
      if (pad) return std::nullopt;  // data after padding
      v[k] = table[uint8_t(c)];
      if (v[k] < 0) return std::nullopt;
    }
    const uint32_t w = uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 | uint32_t(v[2]) << 6 | uint32_t(v[3]);
    out += char((w >> 16) & 255);
    if (pad < 2) out += char((w >> 8) & 255);
    if (pad < 1) out += char(w & 255);
  }
  return out;
}

}  // namespace tessel::support
