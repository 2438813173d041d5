#include "daf_packed.hpp"

#include <stowage/plugin_util.hpp>

#include <cstring>
#include <functional>
#include <memory>

namespace daf {

namespace sdk = stowage::sdk;
using sdk::corrupt;

namespace {

constexpr uint64_t kEmptyChunk = UINT64_MAX;  // Zarr sharding: a chunk never written
constexpr uint64_t kDeflateMaxRatio =
    1032;  // no codec here expands a payload more than deflate can

// The codec chain of a DataAxesFormats compression name.
struct Codec {
  std::unique_ptr<sdk::HostCodec> codec;
  bool unshuffle = false;  // numcodecs-style byte shuffle after decoding
};

Codec codec_for(const sdk::Host& host, const Packing& p, const std::string& file) {
  Codec c;
  std::string name = p.compression;
  if (name == "gzip" || name == "gzip_shuffle")
    c.codec = std::make_unique<sdk::HostCodec>(host, R"({"type":"gzip"})");
  else if (name == "zstd")
    c.codec = std::make_unique<sdk::HostCodec>(host, R"({"type":"zstd"})");
  else if (name == "blosc_zstd_bitshuffle" || name == "blosc_lz4_bitshuffle")
    c.codec = std::make_unique<sdk::HostCodec>(
        host, R"({"type":"blosc"})");  // blosc undoes its own shuffle
  else
    sdk::unsupported(file + ": packed compression \"" + name +
                     "\" is not supported (gzip, gzip_shuffle, zstd and "
                     "blosc_* are)");
  c.unshuffle = name == "gzip_shuffle";
  return c;
}

// Undoes a byte shuffle: byte b of element i was stored at b * n + i.
void unshuffle_bytes(std::vector<unsigned char>& data, size_t element_size) {
  if (element_size <= 1) return;
  size_t n = data.size() / element_size;
  std::vector<unsigned char> out(data.size());
  for (size_t b = 0; b < element_size; ++b)
    for (size_t i = 0; i < n; ++i) out[i * element_size + b] = data[b * n + i];
  data.swap(out);
}

// Decodes one payload; `exact` is its decoded size when known (numbers), or
// 0 when it must be found (strings): then the buffer grows until it fits.
std::vector<unsigned char> decode(const Codec& c, const unsigned char* in, size_t n, size_t exact,
                                  const std::string& file) {
  if (exact) {
    std::vector<unsigned char> out(exact);
    size_t got = c.codec->decode(in, n, out.data(), out.size());
    if (got != exact)
      corrupt(file + ": a chunk decodes to " + std::to_string(got) + " bytes, expected " +
              std::to_string(exact));
    return out;
  }
  // The buffer grows, but never past what the payload can expand to.
  size_t limit = kDeflateMaxRatio * n + (64 << 10);
  for (size_t capacity = std::min(limit, std::max<size_t>(64 << 10, 4 * n));;
       capacity = std::min(limit, 2 * capacity)) {
    std::vector<unsigned char> out(capacity);
    try {
      out.resize(c.codec->decode(in, n, out.data(), out.size()));
      return out;
    } catch (const sdk::Error& e) {
      if (e.code() != STOWAGE_CORRUPT || capacity >= limit) throw;
    }
  }
}

// Calls chunk(origin, payload) for every chunk of the shard, with `origin`
// the chunk's grid position (Julia order). Missing chunks get an empty payload.
void for_each_chunk(
    const std::string& file, std::string_view shard, const Packing& p,
    const std::vector<uint64_t>& shape,
    const std::function<void(const std::vector<uint64_t>&, const unsigned char*, size_t)>& chunk) {
  if (p.chunk_shape.size() != shape.size())
    corrupt(file + ": chunk_shape has " + std::to_string(p.chunk_shape.size()) +
            " dimensions, the data " + std::to_string(shape.size()));
  // A chunk larger than the data (beyond Julia's 8 KiB target) is not
  // something DataAxesFormats writes; refuse it before allocating for it.
  uint64_t chunk_elements = 1, elements = 1;
  bool oversized = false;
  for (size_t d = 0; d < shape.size(); ++d) {
    oversized |= p.chunk_shape[d] > std::max<uint64_t>(shape[d], 1 << 20);
    chunk_elements *= std::min<uint64_t>(p.chunk_shape[d], 1 << 20), elements *= shape[d];
  }
  if (oversized || chunk_elements > std::max<uint64_t>(elements, 1 << 20))
    corrupt(file + ": chunk_shape is larger than the data it chunks");
  std::vector<uint64_t> grid(shape.size());
  uint64_t n_chunks = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    grid[d] = (shape[d] + p.chunk_shape[d] - 1) / p.chunk_shape[d];
    n_chunks *= grid[d];
  }
  if (n_chunks > (shard.size() - std::min<size_t>(shard.size(), 4)) / 16)
    corrupt(file + ": too short for the index of " + std::to_string(n_chunks) + " chunks");
  const auto* bytes = reinterpret_cast<const unsigned char*>(shard.data());
  std::vector<uint64_t> at(shape.size(), 0);
  for (uint64_t k = 0; k < n_chunks; ++k) {
    uint64_t offset = sdk::load_le<uint64_t>(bytes + 16 * k),
             nbytes = sdk::load_le<uint64_t>(bytes + 16 * k + 8);
    if (offset == kEmptyChunk && nbytes == kEmptyChunk) {
      chunk(at, nullptr, 0);
    } else {
      if (offset > shard.size() || nbytes > shard.size() - offset)
        corrupt(file + ": chunk " + std::to_string(k) + " lies outside the file");
      chunk(at, bytes + offset, nbytes);
    }
    for (size_t d = 0; d < at.size() && ++at[d] == grid[d]; ++d) at[d] = 0;  // column-major walk
  }
}

// Calls place(chunk_offset, array_offset, n) for each run of a decoded
// column-major chunk that falls inside the column-major array.
template <class F>
void for_each_run(const std::vector<uint64_t>& shape, const std::vector<uint64_t>& chunk_shape,
                  const std::vector<uint64_t>& at, F&& place) {
  uint64_t r0 = at[0] * chunk_shape[0], rows = std::min(chunk_shape[0], shape[0] - r0);
  if (shape.size() == 1) return place(uint64_t(0), r0, rows);
  uint64_t c0 = at[1] * chunk_shape[1], cols = std::min(chunk_shape[1], shape[1] - c0);
  for (uint64_t c = 0; c < cols; ++c) place(c * chunk_shape[0], (c0 + c) * shape[0] + r0, rows);
}

uint64_t product(const std::vector<uint64_t>& v) {
  uint64_t p = 1;
  for (uint64_t x : v) p *= x;
  return p;
}

}  // namespace

