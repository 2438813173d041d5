#include "shard.hpp"

#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <memory>
#include <cstring>
#include <numeric>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;

namespace {

uint64_t load64(const uint8_t* p, bool big_endian) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[big_endian ? 7 - i : i]) << (8 * i);
  return v;
}

void store64(uint8_t* p, uint64_t v, bool big_endian) {
  for (int i = 0; i < 8; ++i) p[big_endian ? 7 - i : i] = uint8_t(v >> (8 * i));
}

uint32_t load32le(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }

// The CRC-32C of data[0..size), little-endian, into data[size..size+4).
void put_crc(uint8_t* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  for (int i = 0; i < 4; ++i) data[size + i] = uint8_t(crc >> (8 * i));
}

void append_crc(std::vector<uint8_t>& v) {
  v.resize(v.size() + 4);
  put_crc(v.data(), v.size() - 4);
}

}  // namespace

// The last 4 bytes of [in, in+size) are the CRC-32C of the rest; returns the size without them.
size_t check_crc(const uint8_t* in, size_t size, const std::string& key, const char* what) {
  if (size < 4)
    corrupt(key + ": " + what + " is " + std::to_string(size) +
            " bytes, too short for its crc32c checksum");
  const uint32_t stored = load32le(in + size - 4), computed = crc32c(in, size - 4);
  if (stored != computed)
    corrupt(key + ": " + what + " fails its crc32c checksum (stored " + std::to_string(stored) +
            ", computed " + std::to_string(computed) + ")");
  return size - 4;
}

ShardIndex decode_shard_index(const uint8_t* bytes, const V3Layout& layout, const std::string& key,
                              uint64_t file_size) {
  const uint64_t n = layout.chunks_per_shard, index_bytes = layout.index_bytes();
  if (layout.index_crc32c) check_crc(bytes, index_bytes, key, "the shard index");
  ShardIndex index;
  index.exists = true;
  index.file_size = file_size;
  index.entry.resize(2 * n);
  for (uint64_t i = 0; i < 2 * n; ++i)
    index.entry[i] = load64(bytes + 8 * i, layout.index_big_endian);
  // Inner chunks lie between the index and the end (index at the start) or
  // between the start and the index.
  const uint64_t lo = layout.index_at_end ? 0 : index_bytes,
                 hi = layout.index_at_end ? file_size - index_bytes : file_size;
  std::vector<uint64_t> used;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t offset = index.entry[2 * i], size = index.entry[2 * i + 1];
    if (offset == kEmptyEntry && size == kEmptyEntry) continue;
    const std::string which = "shard index entry " + std::to_string(i) + " (offset " +
                              std::to_string(offset) + ", " + std::to_string(size) + " bytes)";
    if (offset == kEmptyEntry || size == kEmptyEntry)
      corrupt(key + ": " + which + " is half empty");
    if (offset < lo || offset > hi || size > hi - offset)
      corrupt(key + ": " + which + " lies outside the shard's " + std::to_string(hi - lo) +
              " bytes of chunks");
    used.push_back(i);
  }
  std::sort(used.begin(), used.end(),
            [&](uint64_t a, uint64_t b) { return index.entry[2 * a] < index.entry[2 * b]; });
  for (size_t k = 1; k < used.size(); ++k) {
    const uint64_t a = used[k - 1], b = used[k];
    if (index.entry[2 * a] + index.entry[2 * a + 1] > index.entry[2 * b])
      corrupt(key + ": shard index entries " + std::to_string(a) + " and " + std::to_string(b) +
              " overlap");
  }
  return index;
}

std::vector<uint8_t> shard_index_bytes(const std::vector<uint64_t>& entry, const V3Layout& layout) {
  std::vector<uint8_t> index(8 * entry.size());
  for (size_t i = 0; i < entry.size(); ++i)
    store64(&index[8 * i], entry[i], layout.index_big_endian);
  if (layout.index_crc32c) append_crc(index);
  return index;
}

