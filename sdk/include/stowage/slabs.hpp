// stowage/slabs.hpp -- an uncompressed chunk handed to the host slab by slab
// (stowage_array_vtable.read_chunk_slabs): a format finds where the chunk's
// elements lie in a file, read_slabs reads them a cache-sized piece at a time.
#ifndef STOWAGE_SLABS_HPP
#define STOWAGE_SLABS_HPP

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace stowage::sdk {

// Hands slabs [begin, end) of `slab` bytes each, the first stored at byte
// `at` of `key`, to `piece`, about STOWAGE_SLAB_PIECE_BYTES at a time (one
// slab at least). A file too short for them is NOT_FOUND or IO naming `key`.
inline void read_slabs(const Storage& storage, std::string_view key, uint64_t at, uint64_t slab,
                       uint64_t begin, uint64_t end, const ArrayNode::PieceFn& piece,
                       BufferPool& scratch) {
  if (slab == 0 || begin >= end) return;
  const uint64_t per_piece = std::max<uint64_t>(1, STOWAGE_SLAB_PIECE_BYTES / slab);
  BufferPool::Lease buf =
      scratch.take(static_cast<size_t>(std::min(per_piece, end - begin) * slab));
  for (uint64_t s = begin; s < end; s += per_piece) {
    const uint64_t n = std::min(per_piece, end - s) * slab;
    storage.read_exact(key, at + s * slab, buf.data(), n);
    piece(buf.data(), static_cast<size_t>(n));
  }
}

}  // namespace stowage::sdk

#endif
