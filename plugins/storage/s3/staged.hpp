// A file being written to S3. S3 has no partial writes, so its bytes are
// held here until publish() puts them (one PUT, or a multipart upload for a
// large one): in memory up to a limit, past it in an unlinked temporary
// file (TMPDIR), so that an object larger than memory can still be written.
// Nothing of it is on the server before publish().
#ifndef STOWAGE_S3_STAGED_HPP
#define STOWAGE_S3_STAGED_HPP

#include <stowage/storage.hpp>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace stowage_s3 {

class StagedObject : public stowage::sdk::StagedBackendFile {
 public:
  StagedObject(std::string shown, std::string bucket, std::string key, uint64_t memory_limit)
      : shown(std::move(shown)),
        bucket(std::move(bucket)),
        key(std::move(key)),
        memory_limit_(memory_limit) {}
  ~StagedObject() override;
  void write_at(uint64_t offset, const void* data, size_t size) override;
  uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) override;
  void resize(uint64_t size) override;

  // The whole staged bytes, in memory or mapped from the temporary file;
  // valid until the object is changed or dropped (publish() only reads).
  struct Contents {
    const uint8_t* data = nullptr;
    uint64_t size = 0;
  };
  Contents contents();
  bool spilled() const { return fd_ >= 0; }

  const std::string shown;  // s3://bucket/key, for messages
  const std::string bucket;
  const std::string key;

 private:
  void spill();  // holds mutex_
  void unmap();

  // Writers at distinct offsets may come from several threads, and a
  // growth moves the bytes: every access holds the mutex.
  std::mutex mutex_;
  const uint64_t memory_limit_;
  std::vector<uint8_t> bytes_;
  int fd_ = -1;        // the temporary file, once spilled
  uint64_t size_ = 0;  // of the temporary file
  void* map_ = nullptr;
  uint64_t mapped_ = 0;
};

}  // namespace stowage_s3

#endif  // STOWAGE_S3_STAGED_HPP
