// A datadings dataset on disk: X.msgpack plus its index files, read lazily
// (Reader) or written once (Writer). Byte layouts: docs/formats/datadings.md.
// All I/O goes through the storage layer (sdk::Storage): a local file,
// mem://, or http:// (read only); nothing here touches a file itself.
#pragma once

#include "hashes.hpp"
#include "msgpack_scan.hpp"

#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <nlohmann/json.hpp>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace datadings {

// The file names of a dataset: the data file name plus a suffix each.
struct DatasetPaths {
  explicit DatasetPaths(std::string data_path);
  std::string data, offsets, keys, key_hashes, filter, md5, legacy_index;
  std::string directory;  // with a trailing '/', or empty
};

std::string base_name(const std::string& path);

// std::call_once with a lock-free fast path once done: libstdc++'s
// call_once sets two thread-locals and calls pthread_once every time, too
// much for a `contains`. A load that throws is tried again next time.
class Once {
 public:
  template <class Load>
  void operator()(Load&& load) {
    if (done_.load(std::memory_order_acquire)) return;
    std::call_once(flag_, [&] {
      load();
      done_.store(true, std::memory_order_release);
    });
  }

 private:
  std::once_flag flag_;
  std::atomic<bool> done_{false};
};

// Salted key hash -> sample index: datadings' lookup through .key_hashes.
class HashIndex {
 public:
  HashIndex(const uint8_t salt[8], std::vector<uint64_t> hashes);
  // The index of the sample whose key hashes like `key` (datadings does not
  // compare the key itself: a 64-bit collision with an absent key is an
  // accepted risk).
  std::optional<uint64_t> find(std::string_view key) const { return table_.find(hasher_(key)); }
  std::optional<uint64_t> find_hash(uint64_t hash) const { return table_.find(hash); }
  uint64_t hash(std::string_view key) const { return hasher_(key); }
  const uint8_t* salt() const { return hasher_.salt(); }
  const std::vector<uint64_t>& hashes() const { return hashes_; }
  // Index of a second sample with the same hash as an earlier one, if any.
  std::optional<uint64_t> first_duplicate() const { return table_.first_duplicate(); }

  // datadings' salt search: salt 0, 1, 2, ... until no two keys collide.
  static HashIndex for_keys(const KeyList& keys);

 private:
  KeyHasher hasher_;
  std::vector<uint64_t> hashes_;  // in sample order
  FingerprintTable table_;
};

// A byte buffer starting on a page, as sdk::PageBuffer: a ranged read from
// the page cache into malloc's 16-byte page offset runs into 4K aliasing.
using PageChars = std::vector<char, stowage::sdk::PageAlignedAllocator<char>>;

// Buffers for ranged reads of samples, owned by a Reader and reused across
// its reads (no thread_local). A read takes one and gives it back; a read
// made from inside an item callback simply takes another.
class BufferPool {
 public:
  class Lease {
   public:
    Lease(BufferPool& pool, PageChars buffer) : pool_(pool), buffer_(std::move(buffer)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_.give_back(std::move(buffer_)); }
    char* get(size_t size) {
      if (buffer_.size() < size) buffer_.resize(size);
      return buffer_.data();
    }

   private:
    BufferPool& pool_;
    PageChars buffer_;
  };
  Lease take();

 private:
  void give_back(PageChars buffer);
  std::mutex mutex_;
  std::vector<PageChars> free_;
};

// Read access. Opening checks that the data file and an index exist, as
// datadings does; offsets, keys, hashes and the filter load on first use.
// All methods are safe to call from many threads at once.
class Reader {
 public:
  // `host` receives a warning when the key files are missing. use_map:
  // read samples in place from the data file held by the storage (the
  // default; the "mmap" open option), where that is a read-only memory map
  // (a local file); else, and with "mmap": false, with ranged reads.
  Reader(const stowage::sdk::Storage& storage, const std::string& data_path,
         const stowage::sdk::Host& host, bool use_map = true);

