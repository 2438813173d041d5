// Buffer helpers of the chunk I/O hot path.
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
