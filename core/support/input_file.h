// Files a user names (models, tensors, NumPy inputs, cost models, datasets):
// only regular files are read, and their size is known and checked before
// anything is allocated for them. A folder, a FIFO or a device (/dev/zero)
// is refused by name instead of read for ever or into all of memory.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace tessel::support {

class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What is at `path` when it is not a regular file: "does not exist", "is a
// folder, not a file", "is a FIFO, not a regular file", ...; empty for a
// regular file (symbolic links followed).
std::string notARegularFile(const std::string& path);

// Size in bytes of the regular file at `path`. Throws InputFileError
// "WHAT 'PATH' is a folder, not a file" (and so on), or that it is larger
// than `maxBytes`.
uint64_t checkRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes);

// The whole file, read through one descriptor: opened without blocking (a
// FIFO never hangs the open), checked with fstat, then read up to its size.
std::string readRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes);

// The largest input file read into memory whole: half the machine's memory.
uint64_t defaultMaxInputBytes();

}  // namespace tessel::support
