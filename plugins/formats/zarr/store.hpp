// An open Zarr v2 store: a directory tree where a directory holding .zgroup
// is a group and one holding .zarray an array, whose chunks are the files
// "<array>/<i0>.<i1>..." (or "<i0>/<i1>/..." with dimension_separator "/").
// Every byte goes through the storage layer (stowage/storage.hpp), so a
// store is read from local files, memory or HTTP alike.
#pragma once

#include "consolidated.hpp"
#include "metadata.hpp"
#include "shard.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarr {

// An array as its node handle holds it: .zarray parsed once, and its codec.
struct OpenArray {
  OpenArray(const stowage::sdk::Host& host, std::string dir_, ArrayMeta meta_)
      : dir(std::move(dir_)),
        meta(std::move(meta_)),
        uncompressed(meta.codec.is_null() && meta.codec_error.empty()),
        codec(host, meta.codec.dump(), dir + "/" + kArrayFile) {}
  std::string dir;
  ArrayMeta meta;
  bool uncompressed;                          // no compressor: the file is the chunk
  mutable stowage::sdk::LazyHostCodec codec;  // never made when uncompressed
  std::shared_ptr<V3State> v3;                // Zarr v3 only (shard.hpp)
};

class ZarrStore final : public stowage::sdk::Store {
 public:
  static int32_t identify(const stowage::sdk::Probe& probe);
  static std::unique_ptr<stowage::sdk::Store> open(const stowage::sdk::Host& host,
                                                   std::string_view path, uint32_t mode,
                                                   std::string_view options_json);

  ZarrStore(stowage::sdk::Storage storage, std::string root, bool writable, int version = 2);
  // Publishes the shards still incomplete, merged with those on disk
  // (publish_pending_shards), and writes .zmetadata when asked
  // (close_consolidated).
  void close() override;

  // The tree, by path.
  std::vector<std::string> list(std::string_view node) override;
  std::string describe(std::string_view node) override;
  std::unique_ptr<stowage::sdk::Node> open_node(std::string_view node) override;
  void create(std::string_view node, std::string_view json) override;
  void set_attributes(std::string_view node, std::string_view json) override;
  void remove(std::string_view node) override;
  void move_node(std::string_view from, std::string_view to, bool replace) override;

  // The chunks of one array, for its node handle (chunk_io.cpp).
  bool read_chunk(OpenArray& a, const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape);
  void write_chunk(OpenArray& a, const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape);
  bool chunk_exists(const OpenArray& a, const uint64_t* index) const;
  // An uncompressed chunk slab by slab (stowage_array_vtable.read_chunk_slabs).
  stowage::sdk::ArrayNode::Slabs read_chunk_slabs(OpenArray& a, const uint64_t* index,
                                                  uint64_t begin, uint64_t end,
                                                  const stowage::sdk::ArrayNode::PieceFn& piece,
                                                  uint64_t* chunk_shape);
  // Writers taking turns on a chunk written in part (stowage_array_vtable.lock_chunk).
  std::unique_ptr<stowage::sdk::ChunkLock> lock_chunk(OpenArray& a, const uint64_t* index);
  void unlock_chunk(OpenArray& a, std::unique_ptr<stowage::sdk::ChunkLock> lock);
  // Publishes the shards of `a` this store holds in part, each merged under its lock.
  void flush(OpenArray& a);
  void decode_chunk(OpenArray& a, const std::string& key, uint8_t* file, uint64_t size,
                    uint8_t* out);
  // String arrays, a strings node each (strings_io.cpp).
  void read_strings(OpenArray& a, uint64_t begin, uint64_t end, const stowage::sdk::ItemFn& item);
  void write_strings(std::string_view node, const std::vector<std::string_view>& values) override;
  // "resize" {"shape": [...]} (resize.cpp); anything else is UNSUPPORTED.
  std::string command(std::string_view node, std::string_view name,
                      std::string_view args_json) override;

 private:
  enum class Kind { none, group, array };
  std::string node_dir(const std::vector<std::string>& parts) const;
  Kind kind_of(const std::string& dir) const;
  // The node at `parts`, which must exist and lie outside any array.
  Kind require_node(const std::vector<std::string>& parts, std::string_view node) const;
  void require_outside_arrays(const std::vector<std::string>& parts) const;
  void require_writable(const char* operation) const;
  std::optional<std::string> read_metadata(const std::string& file) const;
  json read_attributes(const std::string& dir) const;
  void write_text(const std::string& file, const json& j) const;
  void create_array(const std::string& dir, const json& description, json attributes);
  std::shared_ptr<OpenArray> open_array(const std::string& dir) const;
  // Reading what is not there (chunk_io.cpp): errors, not fill values.
  bool absent_chunk(const OpenArray& a, const std::string& key) const;
  bool stored(const OpenArray& a, const std::string& key, uint64_t* size = nullptr) const;
  json canonical_codec(json codec, const std::string& dir) const;
  void write_group(const std::string& dir, const json& attributes) const;
  void resize(std::string_view node, std::string_view args_json);
  void write_shape(const std::string& dir, const std::vector<uint64_t>& shape);

