// An open N5 container: a directory tree where every directory is a group
// and a directory whose attributes.json has dimensions/blockSize/dataType is
// a dataset of chunk files `<dataset>/<p0>/<p1>/...`.
#pragma once

#include "chunk.hpp"
#include "metadata.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <initializer_list>
#include <mutex>
#include <memory>
#include <utility>
#include <optional>
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

// A dataset as a node handle holds it: its metadata parsed once, and its
// codec (made on first use).
struct OpenDataset {
  OpenDataset(const stowage::sdk::Host& host, std::string dir_, Dataset meta_)
      : dir(std::move(dir_)),
        meta(std::move(meta_)),
        codec(host, meta.compression.dump(), dir),
        raw(meta.compression["type"] == "raw") {}
  std::string dir;
  Dataset meta;
  mutable stowage::sdk::LazyHostCodec codec;  // made on first use; logically const
  bool raw;  // payload is the element bytes: read straight into the caller's buffer
};

class N5Store final : public stowage::sdk::Store {
 public:
  static int32_t identify(const stowage::sdk::Probe& probe);
  static std::unique_ptr<stowage::sdk::Store> open(const stowage::sdk::Host& host,
                                                   std::string_view path, uint32_t mode,
                                                   std::string_view options_json);

  N5Store(stowage::sdk::Storage storage, std::string root, bool writable, Options options);

  // The tree, by path.
  std::vector<std::string> list(std::string_view node) override;
  std::string describe(std::string_view node) override;
  std::string describe_node(std::string_view node);
  // A numeric dataset is an array node, a string dataset a strings node, an
  // object dataset a records node (nodes.cpp), a directory a group.
  std::unique_ptr<stowage::sdk::Node> open_node(std::string_view node) override;
  void create(std::string_view node, std::string_view json) override;
  void set_attributes(std::string_view node, std::string_view json) override;
  void remove(std::string_view node) override;
  void move_node(std::string_view from, std::string_view to, bool replace) override;
  void write_strings(std::string_view node, const std::vector<std::string_view>& values) override;
  // "resize" {"shape": [...]} (resize.cpp); anything else is UNSUPPORTED.
  std::string command(std::string_view node, std::string_view name,
                      std::string_view args_json) override;

  // The data of one dataset, for its node handle (chunk_io.cpp).
  bool read_chunk(const OpenDataset& ds, const uint64_t* chunk_index, void* out, size_t capacity,
                  uint64_t* chunk_shape);
  void write_chunk(const OpenDataset& ds, const uint64_t* chunk_index, const void* in, size_t size,
                   const uint64_t* chunk_shape);
  bool chunk_exists(const OpenDataset& ds, const uint64_t* chunk_index) const;
  std::unique_ptr<stowage::sdk::ChunkLock> lock_chunk(const OpenDataset& ds,
                                                      const uint64_t* chunk_index) const;
  void read_strings(const OpenDataset& ds, uint64_t begin, uint64_t end,
                    const stowage::sdk::ItemFn& item);
  // N5 "object" datasets are record sets: record i is block i (C order of
  // the block grid), its bytes the block's decoded payload; its key the
  // block's path in the dataset ("0/1").
  void read_records(const OpenDataset& ds, uint64_t begin, uint64_t end,
                    const stowage::sdk::ItemFn& item);
  std::string record_key(const OpenDataset& ds, uint64_t index) const;
  std::optional<uint64_t> find_record(const OpenDataset& ds, std::string_view key) const;
  // A raw chunk slab by slab (stowage_array_vtable.read_chunk_slabs).
  stowage::sdk::ArrayNode::Slabs read_chunk_slabs(const OpenDataset& ds, const uint64_t* index,
                                                  uint64_t begin, uint64_t end,
                                                  const stowage::sdk::ArrayNode::PieceFn& piece,
                                                  uint64_t* chunk_shape);
  // Writes the next records into blocks 0, 1, ... of an object dataset made by create.
  void append_records(const OpenDataset& ds, uint64_t count, const void* const* records,
                      const uint64_t* sizes);

 private:
  std::string node_dir(const std::vector<std::string>& parts) const;
  std::optional<json> read_attributes(const std::string& dir) const;
  void write_attributes(const std::string& dir, const json& attributes) const;
  void require_existing(const std::string& dir, std::string_view node) const;
  void require_outside_datasets(const std::vector<std::string>& parts) const;
  void require_writable(const char* operation) const;
  void ensure_root_version();
  void resize(std::string_view node, std::string_view args_json);
  // The dataset at `node`, parsed; nullptr for a group.
  std::shared_ptr<const OpenDataset> open_dataset(std::string_view node) const;

  bool read_numeric(const OpenDataset& ds, const std::string& path, uint8_t* out, size_t capacity,
                    uint64_t* chunk_shape);
  std::optional<bool> read_raw_scattered(const OpenDataset& ds, const std::string& path,
                                         uint8_t* out, size_t capacity, uint64_t* chunk_shape);
  static uint64_t dense_bytes(const OpenDataset& ds, const ChunkHeader& h, const std::string& path,
                              size_t capacity);
  std::optional<std::string> read_variable(const OpenDataset& ds, const std::string& path,
                                           uint64_t* count);
  static void decode(const OpenDataset& ds, const std::string& path, const uint8_t* payload,
                     size_t payload_size, uint8_t* out, size_t bytes);
  std::string object_path(const OpenDataset& ds, uint64_t index) const;
  void write_variable(const OpenDataset& ds, const std::string& path, const uint8_t* header,
                      size_t header_size, std::string_view payload);
  using Piece = std::pair<const void*, size_t>;
  void write_file(const std::string& path, std::initializer_list<Piece> pieces) const;

  stowage::sdk::Storage storage_;  // all I/O: local files, memory or HTTP
  std::string root_;
  bool writable_;
  Options options_;
  stowage::sdk::BufferPool scratch_;  // chunk files read or encoded whole
  // The next block append_records writes, per object dataset (by directory).
  std::mutex appended_mutex_;
  std::unordered_map<std::string, uint64_t> records_appended_;
};

}  // namespace n5
