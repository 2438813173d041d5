// Uncompressed chunks handed to the host slab by slab (stowage_array_vtable.
// read_chunk_slabs): the host copies each piece into the caller's array while
// it is in the cache, one pass over memory where a whole chunk read into a
// buffer and copied out would take two.
#include "chunk_util.hpp"

#include <algorithm>

namespace zarr {

namespace sdk = stowage::sdk;

bool read_raw_slabs(const sdk::Storage& storage, const std::string& key, uint64_t at,
                    std::optional<uint64_t> file_size, const ArrayMeta& meta, uint64_t begin,
                    uint64_t end, const sdk::ArrayNode::PieceFn& piece, sdk::BufferPool& scratch) {
  const uint64_t slabs = meta.chunks.empty() ? 1 : meta.chunks[0];
  const uint64_t slab = meta.chunk_bytes() / std::max<uint64_t>(slabs, 1);
  end = std::min(end, slabs);
  const uint64_t per_piece =
      std::max<uint64_t>(1, STOWAGE_SLAB_PIECE_BYTES / std::max<uint64_t>(slab, 1));
  sdk::BufferPool::Lease buf = scratch.take(per_piece * slab);
  for (uint64_t s = begin; s < end; s += per_piece) {
    const uint64_t n = std::min(per_piece, end - s) * slab, offset = at + s * slab;
    if (s == begin) {
      uint64_t got = 0, size = 0;
      if (!storage.read_into_if_exists(key, offset, buf.data(), n, &got, &size)) return false;
      if (file_size && size != *file_size)
        sdk::corrupt(key + ": chunk file is " + std::to_string(size) +
                     " bytes; an uncompressed chunk of this array is " +
                     std::to_string(*file_size));
      if (got != n) sdk::corrupt(key + ": chunk ends before its slab " + std::to_string(s));
    } else {
      storage.read_exact(key, offset, buf.data(), n);
    }
    piece(buf.data(), n);
  }
  return true;
}

}  // namespace zarr
