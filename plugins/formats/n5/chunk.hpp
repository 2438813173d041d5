// The N5 chunk (block) file: a big-endian header followed by the codec's
// payload.
//
//   mode (uint16): 0 default, 1 varlength, 2 object
//   mode 0/1: ndim (uint16), ndim x uint32 block size (N5 order), and for
//             mode 1 a uint32 numElements; mode 2: only uint32 numElements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace n5 {

enum ChunkMode : uint16_t { kModeDefault = 0, kModeVarlength = 1, kModeObject = 2 };

// Header bytes of a mode-0 chunk of `ndim` dimensions.
constexpr size_t default_header_size(size_t ndim) { return 4 + 4 * ndim; }
// The most header bytes a mode-0 or mode-1 chunk of `ndim` dimensions has.
constexpr size_t max_header_size(size_t ndim) { return 8 + 4 * ndim; }

struct ChunkHeader {
  uint16_t mode = kModeDefault;
  size_t size = 0;            // header bytes; the payload follows
  uint64_t elements = 0;      // product of dims (mode 0) or numElements (mode 1)
  uint64_t dims_product = 0;  // product of the header dims
};

// Parses the header of a mode 0 or 1 chunk of a dataset of `ndim`
// dimensions whose blocks are `block_c` (C order). Writes the header's
// dims, reversed into C order, to shape_c. `available` bytes are at `data`.
// Any disagreement with the dataset is CORRUPT naming `file`; header dims
// may be smaller than the block (cropped edge chunks) but never larger.
ChunkHeader parse_chunk_header(const uint8_t* data, size_t available, size_t ndim,
                               const uint64_t* block_c, uint64_t* shape_c, const std::string& file);

// Parses the 6-byte header of an object (mode 2) chunk: numElements is the
// payload's byte count.
ChunkHeader parse_object_header(const uint8_t* data, size_t available, const std::string& file);

// Writes a mode-0 header for a chunk of C-order shape `shape_c` into `out`
// (default_header_size(ndim) bytes) and returns its size.
size_t write_default_header(uint8_t* out, const uint64_t* shape_c, size_t ndim);

// Writes a mode-1 header (dims plus numElements) and returns its size.
size_t write_varlength_header(uint8_t* out, const uint64_t* shape_c, size_t ndim,
                              uint32_t num_elements);

// "<dataset dir>/<p0>/<p1>/..." with the grid position in N5 order (the
// reverse of the C-order `index`).
std::string chunk_path(const std::string& dataset_dir, const uint64_t* index_c, size_t ndim);

}  // namespace n5
