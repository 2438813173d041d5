// Zarr v3 chunks: the codec chain after "bytes" (host codecs and crc32c),
// and sharding_indexed (zarr-specs docs/v3/codecs/sharding-indexed/v1.0.rst):
// a shard file holds inner chunks and an index of 16 bytes per inner chunk
// (offset, nbytes; both 2^64-1 for an empty one), at its start or end,
// optionally followed by a CRC-32C.
#pragma once

#include "metadata_v3.hpp"

#include <stowage/plugin.hpp>

#include <stowage/storage.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace zarr {

constexpr uint64_t kEmptyEntry = UINT64_MAX;

// A shard's index, checked: every entry lies in the shard's data and none
// overlaps another.
struct ShardIndex {
  bool exists = false;  // no shard file: every inner chunk is missing
  uint64_t file_size = 0;
  std::vector<uint64_t> entry;  // offset, nbytes per inner chunk (C order)
  bool empty(uint64_t i) const { return entry[2 * i] == kEmptyEntry; }
};

// Decodes and checks an index (its bytes as stored); CORRUPT naming `key`.
ShardIndex decode_shard_index(const uint8_t* bytes, const V3Layout& layout, const std::string& key,
                              uint64_t file_size);

// The encoded index of a shard: `entry` holds offset, nbytes per inner
// chunk (kEmptyEntry twice for an empty one), in the layout's byte order,
// with its CRC-32C when the layout has one.
std::vector<uint8_t> shard_index_bytes(const std::vector<uint64_t>& entry, const V3Layout& layout);

// What a v3 array's node handle keeps: its codecs, made on first use, and
// the indexes of the shards it read (invalidated when it writes a shard).
// The last 4 bytes of [in, in+size) are the CRC-32C of the rest: the size
// without them; CORRUPT naming `key` and `what` ("chunk") when they differ.
size_t check_crc(const uint8_t* in, size_t size, const std::string& key, const char* what);

struct V3State {
  V3State(const stowage::sdk::Host& host, const V3Layout& layout, const std::string& file);
  std::vector<std::unique_ptr<stowage::sdk::LazyHostCodec>>
      codecs;  // per layout.codecs; null for crc32c
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const ShardIndex>> indexes;

  // A chunk's stored bytes back to its `bytes` decoded bytes in `out`.
  void decode(const V3Layout& layout, const uint8_t* in, size_t size, uint8_t* out, size_t bytes,
              const std::string& key);
  // A chunk's bytes through the chain, as stored.
  std::vector<uint8_t> encode(const V3Layout& layout, const uint8_t* in, size_t bytes,
                              const std::string& key);
};

// A shard being written through the store. Its inner chunks go into a
// staged file in C order as they come: one that comes before its turn
// waits in memory until those before it are there. A host writing a region
// in C order (as it does) hands each shard its inner chunks in C order, so
// a shard is never held in memory whole, however many shards a wide region
// keeps open at once. Published with its index once every inner chunk
// inside the array is there; merged with the shard on disk when the store
// closes.
struct PendingShard {
  enum State : uint8_t { absent, waiting, in_file, outside };  // per inner chunk
  PendingShard(const ArrayMeta& meta, const std::vector<uint64_t>& shard);

  std::shared_ptr<const V3Layout> layout;
  std::mutex mutex;                          // one writer at a time
  bool done = false;                         // published: writers start a new one
  bool decided = false, placed = false;      // on the first chunk: see place_inner_chunk
  uint64_t slot_bytes = 0;                   // placed: every inner chunk's size and stride
  int in_flight = 0;                         // placed writes under way outside `mutex`
  std::condition_variable idle;              // in_flight went to 0
  std::optional<stowage::sdk::Staged> file;  // none while the store has too many open
  std::vector<uint64_t> entry;               // offset, nbytes per inner chunk
  std::vector<State> state;
  std::vector<std::vector<uint8_t>> early;  // encoded chunks waiting for their turn
  uint64_t next = 0;                        // the first inner chunk not in the file
  uint64_t count = 0, expected = 0;         // inner chunks written, and inside the array

  // Inner chunk i was written and is held here (mutex held): the shard is
  // not published yet, and the chunk waits in memory or is in the file.
  bool holds(uint64_t i) const { return !done && (state[i] == waiting || state[i] == in_file); }
  // A held chunk that is all fill value (its index entry will be empty).
  bool holds_empty(uint64_t i) const {
    return state[i] == waiting ? early[i].empty() : entry[2 * i] == kEmptyEntry;
  }
};

}  // namespace zarr
