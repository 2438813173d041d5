#include "chunk.hpp"

#include <stowage/plugin_util.hpp>

namespace n5 {

using stowage::sdk::corrupt;
using stowage::sdk::load_be;
using stowage::sdk::store_be;
using stowage::sdk::unsupported;

ChunkHeader parse_chunk_header(const uint8_t* data, size_t available, size_t ndim,
                               const uint64_t* block_c, uint64_t* shape_c,
                               const std::string& file) {
  if (available < 4)
    corrupt(file + ": chunk is " + std::to_string(available) + " bytes, too short for a header");
  ChunkHeader h;
  h.mode = load_be<uint16_t>(data);
  if (h.mode == kModeObject)
    unsupported(file + ": an object-mode (mode 2) chunk in a numeric dataset");
  if (h.mode != kModeDefault && h.mode != kModeVarlength)
    corrupt(file + ": unknown chunk mode " + std::to_string(h.mode) + " (expected 0 or 1)");
  size_t header_ndim = load_be<uint16_t>(data + 2);
  if (header_ndim != ndim)
    corrupt(file + ": chunk header has " + std::to_string(header_ndim) +
            " dimensions, the dataset has " + std::to_string(ndim));
  h.size = default_header_size(ndim) + (h.mode == kModeVarlength ? 4 : 0);
  if (available < h.size)
    corrupt(file + ": chunk is " + std::to_string(available) + " bytes, shorter than its " +
            std::to_string(h.size) + "-byte header");
  h.dims_product = 1;
  for (size_t i = 0; i < ndim; ++i) {
    uint64_t dim = load_be<uint32_t>(data + 4 + 4 * i);
    size_t c = ndim - 1 - i;  // N5 order -> C order
    if (dim > block_c[c])
      corrupt(file + ": chunk header dimension " + std::to_string(i) + " is " +
              std::to_string(dim) + ", larger than the dataset's blockSize " +
              std::to_string(block_c[c]));
    shape_c[c] = dim;
    h.dims_product *= dim;  // bounded by the block size, itself bounded by 2 GiB
  }
  h.elements = h.mode == kModeVarlength ? load_be<uint32_t>(data + 4 + 4 * ndim) : h.dims_product;
  return h;
}

ChunkHeader parse_object_header(const uint8_t* data, size_t available, const std::string& file) {
  if (available < 6)
    corrupt(file + ": chunk is " + std::to_string(available) +
            " bytes, too short for an object header");
  ChunkHeader h;
  h.mode = load_be<uint16_t>(data);
  if (h.mode != kModeObject)
    corrupt(file + ": an object dataset's chunk must have mode 2, found mode " +
            std::to_string(h.mode));
  h.size = 6;
  h.elements = load_be<uint32_t>(data + 2);
  h.dims_product = h.elements;
  return h;
}

size_t write_default_header(uint8_t* out, const uint64_t* shape_c, size_t ndim) {
  store_be<uint16_t>(out, kModeDefault);
  store_be<uint16_t>(out + 2, static_cast<uint16_t>(ndim));
  for (size_t i = 0; i < ndim; ++i)
    store_be<uint32_t>(out + 4 + 4 * i, static_cast<uint32_t>(shape_c[ndim - 1 - i]));
  return default_header_size(ndim);
}

size_t write_varlength_header(uint8_t* out, const uint64_t* shape_c, size_t ndim,
                              uint32_t num_elements) {
  write_default_header(out, shape_c, ndim);
  store_be<uint16_t>(out, kModeVarlength);
  store_be<uint32_t>(out + default_header_size(ndim), num_elements);
  return default_header_size(ndim) + 4;
}

std::string chunk_path(const std::string& dataset_dir, const uint64_t* index_c, size_t ndim) {
  std::string path = dataset_dir;
  path.reserve(path.size() + ndim * 4);
  for (size_t i = ndim; i-- > 0;) {
    path += '/';
    path += std::to_string(index_c[i]);
  }
  return path;
}

}  // namespace n5
