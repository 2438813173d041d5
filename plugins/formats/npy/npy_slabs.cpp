#include "npy_slabs.hpp"

#include <stowage/plugin.hpp>

#include <algorithm>

namespace npy {

namespace {

// Chunks for a C-order layout: whole trailing dimensions while they fit the
// target, then as many rows k of the next dimension as fit (k >= 1), then 1.
// Every chunk extent is at least 1 (the host divides by them), even along a
// zero-length dimension.
std::vector<uint64_t> c_order_chunks(const std::vector<uint64_t>& shape, size_t element_size,
                                     uint64_t target) {
  const size_t n = shape.size();
  std::vector<uint64_t> chunks(n, 1);
  uint64_t slab_bytes = element_size;  // bytes of one step along dimension d-1
  size_t d = n;
  while (d > 0) {
    uint64_t extent = std::max<uint64_t>(shape[d - 1], 1);
    if (slab_bytes > target / extent) break;  // the whole dimension does not fit
    chunks[d - 1] = extent;
    slab_bytes *= extent;
    --d;
  }
  if (d > 0) chunks[d - 1] = std::clamp<uint64_t>(target / slab_bytes, 1, std::max<uint64_t>(shape[d - 1], 1));
  return chunks;
}

}  // namespace

SlabLayout::SlabLayout(std::vector<uint64_t> shape, size_t element_size, bool fortran_order,
                       uint64_t target_bytes)
    : shape_(std::move(shape)), element_size_(element_size) {
  const size_t n = shape_.size();
  std::vector<uint64_t> file_shape = shape_;  // slowest dimension first, as stored
  if (fortran_order) std::reverse(file_shape.begin(), file_shape.end());
  chunks_ = c_order_chunks(file_shape, element_size, target_bytes);
  std::vector<uint64_t> file_strides(n, 1);
  for (size_t d = n; d-- > 1;) file_strides[d - 1] = file_strides[d] * file_shape[d];
  strides_ = file_strides;
  if (fortran_order) {
    std::reverse(chunks_.begin(), chunks_.end());
    std::reverse(strides_.begin(), strides_.end());
  }
}

std::vector<uint64_t> SlabLayout::grid() const {
  std::vector<uint64_t> g(shape_.size());
  for (size_t d = 0; d < g.size(); ++d) g[d] = (shape_[d] + chunks_[d] - 1) / chunks_[d];
  return g;
}

SlabLayout::Slab SlabLayout::slab(const uint64_t* index, const std::string& file) const {
  Slab s;
  s.shape.resize(shape_.size());
  uint64_t first = 0, elements = 1;
  for (size_t d = 0; d < shape_.size(); ++d) {
    uint64_t origin = index[d] * chunks_[d];
    if (index[d] >= (shape_[d] + chunks_[d] - 1) / chunks_[d])
      stowage::sdk::invalid(file + ": chunk index " + std::to_string(index[d]) + " is outside dimension " +
                            std::to_string(d) + " of size " + std::to_string(shape_[d]));
    s.shape[d] = std::min(chunks_[d], shape_[d] - origin);
    first += origin * strides_[d];
    elements *= s.shape[d];
  }
  s.offset = first * element_size_;
  s.size = elements * element_size_;
  return s;
}

}  // namespace npy
