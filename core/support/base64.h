// Base64 (RFC 4648, with padding): binary blobs (a trained cost model) inside
// JSON text.
#pragma once

#include <optional>
#include <string>

namespace tessel::support {

std::string toBase64(const std::string& bytes);
// nullopt for text that is not base64 (a stray character, a bad length).
std::optional<std::string> fromBase64(const std::string& text);

}  // namespace tessel::support