PendingShard::PendingShard(const ArrayMeta& meta, const std::vector<uint64_t>& shard)
    : layout(meta.v3),
      entry(2 * meta.v3->chunks_per_shard, kEmptyEntry),
      state(meta.v3->chunks_per_shard, absent),
      early(meta.v3->chunks_per_shard) {
  // Inner chunks past the array's edge never come: they stay empty.
  const std::vector<uint64_t>& per = layout->per_shard;
  for (uint64_t i = 0; i < state.size(); ++i) {
    bool inside = true;
    for (size_t d = per.size(), rest = i; d-- > 0; rest /= per[d])
      inside = inside && shard[d] * per[d] + rest % per[d] < meta.grid(d);
    if (inside)
      ++expected;
    else
      state[i] = outside;
  }
}

V3State::V3State(const sdk::Host& host, const V3Layout& layout, const std::string& file) {
  for (const BytesCodec& c : layout.codecs)
    codecs.push_back(c.crc32c ? nullptr
                              : std::make_unique<sdk::LazyHostCodec>(host, c.host.dump(), file));
}

// The chain undone from its last codec to its first. Usually one
// compressor (maybe with a crc32c after it): then it decodes straight
// into `out`; a deeper chain goes through temporary buffers.
void V3State::decode(const V3Layout& layout, const uint8_t* in, size_t size, uint8_t* out,
                     size_t bytes, const std::string& key) {
  std::vector<uint8_t> a, b;
  for (size_t i = layout.codecs.size(); i-- > 0;) {
    if (layout.codecs[i].crc32c) {
      size = check_crc(in, size, key, "chunk");
      continue;
    }
    bool first = true;  // the first codec of the chain decodes to the chunk itself
    for (size_t k = 0; k < i; ++k) first = first && layout.codecs[k].crc32c;
    uint8_t* to = out;
    size_t capacity = bytes;
    if (!first) {
      b.resize(std::max<size_t>(4 * size, bytes + bytes / 8 + 4096));
      to = b.data(), capacity = b.size();
    }
    try {
      size = codecs[i]->get().decode(in, size, to, capacity);
    } catch (const sdk::Error& e) {
      fail(e.code(), key + ": " + e.what());
    }
    if (first) {
      if (size != bytes)
        corrupt(key + ": chunk decodes to " + std::to_string(size) +
                " bytes; a chunk of this array is " + std::to_string(bytes));
      return;
    }
    b.resize(size);
    std::swap(a, b);
    in = a.data();
  }
  // No compressor: the stored bytes (checksums taken off) are the chunk.
  if (size != bytes)
    corrupt(key + ": chunk is " + std::to_string(size) +
            " bytes; an uncompressed chunk of this array is " + std::to_string(bytes));
  if (in != out) std::memmove(out, in, bytes);
}

std::vector<uint8_t> V3State::encode(const V3Layout& layout, const uint8_t* in, size_t bytes,
                                     const std::string& key) {
  // The chunk is read in place and each codec writes a buffer left
  // uninitialised: copying the chunk and zero-filling the codec's bound (two
  // 32 MiB passes for a 256^3 uint16 chunk) cost as much as zstd encoding it.
  const uint8_t* cur = in;
  size_t size = bytes;
  std::unique_ptr<uint8_t[]> held;
  for (size_t i = 0; i < layout.codecs.size(); ++i) {
    std::unique_ptr<uint8_t[]> next;
    if (layout.codecs[i].crc32c) {
      next.reset(new uint8_t[size + 4]);
      std::memcpy(next.get(), cur, size);
      put_crc(next.get(), size);
      size += 4;
    } else {
      const sdk::HostCodec& codec = codecs[i]->get();
      const size_t bound = codec.bound(size);
      next.reset(new uint8_t[bound]);
      try {
        size = codec.encode(cur, size, next.get(), bound);
      } catch (const sdk::Error& e) {
        fail(e.code(), key + ": " + e.what());
      }
    }
    held = std::move(next);
    cur = held.get();
  }
  return std::vector<uint8_t>(cur, cur + size);
}

}  // namespace zarr
