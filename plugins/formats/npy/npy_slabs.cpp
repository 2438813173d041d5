#include "npy_slabs.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>

namespace npy {

SlabLayout::SlabLayout(std::vector<uint64_t> shape, size_t element_size, bool fortran_order,
                       uint64_t target_bytes)
    : shape_(std::move(shape)), element_size_(element_size) {
  const size_t n = shape_.size();
  std::vector<uint64_t> file_shape = shape_;  // slowest dimension first, as stored
  if (fortran_order) std::reverse(file_shape.begin(), file_shape.end());
  chunks_ = stowage::sdk::c_order_chunks(file_shape, element_size, target_bytes);
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
      stowage::sdk::invalid(file + ": chunk index " + std::to_string(index[d]) +
                            " is outside dimension " + std::to_string(d) + " of size " +
                            std::to_string(shape_[d]));
    s.shape[d] = std::min(chunks_[d], shape_[d] - origin);
    first += origin * strides_[d];
    elements *= s.shape[d];
  }
  s.offset = first * element_size_;
  s.size = elements * element_size_;
  return s;
}

}  // namespace npy