std::vector<unsigned char> read_packed_numeric(const sdk::Host& host, const std::string& zip_path,
                                               std::string_view shard, const Packing& packing,
                                               const std::vector<uint64_t>& shape,
                                               size_t element_size) {
  if (shape.empty() || shape.size() > 2) corrupt(zip_path + ": packed data of unexpected rank");
  Codec codec = codec_for(host, packing, zip_path);
  std::vector<unsigned char> out(product(shape) * element_size);
  size_t chunk_bytes = product(packing.chunk_shape) * element_size;
  for_each_chunk(zip_path, shard, packing, shape,
                 [&](const std::vector<uint64_t>& at, const unsigned char* in, size_t n) {
                   if (!in) return;  // never written: zeros
                   std::vector<unsigned char> chunk = decode(codec, in, n, chunk_bytes, zip_path);
                   if (codec.unshuffle) unshuffle_bytes(chunk, element_size);
                   for_each_run(shape, packing.chunk_shape, at,
                                [&](uint64_t from, uint64_t to, uint64_t count) {
                                  std::memcpy(out.data() + to * element_size,
                                              chunk.data() + from * element_size,
                                              count * element_size);
                                });
                 });
  return out;
}

std::vector<std::string> read_packed_strings(const sdk::Host& host, const std::string& zip_path,
                                             std::string_view shard, const Packing& packing,
                                             const std::vector<uint64_t>& shape) {
  if (shape.empty() || shape.size() > 2) corrupt(zip_path + ": packed data of unexpected rank");
  Codec codec = codec_for(host, packing, zip_path);
  std::vector<std::string> out(product(shape));
  uint64_t per_chunk = product(packing.chunk_shape);
  for_each_chunk(zip_path, shard, packing, shape,
                 [&](const std::vector<uint64_t>& at, const unsigned char* in, size_t n) {
                   if (!in) return;
                   std::vector<unsigned char> chunk = decode(codec, in, n, 0, zip_path);
                   // vlen-utf8: u32 count, then (u32 length, bytes) per value.
                   std::vector<std::string> values;
                   size_t pos = 4;
                   if (chunk.size() < 4 || sdk::load_le<uint32_t>(chunk.data()) != per_chunk)
                     corrupt(zip_path + ": a string chunk does not hold " +
                             std::to_string(per_chunk) + " values");
                   for (uint64_t i = 0; i < per_chunk; ++i) {
                     if (chunk.size() - pos < 4)
                       corrupt(zip_path + ": a string chunk is truncated");
                     uint32_t len = sdk::load_le<uint32_t>(chunk.data() + pos);
                     pos += 4;
                     if (chunk.size() - pos < len)
                       corrupt(zip_path + ": a string chunk is truncated");
                     values.emplace_back(reinterpret_cast<const char*>(chunk.data() + pos), len);
                     pos += len;
                   }
                   for_each_run(shape, packing.chunk_shape, at,
                                [&](uint64_t from, uint64_t to, uint64_t count) {
                                  for (uint64_t i = 0; i < count; ++i)
                                    out[to + i] = std::move(values[from + i]);
                                });
                 });
  return out;
}

}  // namespace daf
