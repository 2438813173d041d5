// datg_writer.hpp -- writing a new datg dataset in the current flavour (flag 1,
// one LZ4 frame per block), the way the reference Java writer lays it out.
//
// Blocks arrive in any order and from several threads (the host encodes in
// parallel). Encoded blocks wait in memory until every earlier block is in
// the file, then are appended in block order, so rows streamed in order are
// never all held at once. A block rewritten after it reached the file (the
// host's read-modify-write of a partly covered block) is appended again and
// commit() copies the live blocks into a fresh, compact file.
#pragma once

#include "datg_codec.hpp"
#include "datg_layout.hpp"
#include "datg_reader.hpp"
#include "sha256.hpp"

#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace datg {

// A staged file (nothing of it visible until published) that is appended
// to and read back, hashing what is appended.
class ScratchFile {
 public:
  ScratchFile(const stowage::sdk::Storage& storage, const std::string& path)
      : staged_(storage.stage(path)) {}
  // Appends bytes and returns the offset they start at.
  uint64_t append(const void* data, size_t size);
  // Exactly `size` bytes at offset (else CORRUPT).
  void read_at(void* out, size_t size, uint64_t offset) const;
  uint64_t size() const { return staged_.size(); }
  // SHA-256 of everything appended (valid while appends are the only writes).
  std::string sha256_hex() { return sha256_.hex(); }
  // The staged file, to publish (an unpublished one is dropped at the end).
  stowage::sdk::Staged& staged() { return staged_; }

 private:
  stowage::sdk::Staged staged_;
  Sha256 sha256_;
};

class Writer {
 public:
  // `footer` gives rows, cols and rows_per_block (already validated). Encoded
  // blocks waiting for an earlier one are kept up to `max_pending_bytes`;
  // beyond that they go to the file out of order and commit() compacts.
  Writer(const stowage::sdk::Storage& storage, const DatasetPaths& paths,
         const stowage::sdk::Host& host, const Footer& footer, Metadata metadata, double fill_value,
         uint64_t max_pending_bytes = kDefaultMaxPendingBytes);
  static constexpr uint64_t kDefaultMaxPendingBytes = 256u << 20;

  const Footer& footer() const { return footer_; }
  const Metadata& metadata() const { return metadata_; }
  double fill_value() const { return fill_value_; }
  void set_metadata(Metadata metadata) { metadata_ = std::move(metadata); }
  // Keeps a creation time (a conversion preserving the source's) instead of now.
  void set_created_seconds(int64_t seconds) { created_seconds_ = seconds; }
  // Row names (rows = true) or column names; checked, replaces earlier ones.
  void set_names(bool rows, std::vector<std::string> names);
  const std::optional<std::vector<std::string>>& names(bool rows) const {
    return rows ? row_names_ : col_names_;
  }

  // Stores block b (big-endian doubles, exactly rows_in_block x cols).
  // Safe to call concurrently for distinct blocks.
  void write_block(uint64_t block, const void* data, size_t size);
  // The current content of block b, or false if it was never written.
  bool read_block(uint64_t block, void* out, size_t size);
  // Whether block b was written (pending or in the scratch file).
  bool has_block(uint64_t block);

  // Writes the index, metadata, footer, name files and <base>.sha256 and
  // publishes the four files as one set (a kill part-way leaves a journal the
  // next open completes). Blocks never written hold the fill value.
  void commit();

 private:
  std::vector<uint8_t> encode(const void* data, size_t size);
  void append_locked(uint64_t block, const std::vector<uint8_t>& encoded);
  void flush_ready_locked();
  void spill_pending_locked();
  std::vector<uint8_t> fill_block(uint64_t block);
  void compact();
  std::string block_name(uint64_t block) const;

  stowage::sdk::Storage storage_;
  DatasetPaths paths_;
  Footer footer_;
  std::optional<int64_t> created_seconds_;
  Metadata metadata_;
  double fill_value_;
  uint64_t max_pending_bytes_;
  std::optional<std::vector<std::string>> row_names_, col_names_;
  stowage::sdk::Host host_;
  stowage::sdk::HostCodec codec_;
  stowage::sdk::BufferPool encode_buffers_;  // LZ4's bound-sized output, before the exact copy
  std::unique_ptr<ScratchFile> file_;

  std::mutex mutex_;                                  // guards everything below
  std::map<uint64_t, std::vector<uint8_t>> pending_;  // encoded, not yet in the file
  uint64_t pending_bytes_ = 0;
  std::vector<uint64_t> offset_, size_;  // per block, once in the file
  std::vector<bool> in_file_;            // per block: offset_/size_ are valid
  uint64_t next_ = 0;                    // blocks [0, next_) are in the file
  uint64_t written_above_ = 0;           // 1 + the highest block written so far
  bool relocated_ = false;               // some block was appended out of order
};

}  // namespace datg
