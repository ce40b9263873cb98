// Text files of lines (JSON lines: datasets, knowledge bases), plain or
// gzip-compressed: a name ending in ".gz" or ".tkb" is written compressed,
// and either kind is read. Built with zlib, outside tessel_core (the
// minimal build has no zlib headers): tessel_tuning compiles it.
#pragma once

#include <functional>
#include <string>

namespace tessel::support {

// Writes every line next() gives (without its newline) until it returns
// false. std::runtime_error naming the file when it cannot be written.
void writeLines(const std::string& path, const std::function<bool(std::string& line)>& next);

// Calls take(line, number) for each line (numbers from 1, empty lines
// skipped). A file that is not a regular file, or damaged compressed data, is
// a std::runtime_error naming `what` and the file; what take() throws goes on.
void readLines(const std::string& path, const std::string& what,
               const std::function<void(const std::string& line, size_t number)>& take);

}  // namespace tessel::support
