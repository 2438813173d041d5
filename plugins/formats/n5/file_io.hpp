// Small file and buffer helpers of the chunk I/O hot path. Unlike sdk::File,
// a missing file is a return value here, not an exception: a missing chunk
// is a normal state.
#pragma once

#include <stowage/plugin_util.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace n5::io {

using stowage::sdk::corrupt;

// A descriptor that closes itself; fd < 0 means "no such file".
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

inline int open_if_exists(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno != ENOENT && errno != ENOTDIR) stowage::sdk::io_fail(path, "cannot open", errno);
  return fd;
}

inline uint64_t file_size(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) stowage::sdk::io_fail(path, "cannot stat", errno);
  return static_cast<uint64_t>(st.st_size);
}

inline void read_exact(int fd, void* buf, size_t n, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      stowage::sdk::io_fail(path, "read failed", errno);
    }
    if (r == 0) corrupt(path + ": file shrank while being read");
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
}

// Per-thread byte buffers: the host calls read_chunk/write_chunk from its
// pool, and reusing a buffer per thread avoids an allocation per chunk.
inline std::vector<uint8_t>& scratch(size_t n) {
  thread_local std::vector<uint8_t> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer;
}

inline bool all_zero(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w) return false;
  }
  for (; i < n; ++i)
    if (p[i]) return false;
  return true;
}

}  // namespace n5::io
