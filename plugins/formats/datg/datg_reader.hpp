// datg_reader.hpp -- an open .datg file: footer, metadata, names and block
// index are read at open; blocks of rows are decoded on demand (any thread).
// All bytes come through the storage layer: a local file is mapped whole and
// blocks decode straight from the map (no system call or copy per block);
// from a backend that cannot map (memory, HTTP) each block is one ranged read.
#pragma once

#include "datg_codec.hpp"
#include "datg_layout.hpp"
#include "datg_names.hpp"

#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace datg {

// The paths of a dataset's three files, from "<base>" or "<base>.datg".
struct DatasetPaths {
  explicit DatasetPaths(std::string_view path);
  std::string base, matrix, rows, cols;
};

// A non-owning reference to a callable returning a container's name, only
// called to word an error; unlike std::function it never allocates, which
// matters once per block read.
class Describe {
 public:
  template <class Fn>
  Describe(const Fn& fn)  // NOLINT: implicit from any lambda
      : fn_(&fn), call_([](const void* f) { return (*static_cast<const Fn*>(f))(); }) {}
  std::string operator()() const { return call_(fn_); }

 private:
  const void* fn_;
  std::string (*call_)(const void*);
};
// Decodes a container held in memory.
void decode_container(const uint8_t* data, size_t data_size, const stowage::sdk::HostCodec& codec,
                      uint8_t flag, void* out, size_t size, const Describe& what);

// A few recently decoded blocks, so reading the rows of one block one by one
// decodes it once.
class BlockCache {
 public:
  explicit BlockCache(size_t capacity) : capacity_(capacity) {}
  bool get(uint64_t block, void* out, size_t size);
  void put(uint64_t block, const void* data, size_t size);

 private:
  // Blocks are shared, so copies in and out happen outside the lock.
  struct Entry {
    uint64_t block;
    std::shared_ptr<const std::vector<uint8_t>> bytes;
    uint64_t last_use;
  };
  std::mutex mutex_;
  std::vector<Entry> entries_;
  uint64_t clock_ = 0;
  size_t capacity_;
};

class Reader {
 public:
  // Reads through `storage` (the backend of paths.matrix).
  Reader(const stowage::sdk::Storage& storage, const DatasetPaths& paths,
         const stowage::sdk::Host& host);

  const Footer& footer() const { return footer_; }
  const Metadata& metadata() const { return metadata_; }
  const NameList& row_names() const { return row_names_; }
  const NameList& col_names() const { return col_names_; }
  uint64_t blocks() const { return offsets_.size() - 1; }
  uint8_t flag() const { return footer_.flag; }

  // Decodes block b (big-endian doubles, rows_in_block x cols) into out.
  void read_block(uint64_t block, void* out, size_t capacity);

 private:
  void load_index();
  // Bytes [begin, end) of the matrix, all of them (else CORRUPT, truncated):
  // in the map, or read into `held` (valid while it lives).
  const uint8_t* read_range(uint64_t begin, uint64_t end, stowage::sdk::Bytes& held) const;
  // Decodes the matrix container in [begin, end) into exactly `size` bytes.
  void decode_range(uint64_t begin, uint64_t end, void* out, size_t size, const Describe& what);

  stowage::sdk::Storage storage_;
  DatasetPaths paths_;
  uint64_t size_ = 0;                 // of the matrix file
  stowage::sdk::Bytes whole_;         // the whole matrix mapped, where the backend maps
  stowage::sdk::BufferPool buffers_;  // else blocks are read into these
  Footer footer_;
  Metadata metadata_;
  NameList row_names_, col_names_;
  std::vector<uint64_t> offsets_;  // one per block, then index_offset
  std::unique_ptr<stowage::sdk::HostCodec> codec_;
  bool use_cache_ = false;
  BlockCache cache_{8};
};

}  // namespace datg
