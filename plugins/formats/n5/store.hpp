// An open N5 container: a directory tree where every directory is a group
// and a directory whose attributes.json has dimensions/blockSize/dataType is
// a dataset of chunk files `<dataset>/<p0>/<p1>/...`.
#pragma once

#include "chunk.hpp"
#include "codec_pool.hpp"
#include "metadata.hpp"

#include <stowage/plugin.hpp>
#include <stowage/storage.hpp>

#include <initializer_list>
#include <atomic>
#include <memory>
#include <utility>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace n5 {

// The `open` options (a JSON object).
struct Options {
  bool write_empty_chunks = true;  // false: an all-zero chunk is deleted, not written
  bool durable = false;            // fsync each file before renaming it into place
};
Options parse_options(std::string_view json_text);

class N5Store final : public stowage::sdk::Store {
 public:
  static int32_t identify(std::string_view path);
  static std::unique_ptr<stowage::sdk::Store> open(std::string_view path, uint32_t mode,
                                                   std::string_view options_json);

  N5Store(stowage::sdk::Storage storage, std::string root, bool writable, Options options);

  std::vector<std::string> list(std::string_view node) override;
  std::string describe(std::string_view node) override;
  void create(std::string_view node, std::string_view json) override;
  void set_attributes(std::string_view node, std::string_view json) override;
  void remove(std::string_view node) override;
  void move_node(std::string_view from, std::string_view to, bool replace) override;
  bool read_chunk(std::string_view node, const uint64_t* chunk_index, void* out,
                  size_t capacity, uint64_t* chunk_shape) override;
  void write_chunk(std::string_view node, const uint64_t* chunk_index, const void* in,
                   size_t size, const uint64_t* chunk_shape) override;
  void read_strings(std::string_view node, uint64_t begin, uint64_t end,
                    const stowage::sdk::ItemFn& item) override;
  void write_strings(std::string_view node, const std::vector<std::string_view>& values) override;
  // N5 "object" datasets are record sets: record i is block i (C order of
  // the block grid), its bytes the block's decoded payload.
  uint64_t record_count(std::string_view node) override;
  void read_records(std::string_view node, uint64_t begin, uint64_t end,
                    const stowage::sdk::ItemFn& item) override;
  std::string record_key(std::string_view node, uint64_t index) override;
  // Writes the next records into blocks 0, 1, ... of an object dataset made by create.
  void append_records(std::string_view node, uint64_t count, const void* const* records,
                      const uint64_t* sizes) override;

 private:
  // A dataset opened for chunk I/O, cached per node.
  struct OpenDataset {
    OpenDataset(std::string dir_, Dataset meta_)
        : dir(std::move(dir_)), meta(std::move(meta_)),
          codec(meta.compression.dump(), dir),
          raw(meta.compression["type"] == "raw") {}
    std::string dir;
    Dataset meta;
    mutable CodecPool codec;  // leases instances; logically const
    bool raw;  // payload is the element bytes: read straight into the caller's buffer
  };

  std::string node_dir(const std::vector<std::string>& parts) const;
  std::optional<json> read_attributes(const std::string& dir) const;
  void write_attributes(const std::string& dir, const json& attributes) const;
  void require_existing(const std::string& dir, std::string_view node) const;
  void require_outside_datasets(const std::vector<std::string>& parts) const;
  void require_writable(const char* operation) const;
  void ensure_root_version();
  std::shared_ptr<OpenDataset> dataset(std::string_view node);
  const OpenDataset& hot_dataset(std::string_view node);
  void forget(std::string_view node);

  bool read_numeric(const OpenDataset& ds, const std::string& path, uint8_t* out,
                    size_t capacity, uint64_t* chunk_shape);
  std::optional<bool> read_raw_scattered(const OpenDataset& ds, const std::string& path, uint8_t* out,
                                         size_t capacity, uint64_t* chunk_shape);
  static uint64_t dense_bytes(const OpenDataset& ds, const ChunkHeader& h, const std::string& path,
                              size_t capacity);
  std::optional<std::string> read_variable(const OpenDataset& ds, const std::string& path,
                                           uint64_t* count);
  static void decode(const OpenDataset& ds, const std::string& path, const uint8_t* payload,
                     size_t payload_size, uint8_t* out, size_t bytes);
  std::string object_path(const OpenDataset& ds, uint64_t index) const;
  void write_variable(const OpenDataset& ds, const std::string& path, const uint8_t* header,
                      size_t header_size, std::string_view payload) const;
  using Piece = std::pair<const void*, size_t>;
  void write_file(const std::string& path, std::initializer_list<Piece> pieces) const;

  stowage::sdk::Storage storage_;  // all I/O: local files, memory or HTTP
  std::string root_;
  bool writable_;
  Options options_;
  std::shared_mutex cache_mutex_;
  std::unordered_map<std::string, std::shared_ptr<OpenDataset>> cache_;
  // hot_dataset's per-thread memo is valid for this store (id_) while the
  // cache is unchanged (generation_, bumped by forget()).
  const uint64_t id_;
  std::atomic<uint64_t> generation_{0};
  // The next block append_records writes, per object dataset.
  std::unordered_map<std::string, uint64_t> records_appended_;
};

}  // namespace n5
