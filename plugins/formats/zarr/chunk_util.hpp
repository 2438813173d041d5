// Helpers the v2 and v3 chunk code share (defined in chunk_io.cpp, and
// read_raw_slabs in chunk_slabs.cpp).
#pragma once

#include "metadata.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/storage.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zarr {

// INVALID_ARGUMENT naming `dir` for a chunk index outside the grid.
void check_index(const ArrayMeta& meta, const uint64_t* index, const std::string& dir);

// `elements` copies of the fill value.
void fill(uint8_t* out, uint64_t elements, const FillValue& value);

// read_chunk's answer for a chunk that is not stored: false when the host
// fills it (a fill value it can write itself), else true with `out` filled.
bool missing_chunk(const ArrayMeta& meta, uint8_t* out);

// Copies a chunk of `extent` (the part of an edge chunk inside the array)
// into a whole chunk of `full`, both in the same element order.
void embed(const uint8_t* src, std::vector<uint64_t> extent, uint8_t* dst,
           std::vector<uint64_t> full, bool fortran, size_t item);

// The whole chunk a write_chunk call stands for: `in` itself, or for an edge
// chunk (chunk_shape inside the array smaller than the chunks) a copy in
// `padded` with the fill value around it, since Zarr stores edge chunks
// whole. INVALID_ARGUMENT naming `dir` for a shape or size that does not fit.
const uint8_t* whole_chunk(const ArrayMeta& meta, const std::string& dir,
                           const uint64_t* chunk_shape, const void* in, size_t size,
                           stowage::sdk::BufferPool& scratch,
                           std::optional<stowage::sdk::BufferPool::Lease>& padded);

// Hands slabs [begin, end) of an uncompressed chunk stored at byte `at` of
// `key` to `piece`, about STOWAGE_SLAB_PIECE_BYTES at a time. `file_size`:
// what the file must hold (a chunk file of its own; false when no file is
// there), none inside a shard.
bool read_raw_slabs(const stowage::sdk::Storage& storage, const std::string& key, uint64_t at,
                    std::optional<uint64_t> file_size, const ArrayMeta& meta, uint64_t begin,
                    uint64_t end, const stowage::sdk::ArrayNode::PieceFn& piece,
                    stowage::sdk::BufferPool& scratch);

}  // namespace zarr
