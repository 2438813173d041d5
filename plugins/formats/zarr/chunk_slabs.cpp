// Uncompressed chunks handed to the host slab by slab (stowage_array_vtable.
// read_chunk_slabs): the host copies each piece into the caller's array while
// it is in the cache, one pass over memory where a whole chunk read into a
// buffer and copied out would take two.
#include "chunk_util.hpp"

#include <stowage/slabs.hpp>

#include <algorithm>

namespace zarr {

namespace sdk = stowage::sdk;

bool read_raw_slabs(const sdk::Storage& storage, const std::string& key, uint64_t at,
                    std::optional<uint64_t> file_size, const ArrayMeta& meta, uint64_t begin,
                    uint64_t end, const sdk::ArrayNode::PieceFn& piece, sdk::BufferPool& scratch) {
  uint64_t size = 0;
  if (file_size) {
    if (storage.kind(key, &size) != STOWAGE_ENTRY_FILE) return false;
    if (size != *file_size)
      sdk::corrupt(key + ": chunk file is " + std::to_string(size) +
                   " bytes; an uncompressed chunk of this array is " + std::to_string(*file_size));
  }
  const uint64_t slabs = meta.chunks.empty() ? 1 : meta.chunks[0];
  sdk::read_slabs(storage, key, at, meta.chunk_bytes() / std::max<uint64_t>(slabs, 1), begin,
                  std::min(end, slabs), piece, scratch);
  return true;
}

}  // namespace zarr