  bool legacy() const { return legacy_; }
  uint64_t count();
  // Calls item(bytes, size) for samples [begin, end), each checked to be one
  // msgpack object: straight from the map, or many samples per pread.
  void read(uint64_t begin, uint64_t end, const stowage::sdk::ItemFn& item);
  std::string_view key(uint64_t index);
  std::optional<uint64_t> find(std::string_view key);
  // The Bloom filter's answer first, then a table of the keys (as
  // datadings), both from one BLAKE2s digest of the key: see contains().
  bool contains(std::string_view key);
  // present[i] = contains(keys[i]), pipelined over the keys.
  void contains(uint64_t count, const char* const* keys, const uint64_t* sizes, uint8_t* present);
  // The Bloom filter alone; nullopt when the dataset has no filter.
  std::optional<bool> filter_maybe(std::string_view key);
  const HashIndex& hash_index();
  // Checks the .md5 lines against the files; says which file differs.
  nlohmann::ordered_json verify();
  const DatasetPaths& paths() const { return paths_; }

 private:
  const std::vector<uint64_t>& offsets();
  const KeyList& keys();
  const BloomFilter* filter();
  const FingerprintTable& presence();
  void load_count();
  void load_offsets();
  void load_keys();
  void load_legacy_index();
  void load_hashes();
  void load_filter();
  void load_presence();
  void check_offsets(const std::string& source);
  [[noreturn]] void bad_sample(uint64_t index, const std::string& what);
  void give(uint64_t index, std::string_view sample, const stowage::sdk::ItemFn& item);
  const unsigned char* map();  // null: ranged reads
  void read_ranges(uint64_t begin, uint64_t end, const stowage::sdk::ItemFn& item);
  void require_data_until(uint64_t end, uint64_t now);
  uint64_t data_size_now() const;
  stowage::sdk::Bytes read_whole(const std::string& path) const;

  stowage::sdk::Storage storage_;
  DatasetPaths paths_;
  uint64_t data_size_ = 0;
  bool legacy_ = false;
  bool use_map_ = true;
  stowage::sdk::Bytes map_;  // the data file, mapped (and watched) on the first read
  BufferPool buffers_;       // for ranged reads

  Once map_once_, count_once_, offsets_once_, keys_once_, hashes_once_, filter_once_,
      presence_once_;
  uint64_t count_ = 0;
  std::vector<uint64_t> offsets_;
  KeyList keys_;
  std::unique_ptr<HashIndex> hashes_;
  std::unique_ptr<BloomFilter> filter_;
  std::unique_ptr<FingerprintTable> presence_;
};

// Writes a new dataset. Samples go to a staged data file; close() stages
// every index file and publishes the six as one set (a journal the next
// opener completes if the writer dies half-way). A writer destroyed without
// close() leaves nothing behind.
class Writer {
 public:
  Writer(const stowage::sdk::Storage& storage, const std::string& data_path);

  // Appends msgpack samples. The whole batch is checked first (a map with a
  // str "key", no reserved key, no duplicate); a refused batch writes nothing.
  void append(uint64_t count, const void* const* records, const uint64_t* sizes);
  uint64_t count() const { return keys_.size(); }
  std::string_view key(uint64_t index) const;
  std::optional<uint64_t> find(std::string_view key) const;
  void commit();

 private:
  std::string check_batch(uint64_t count, const void* const* records, const uint64_t* sizes,
                          std::vector<std::string_view>& batch_keys) const;
  void write_data(const void* data, size_t size);
  void flush();

  stowage::sdk::Storage storage_;
  DatasetPaths paths_;
  stowage::sdk::Staged data_;  // the data file, staged
  std::string buffer_;
  Md5 data_md5_;
  uint64_t data_size_ = 0;
  std::vector<uint64_t> offsets_{0};
  KeyList keys_;
  std::unordered_map<std::string, uint64_t> index_;
  bool failed_ = false;  // a write error left the data file inconsistent
  bool committed_ = false;
};

}  // namespace datadings
