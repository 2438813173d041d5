#include "npy_resize.hpp"

#include <algorithm>

namespace npy {

namespace {

// Bytes per step along each dimension of a C-order array.
std::vector<uint64_t> strides(const std::vector<uint64_t>& shape, uint64_t element_size) {
  std::vector<uint64_t> s(shape.size());
  uint64_t step = element_size;
  for (size_t k = shape.size(); k-- > 0;) {
    s[k] = step;
    step *= shape[k];
  }
  return s;
}

// `run` in pieces of at most kMaxRun bytes (a buffer each, so bounded).
void in_pieces(Run run, const std::function<void(const Run&)>& fn) {
  for (uint64_t at = 0; at < run.size; at += kMaxRun)
    fn(Run{run.from + at, run.to + at, std::min(kMaxRun, run.size - at)});
}

}  // namespace

void copy_overlap(const std::vector<uint64_t>& old_shape, const std::vector<uint64_t>& new_shape,
                  uint64_t element_size, const std::function<void(const Run&)>& fn) {
  const size_t n = old_shape.size();
  if (n == 0) return in_pieces(Run{0, 0, element_size}, fn);
  std::vector<uint64_t> overlap(n);
  for (size_t k = 0; k < n; ++k) overlap[k] = std::min(old_shape[k], new_shape[k]);
  if (std::find(overlap.begin(), overlap.end(), 0) != overlap.end()) return;
  // The run spans dimensions j.. : those after j are whole in both shapes.
  size_t j = n - 1;
  uint64_t run = overlap[j] * element_size;
  while (j > 0 && old_shape[j] == new_shape[j]) run *= overlap[--j];
  const std::vector<uint64_t> from = strides(old_shape, element_size),
                              to = strides(new_shape, element_size);
  std::vector<uint64_t> index(j, 0);  // over the dimensions before j
  for (;;) {
    Run r{0, 0, run};
    for (size_t k = 0; k < j; ++k) r.from += index[k] * from[k], r.to += index[k] * to[k];
    in_pieces(r, fn);
    size_t k = j;
    while (k > 0 && ++index[k - 1] == overlap[k - 1]) index[--k] = 0;
    if (k == 0) return;
  }
}

}  // namespace npy
