#include "staged.hpp"

#include <stowage/plugin.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace stowage_s3 {
namespace {

[[noreturn]] void io_error(const std::string& shown, const char* what) {
  stowage::sdk::fail(
      STOWAGE_IO, shown + ": staging in a temporary file: " + what + ": " + std::strerror(errno));
}

}  // namespace

StagedObject::~StagedObject() {
  unmap();
  if (fd_ >= 0) ::close(fd_);
}

void StagedObject::unmap() {
  if (map_) ::munmap(map_, mapped_);
  map_ = nullptr;
  mapped_ = 0;
}

// The bytes so far go to a new temporary file, unlinked at once so that
// nothing is left behind by a kill.
void StagedObject::spill() {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir && *dir ? dir : "/tmp") + "/stowage-s3-XXXXXX";
  fd_ = ::mkstemp(path.data());
  if (fd_ < 0) io_error(shown, "mkstemp");
  ::unlink(path.c_str());
  for (uint64_t at = 0; at < bytes_.size();) {
    const ssize_t n = ::pwrite(fd_, bytes_.data() + at, bytes_.size() - at, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) io_error(shown, "write");
    at += static_cast<uint64_t>(n);
  }
  size_ = bytes_.size();
  std::vector<uint8_t>().swap(bytes_);
}

void StagedObject::write_at(uint64_t offset, const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  unmap();
  if (fd_ < 0 && offset + size > memory_limit_) spill();
  if (fd_ < 0) {
    if (offset + size > bytes_.size()) bytes_.resize(offset + size);
    if (size) std::memcpy(bytes_.data() + offset, data, size);
    return;
  }
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t at = 0; at < size;) {
    const ssize_t n = ::pwrite(fd_, p + at, size - at, static_cast<off_t>(offset + at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) io_error(shown, "write");
    at += static_cast<size_t>(n);
  }
  size_ = std::max<uint64_t>(size_, offset + size);
}

uint64_t StagedObject::read_at(uint64_t offset, void* buf, uint64_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t total = fd_ < 0 ? bytes_.size() : size_;
  const uint64_t begin = std::min<uint64_t>(offset, total);
  const uint64_t n = std::min<uint64_t>(capacity, total - begin);
  if (fd_ < 0) {
    if (n) std::memcpy(buf, bytes_.data() + begin, n);
    return n;
  }
  for (uint64_t at = 0; at < n;) {
    const ssize_t got =
        ::pread(fd_, static_cast<uint8_t*>(buf) + at, n - at, static_cast<off_t>(begin + at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) io_error(shown, "read");
    at += static_cast<uint64_t>(got);
  }
  return n;
}

void StagedObject::resize(uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  unmap();
  if (fd_ < 0 && size > memory_limit_) spill();
  if (fd_ < 0) {
    bytes_.resize(size);
    return;
  }
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) io_error(shown, "ftruncate");
  size_ = size;
}

StagedObject::Contents StagedObject::contents() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fd_ < 0) return {bytes_.data(), bytes_.size()};
  // pwrite past the end leaves a hole the file's size already covers; a
  // size grown by write_at alone is made the file's too.
  if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) io_error(shown, "ftruncate");
  if (size_ == 0) return {};
  if (!map_) {
    map_ = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
    if (map_ == MAP_FAILED) {
      map_ = nullptr;
      io_error(shown, "mmap");
    }
    mapped_ = size_;
  }
  return {static_cast<const uint8_t*>(map_), size_};
}

}  // namespace stowage_s3
