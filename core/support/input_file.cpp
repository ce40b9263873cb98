#include "support/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "support/size_limits.h"

namespace tessel::support {

namespace {

const char* kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "is a folder, not a file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode)) return "is a character device, not a regular file";
  if (S_ISBLK(mode)) return "is a block device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  if (!S_ISREG(mode)) return "is not a regular file";
  return "";
}

std::string tooLarge(const std::string& what, const std::string& path, uint64_t size, uint64_t maxBytes) {
  return what + " '" + path + "' is " + bytesText(double(size)) + ", more than the " + bytesText(double(maxBytes)) +
         " Tessel reads into memory";
}

}  // namespace

std::string notARegularFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return errno == ENOENT || errno == ENOTDIR ? "does not exist"
                                               : std::string("cannot be read: ") + std::strerror(errno);
  return kindOf(st.st_mode);
}

uint64_t checkRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes) {
  if (const std::string kind = notARegularFile(path); !kind.empty())
    throw InputFileError(what + " '" + path + "' " + kind);
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw InputFileError(what + " '" + path + "' cannot be read: " + ec.message());
  if (size > maxBytes) throw InputFileError(tooLarge(what, path, size, maxBytes));
  return size;
}

std::string readRegularFile(const std::string& path, const std::string& what, uint64_t maxBytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) throw InputFileError(what + " '" + path + "' does not exist");
    throw InputFileError(what + " '" + path + "' cannot be read: " + std::strerror(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputFileError(what + " '" + path + "' cannot be read: " + std::strerror(errno));
  if (const std::string kind = kindOf(st.st_mode); !kind.empty())
    throw InputFileError(what + " '" + path + "' " + kind);
  const uint64_t size = uint64_t(st.st_size);
  if (size > maxBytes) throw InputFileError(tooLarge(what, path, size, maxBytes));
  std::string bytes(size, '\0');
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputFileError(what + " '" + path + "' cannot be read: " + std::strerror(errno));
    if (n == 0) break;  // shrank while read: what is there
    done += size_t(n);
  }
  bytes.resize(done);
  return bytes;
}

uint64_t defaultMaxInputBytes() {
  const int64_t memory = physicalMemoryBytes();
  return memory > 0 ? uint64_t(memory) / 2 : (uint64_t(1) << 32);
}

}  // namespace tessel::support
