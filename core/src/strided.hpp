// Element kernels between strided layouts, element fills, and a shape's element count.
#pragma once

#include <stowage/stowage.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stowage::detail {

// How copy_strided writes: `swap` reverses each element's bytes (each
// part's own, for an element of `parts` numbers: 2 for complex); `stream`
// writes whole destination cache lines with non-temporal stores (for large
// destinations that will not stay in cache anyway).
struct CopyMode {
  bool swap = false;
  bool stream = false;
  unsigned parts = 1;
};

// The numbers an element of dtype is made of, each byte-swapped on its own.
inline unsigned swap_parts(DType dtype) { return dtype_is_complex(dtype) ? 2 : 1; }

// Copies an n-d block of elements between two strided layouts. Strides are
// in elements.
void copy_strided(const void* src, const int64_t* src_strides, void* dst,
                  const int64_t* dst_strides, const uint64_t* shape, size_t ndim,
                  size_t element_size, CopyMode mode);

// One chunk's share of a run of chunks that sit side by side along the
// fastest dimension of a C-order buffer: the caller's buffer on a read (the
// destination), or on a write (the source).
struct RowPart {
  const void* src;             // the part's first element in the source
  const int64_t* src_strides;  // the source's element strides (the last is 1)
  void* dst;                   // where that element goes
  const int64_t* dst_strides;  // the destination's element strides (the last is 1)
  uint64_t width;              // elements along the fastest dimension
};

// Copies the parts of side-by-side chunks row by row of the caller's buffer
// (every part of row 0, then of row 1, ...), so that buffer is read or
// written in order instead of in one short run per chunk row: several times
// faster once it is larger than the caches. `lead_shape` is the parts'
// common extent in the ndim-1 leading dimensions.
void copy_side_by_side(const std::vector<RowPart>& parts, const uint64_t* lead_shape, size_t ndim,
                       size_t element_size, CopyMode mode);

// The number of elements of a shape (1 for rank 0).
inline uint64_t product(const std::vector<uint64_t>& v) {
  uint64_t p = 1;
  for (uint64_t x : v) p *= x;
  return p;
}

// Fills `count` elements with `value` converted to dtype, in the given byte
// order; `imag` is the imaginary part for a complex dtype.
void fill_elements(void* dst, size_t count, DType dtype, double value, bool big_endian,
                   double imag = 0);

}  // namespace stowage::detail
