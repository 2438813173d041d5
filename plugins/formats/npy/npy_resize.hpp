// npy_resize -- where the elements a resize keeps lie in a C-order .npy
// before and after: the runs of bytes to copy from the old data to the new.
#ifndef STOWAGE_NPY_RESIZE_HPP
#define STOWAGE_NPY_RESIZE_HPP

#include <cstdint>
#include <functional>
#include <vector>

namespace npy {

// `size` bytes at `from` in the old data go to `to` in the new.
struct Run {
  uint64_t from = 0, to = 0, size = 0;
};

// Calls fn for the runs holding the elements inside both shapes (C order,
// the same rank), each at most kMaxRun bytes: one run per row of the
// overlap, or one for all of it when only the first dimension changes (an
// append). Nothing when the overlap is empty.
inline constexpr uint64_t kMaxRun = 8 << 20;
void copy_overlap(const std::vector<uint64_t>& old_shape, const std::vector<uint64_t>& new_shape,
                  uint64_t element_size, const std::function<void(const Run&)>& fn);

}  // namespace npy

#endif
