// A file being written to S3: its bytes are held in memory until publish()
// puts them (one PUT, or a multipart upload for a large one). S3 has no
// partial writes, so nothing of it is on the server before then.
#ifndef STOWAGE_S3_STAGED_HPP
#define STOWAGE_S3_STAGED_HPP

#include <stowage/storage.hpp>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace stowage_s3 {

class StagedObject : public stowage::sdk::StagedBackendFile {
 public:
  StagedObject(std::string shown, std::string bucket, std::string key)
      : shown(std::move(shown)), bucket(std::move(bucket)), key(std::move(key)) {}
  // Writers at distinct offsets may come from several threads, and a growth
  // moves the bytes: every access holds the mutex.
  void write_at(uint64_t offset, const void* data, size_t size) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (offset + size > bytes.size()) bytes.resize(offset + size);
    if (size) std::memcpy(bytes.data() + offset, data, size);
  }
  uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) override {
    std::lock_guard<std::mutex> lock(mutex);
    const uint64_t begin = std::min<uint64_t>(offset, bytes.size());
    const uint64_t n = std::min<uint64_t>(capacity, bytes.size() - begin);
    if (n) std::memcpy(buf, bytes.data() + begin, n);
    return n;
  }
  void resize(uint64_t size) override {
    std::lock_guard<std::mutex> lock(mutex);
    bytes.resize(size);
  }

  const std::string shown;  // s3://bucket/key, for messages
  const std::string bucket;
  const std::string key;
  std::mutex mutex;
  std::vector<uint8_t> bytes;
};

}  // namespace stowage_s3

#endif  // STOWAGE_S3_STAGED_HPP