  // Zarr v3 (store_v3.cpp, chunk_io_v3.cpp).
  Kind kind_of_v3(const std::string& dir) const;
  json read_v3_document(const std::string& dir) const;
  std::string describe_array_v3(const OpenArray& a, const json& attributes) const;
  json store_facts() const;
  void create_array_v3(const std::string& dir, const json& description, json attributes);
  void check_array_description(const std::string& dir, const json& description) const;
  void set_attributes_v3(const std::string& dir, const json& attributes);
  bool read_chunk_v3(OpenArray& a, const uint64_t* index, void* out, size_t capacity,
                     uint64_t* chunk_shape);
  stowage::sdk::ArrayNode::Slabs read_chunk_slabs_v3(OpenArray& a, const uint64_t* index,
                                                     uint64_t begin, uint64_t end,
                                                     const stowage::sdk::ArrayNode::PieceFn& piece);
  void write_chunk_v3(OpenArray& a, const uint64_t* index, const void* in, size_t size,
                      const uint64_t* chunk_shape);
  bool chunk_exists_v3(const OpenArray& a, const uint64_t* index) const;
  std::shared_ptr<const ShardIndex> shard_index(const OpenArray& a, const std::string& key) const;
  ShardIndex stored_index(const V3Layout& l, const std::string& key,
                          std::optional<std::pair<bool, uint64_t>> stat = std::nullopt) const;
  bool read_whole(const std::string& key, std::optional<stowage::sdk::BufferPool::Lease>& file,
                  uint64_t want, uint64_t* got);
  std::shared_ptr<PendingShard> pending_shard(const std::string& key) const;
  std::optional<std::vector<uint8_t>> pending_inner(const std::string& key, uint64_t inner) const;
  bool place_inner_chunk(const std::string& key, const std::shared_ptr<PendingShard>& p,
                         const ArrayMeta& meta, uint64_t inner, const uint8_t* chunk,
                         std::unique_lock<std::mutex>& lock);
  void add_inner_chunk(const std::string& key, PendingShard& p, uint64_t inner,
                       std::vector<uint8_t> encoded);
  bool open_shard_file(const std::string& key, PendingShard& p, bool must);
  void finish_shard(const std::string& key, PendingShard& p, bool merge,
                    std::unique_lock<std::mutex>& lock);
  void publish_pending_shards();
  std::unique_ptr<stowage::sdk::ChunkLock> lock_chunk_v3(OpenArray& a, const uint64_t* index);
  void publish_shard_held(const OpenArray& a, const std::string& key);
  void flush_shards(const OpenArray& a);
  void forget_index(const OpenArray& a, const std::string& key) const;

  // String arrays (strings_io.cpp).
  std::string string_chunk_key(const OpenArray& a, const std::vector<uint64_t>& index) const;
  std::vector<uint8_t> decode_string_chunk(OpenArray& a, std::vector<uint8_t> bytes,
                                           const std::string& key);
  std::vector<std::string> read_string_chunk(OpenArray& a, const std::vector<uint64_t>& index);
  void write_string_chunk(OpenArray& a, const std::vector<uint64_t>& index,
                          const std::vector<uint8_t>& bytes);
  json describe_strings(const OpenArray& a, const json& attributes) const;
  void create_strings(const std::string& dir, const json& d, json attributes);

  // Consolidated metadata (consolidated.cpp).
  void open_consolidated(const json& options, bool existed);
  std::string relative(const std::string& path) const;       // "" for the root
  std::string metadata_name(const std::string& file) const;  // how errors name a metadata file
  void metadata_changing();  // before any change to the tree's metadata
  void write_consolidated();
  void close_consolidated();
  void collect_metadata(const std::string& dir, std::map<std::string, json>& entries) const;

  stowage::sdk::Storage storage_;  // all I/O: local files, memory or HTTP
  std::string root_;
  bool writable_;
  int version_ = 2;  // the store's Zarr version, 2 or 3
  // Sharded writes: inner chunks of shards not yet complete, by shard key.
  mutable std::mutex pending_mutex_;
  std::map<std::string, std::shared_ptr<PendingShard>> pending_;
  std::atomic<size_t> pending_count_{0};
  static constexpr int kMaxOpenShardFiles = 64;
  std::atomic<int> open_shard_files_{0};
  stowage::sdk::BufferPool scratch_;          // chunk files read or encoded whole
  std::optional<Consolidated> consolidated_;  // read only: the tree's metadata, from .zmetadata
  bool consolidate_on_close_ = false;         // writable: close() writes .zmetadata
  bool metadata_changed_ = false;             // writable: .zmetadata removed, to be rewritten
};

// The file holding chunk `index`: its own, or (v3 sharded) its shard's
// (chunk_io.cpp, chunk_io_v3.cpp).
std::string chunk_file(const OpenArray& a, const uint64_t* index);
std::string chunk_file_v3(const OpenArray& a, const uint64_t* index);

// The strings node of a string array (strings_io.cpp).
std::unique_ptr<stowage::sdk::Node> strings_node(ZarrStore& store, std::shared_ptr<OpenArray> a);

}  // namespace zarr
