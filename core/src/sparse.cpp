// Sparse: the C++ face of a format plugin's sparse node table (CSR/CSC read by major slices).
#include "plugin_call.hpp"
#include "store_state.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>

namespace stowage {

using detail::live;

namespace {
// Whether every index is below `limit`. One OR chain, built for AVX2 too: a
// running max is a dependent chain that costs a column-by-column read of a
// BPCells matrix dearly (docs/performance.md).
__attribute__((target_clones("avx2", "default"))) bool all_below(const uint32_t* v, uint64_t n,
                                                                 uint64_t limit) {
  if (limit > UINT32_MAX) return true;
  const uint32_t lim = uint32_t(limit);
  uint32_t over = 0;
  for (uint64_t i = 0; i < n; ++i) over |= uint32_t(v[i] >= lim);
  return over == 0;
}
}  // namespace

SparseSlice Sparse::read(uint64_t begin, uint64_t end) const {
  SparseSlice s;
  read_into(begin, end, s);
  return s;
}

void Sparse::read_into(uint64_t begin, uint64_t end, SparseSlice& s) const {
  uint64_t nnz = count(begin, end);
  s.indptr.resize(end - begin + 1);
  s.indices.resize(nnz);
  s.values.resize(nnz * dtype_size(info_.dtype));
  read_into(begin, end, nnz, s.indptr.data(), s.indices.data(), s.values.data());
}

void Sparse::require_majors(uint64_t begin, uint64_t end) const {
  if (begin > end || end > majors())
    throw Error(ErrorCode::invalid_argument,
                store_->path + "::" + node_ + ": major range [" + std::to_string(begin) + ", " +
                    std::to_string(end) + ") is outside 0.." + std::to_string(majors()),
                store_->path);
}

uint64_t Sparse::count(uint64_t begin, uint64_t end) const {
  Store::State& st = live(store_);
  require_majors(begin, end);
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  uint64_t nnz = 0;
  detail::CallError err;
  st.check(handle_->sparse().count(handle_->node.handle, begin, end, &nnz, &err), err);
  return nnz;
}

void Sparse::read_into(uint64_t begin, uint64_t end, uint64_t nnz, uint64_t* indptr,
                       uint32_t* indices, void* values) const {
  Store::State& st = live(store_);
  require_majors(begin, end);
  std::shared_lock<std::shared_mutex> lock(st.mutex);
  detail::CallError err;
  st.check(
      handle_->sparse().read(handle_->node.handle, begin, end, indptr, indices, values, nnz, &err),
      err);
  // A plugin is not trusted to be right: check what consumers rely on.
  const uint64_t n = end - begin + 1;
  bool monotone = indptr[0] == 0 && indptr[n - 1] == nnz;
  for (uint64_t i = 0; i + 1 < n; ++i) monotone &= indptr[i] <= indptr[i + 1];
  if (!monotone)
    throw Error(ErrorCode::corrupt,
                st.path + ": format " + st.format + " returned a malformed indptr", st.path,
                st.plugin_name());
  uint64_t minors = info_.csr ? info_.shape[1] : info_.shape[0];
  if (!all_below(indices, nnz, minors)) {
    uint32_t max_index = *std::max_element(indices, indices + nnz);
    throw Error(ErrorCode::corrupt,
                st.path + ": index " + std::to_string(max_index) + " is outside the matrix (" +
                    std::to_string(minors) + ")",
                st.path, st.plugin_name());
  }
}

void Sparse::read_dense(uint64_t row0, uint64_t col0, uint64_t rows, uint64_t cols,
                        void* out) const {
  if (row0 + rows > info_.shape[0] || col0 + cols > info_.shape[1])
    throw Error(ErrorCode::invalid_argument,
                store_->path + "::" + node_ + ": dense region outside the matrix");
  const size_t esize = dtype_size(info_.dtype);
  std::memset(out, 0, rows * cols * esize);
  uint64_t m0 = info_.csr ? row0 : col0, mn = info_.csr ? rows : cols;
  uint64_t n0 = info_.csr ? col0 : row0, nn = info_.csr ? cols : rows;
  SparseSlice s = read(m0, m0 + mn);
  auto* dst = static_cast<char*>(out);
  for (uint64_t m = 0; m < mn; ++m) {
    for (uint64_t k = s.indptr[m]; k < s.indptr[m + 1]; ++k) {
      uint64_t minor = s.indices[k];
      if (minor < n0 || minor >= n0 + nn) continue;
      uint64_t r = info_.csr ? m : minor - n0, c = info_.csr ? minor - n0 : m;
      std::memcpy(dst + (r * cols + c) * esize, s.values.data() + k * esize, esize);
    }
  }
}

void Sparse::append(const SparseSlice& slice, uint64_t n_major) const {
  Store::State& st = live(store_);
  if (slice.indptr.size() != n_major + 1)
    throw Error(ErrorCode::invalid_argument, "Sparse::append: indptr must have n_major+1 entries");
  handle_->require(handle_->sparse().append != nullptr, "append to a sparse matrix");
  std::unique_lock<std::shared_mutex> lock(st.mutex);
  detail::CallError err;
  st.check(handle_->sparse().append(handle_->node.handle, n_major, slice.indptr.data(),
                                    slice.indices.data(), slice.values.data(), &err),
           err);
}

}  // namespace stowage
