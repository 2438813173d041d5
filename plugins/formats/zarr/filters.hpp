// numcodecs' filters in a .zarray's "filters" list: delta, shuffle and
// astype. zarr-python runs them in list order on a chunk before the
// compressor, and undoes them in reverse order after it:
//
//   {"id":"delta","dtype":"<i4","astype":"<i2"}   x[0], x[1]-x[0], ... computed in dtype, stored as
//   astype
//                                                 (decode: a running sum in dtype, numpy's cumsum)
//   {"id":"shuffle","elementsize":4}              byte k of element i goes to k*count + i (blosc's
//   shuffle,
//                                                 without blosc); elementsize <= 1 copies
//   {"id":"astype","encode_dtype":"<f4",          each element cast to encode_dtype (numpy's
//   astype:
//    "decode_dtype":"<f8"}                         floats truncate to integers, integers wrap)
//
// The semantics are numcodecs 0.11's (numcodecs/delta.py, shuffle.py,
// astype.py, _shuffle.pyx). A filter can change a chunk's size (astype f8
// to f4 halves it), so a filtered chunk is never decoded straight into the
// host's buffer: the compressor's output goes to scratch, the filters undo
// it into the host's buffer.
#pragma once

#include "metadata.hpp"

#include <stowage/plugin_util.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zarr {

struct Filter {
  enum class Id { delta, shuffle, astype } id;
  DataType decoded, encoded;  // delta: dtype and astype; astype: decode_dtype and encode_dtype
  size_t element_size = 0;    // shuffle
};

// A .zarray's filters for chunks of `chunk_bytes` bytes.
struct FilterChain {
  std::vector<Filter> filters;  // in the file's order: the order they encode in
  // bytes[i]: a chunk's size entering filter i when encoding; bytes.back()
  // is what the compressor sees.
  std::vector<uint64_t> bytes;
  uint64_t encoded_bytes() const { return bytes.back(); }
};

// The filters of a .zarray's "filters" value; null for null or an empty
// list. Malformed entries are CORRUPT naming `file`, a filter other than
// the three UNSUPPORTED naming `file` and its id.
std::shared_ptr<const FilterChain> parse_filters(const json& filters, uint64_t chunk_bytes,
                                                 const std::string& file);

// Undoes every filter, last first: `in` holds chain.encoded_bytes(), `out`
// receives chain.bytes[0]. Intermediate steps use `scratch`.
void decode_filters(const FilterChain& chain, const uint8_t* in, uint8_t* out,
                    stowage::sdk::BufferPool& scratch);

// Applies every filter, first first, to a whole chunk `in` of
// chain.bytes[0]; the result (chain.encoded_bytes()) is in the lease.
stowage::sdk::BufferPool::Lease encode_filters(const FilterChain& chain, const uint8_t* in,
                                               stowage::sdk::BufferPool& scratch);

}  // namespace zarr
