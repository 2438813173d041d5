// npy_slabs -- how an .npy array is cut into chunks for the host.
//
// The data of an .npy file is one contiguous block, so any chunk shape of the
// form [1, ..., 1, k, full, ..., full] (C order; mirrored for Fortran order)
// is a contiguous slab of the file: read_chunk is a single pread straight
// into the host's buffer and write_chunk a single pwrite, and the host reads
// or writes the slabs in parallel. We pick the largest such slab not above a
// target size (a few MiB), so that per-chunk overhead vanishes while the
// host's per-thread chunk buffers stay small.
#ifndef STOWAGE_NPY_SLABS_HPP
#define STOWAGE_NPY_SLABS_HPP

#include <cstdint>
#include <string>
#include <vector>

namespace npy {

class SlabLayout {
 public:
  SlabLayout() = default;
  // shape in C order; fortran_order says how the elements are laid out.
  SlabLayout(std::vector<uint64_t> shape, size_t element_size, bool fortran_order,
             uint64_t target_bytes);

  const std::vector<uint64_t>& chunks() const { return chunks_; }
  // Number of chunks along each dimension.
  std::vector<uint64_t> grid() const;

  struct Slab {
    uint64_t offset = 0;          // bytes from the start of the data
    uint64_t size = 0;            // bytes
    std::vector<uint64_t> shape;  // the chunk clipped to the array (C order)
  };
  // The slab of chunk `index` (ndim entries); INVALID_ARGUMENT outside the
  // grid. `file` names the file in errors.
  Slab slab(const uint64_t* index, const std::string& file) const;

 private:
  std::vector<uint64_t> shape_, chunks_;
  std::vector<uint64_t> strides_;  // element strides of the file's layout
  size_t element_size_ = 1;
};

}  // namespace npy

#endif
