// stowage/array_limits.hpp -- whether a dense array's sizes can be opened.
//
// The host refuses to open an array whose extents, bytes or chunk count do
// not fit its 64-bit offsets (core/src/dtype.cpp, parse_node_info). A
// format's create and the core's Store::create check the same rule here
// before any byte is written, so whatever create accepts, open accepts: a
// node written that open then calls corrupt makes the whole store fail to
// list.
#ifndef STOWAGE_ARRAY_LIMITS_HPP
#define STOWAGE_ARRAY_LIMITS_HPP

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::sdk {

inline std::string extents_text(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// Whether prod(dims) * element_size, zero extents left out as the host
// leaves them, fits an int64_t byte offset; every extent fits one too.
inline bool addressable(const std::vector<uint64_t>& dims, uint64_t element_size) {
  uint64_t bytes = element_size ? element_size : 1;
  for (uint64_t n : dims) {
    if (n > static_cast<uint64_t>(INT64_MAX)) return false;
    if (n == 0) continue;
    if (n > static_cast<uint64_t>(INT64_MAX) / bytes) return false;
    bytes *= n;
  }
  return true;
}

// Whether the chunk grid of `shape` in `chunks` (same rank, no zero chunk)
// has at most 2^64 - 1 chunks.
inline bool countable_grid(const std::vector<uint64_t>& shape,
                           const std::vector<uint64_t>& chunks) {
  uint64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const uint64_t grid = shape[d] / chunks[d] + (shape[d] % chunks[d] != 0);
    if (grid != 0 && count > UINT64_MAX / grid) return false;
    if (grid != 0) count *= grid;
  }
  return true;
}

// Why an array of `shape` in `chunks` of `dtype` (element_size bytes) cannot
// be opened, or "" when it can. The format's own limits (N5's and Zarr's
// 2 GiB chunks) are its own to check.
inline std::string array_size_problem(const std::vector<uint64_t>& shape,
                                      const std::vector<uint64_t>& chunks, uint64_t element_size,
                                      std::string_view dtype) {
  const std::string of = " of " + std::string(dtype);
  if (!addressable(shape, element_size))
    return "shape " + extents_text(shape) + of + " is more bytes than a 64-bit offset can address";
  if (chunks.size() != shape.size())
    return "chunks " + extents_text(chunks) + " and shape " + extents_text(shape) +
           " differ in rank";
  for (uint64_t c : chunks)
    if (c == 0)
      return "chunks " + extents_text(chunks) + " has an extent of 0; each must be at least 1";
  if (!addressable(chunks, element_size))
    return "chunks " + extents_text(chunks) + of +
           " are more bytes than a 64-bit offset can address";
  if (!countable_grid(shape, chunks))
    return "shape " + extents_text(shape) + " in chunks " + extents_text(chunks) +
           " is more than 2^64 chunks";
  return "";
}

}  // namespace stowage::sdk

#endif  // STOWAGE_ARRAY_LIMITS_HPP
