// Region I/O over chunk primitives, written once for every format
// (DESIGN.md 5): find the chunks a region touches, read or write them in
// parallel, clip edge chunks, and convert byte order and element order while
// copying between the chunk and the caller's buffer.
#include "internal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace stowage::detail {

namespace {

template <class T>
T byteswap(T v) {
  if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(v));
  if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(v));
  if constexpr (sizeof(T) == 8) return static_cast<T>(__builtin_bswap64(v));
  return v;
}

// The innermost loop: `n` elements with the given strides. Contiguous
// copies are memcpy; swapped ones are a loop the compiler vectorizes.
template <class T>
void copy_row(const char* src, int64_t ss, char* dst, int64_t ds, uint64_t n, bool swap) {
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  if (ss == 1 && ds == 1) {
    if (!swap) {
      std::memcpy(d, s, n * sizeof(T));
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, s + i, sizeof v);
        v = byteswap(v);
        std::memcpy(d + i, &v, sizeof v);
      }
    }
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, s + static_cast<int64_t>(i) * ss, sizeof v);
    if (swap) v = byteswap(v);
    std::memcpy(d + static_cast<int64_t>(i) * ds, &v, sizeof v);
  }
}

// A 2-D block whose fastest source and destination dimensions differ (a
// Fortran-order chunk into a C-order buffer): copied in square tiles so both
// sides stay in cache, instead of striding through one of them.
template <class T>
void copy_transposed(const char* src, const int64_t* ss, char* dst, const int64_t* ds, const uint64_t* shape,
                     bool swap) {
  constexpr uint64_t kTile = 32;
  const T* s = reinterpret_cast<const T*>(src);
  T* d = reinterpret_cast<T*>(dst);
  for (uint64_t i0 = 0; i0 < shape[0]; i0 += kTile) {
    uint64_t i1 = std::min(shape[0], i0 + kTile);
    for (uint64_t j0 = 0; j0 < shape[1]; j0 += kTile) {
      uint64_t j1 = std::min(shape[1], j0 + kTile);
      for (uint64_t i = i0; i < i1; ++i)
        for (uint64_t j = j0; j < j1; ++j) {
          T v;
          std::memcpy(&v, s + static_cast<int64_t>(i) * ss[0] + static_cast<int64_t>(j) * ss[1], sizeof v);
          if (swap) v = byteswap(v);
          std::memcpy(d + static_cast<int64_t>(i) * ds[0] + static_cast<int64_t>(j) * ds[1], &v, sizeof v);
        }
    }
  }
}

template <class T>
void copy_nd(const char* src, const int64_t* ss, char* dst, const int64_t* ds, const uint64_t* shape,
             size_t ndim, bool swap) {
  if (ndim == 1) return copy_row<T>(src, ss[0], dst, ds[0], shape[0], swap);
  if (ndim == 2 && ds[1] == 1 && ss[1] != 1 && ss[0] == 1 && shape[0] > 1 && shape[1] > 1)
    return copy_transposed<T>(src, ss, dst, ds, shape, swap);
  for (uint64_t i = 0; i < shape[0]; ++i)
    copy_nd<T>(src + static_cast<int64_t>(i) * ss[0] * static_cast<int64_t>(sizeof(T)), ss + 1,
               dst + static_cast<int64_t>(i) * ds[0] * static_cast<int64_t>(sizeof(T)), ds + 1,
               shape + 1, ndim - 1, swap);
}

}  // namespace

void copy_strided(const void* src, const int64_t* src_strides, void* dst, const int64_t* dst_strides,
                  const uint64_t* shape, size_t ndim, size_t element_size, bool swap) {
  for (size_t i = 0; i < ndim; ++i)
    if (shape[i] == 0) return;
  auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  if (ndim == 0) {
    uint64_t one = 1;
    int64_t unit = 1;
    return copy_strided(src, &unit, dst, &unit, &one, 1, element_size, swap);
  }
  switch (element_size) {
    case 1: return copy_nd<uint8_t>(s, src_strides, d, dst_strides, shape, ndim, false);
    case 2: return copy_nd<uint16_t>(s, src_strides, d, dst_strides, shape, ndim, swap);
    case 4: return copy_nd<uint32_t>(s, src_strides, d, dst_strides, shape, ndim, swap);
    case 8: return copy_nd<uint64_t>(s, src_strides, d, dst_strides, shape, ndim, swap);
    default:
      throw Error(ErrorCode::internal, "copy_strided: element size " + std::to_string(element_size));
  }
}

namespace {
template <class T>
void fill_typed(void* dst, size_t count, double value, bool swap) {
  T v;
  if constexpr (std::is_integral_v<T>) {
    // Saturate: a fill value outside the type's range is a caller error we
    // do not turn into undefined behaviour.
    double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    double hi = static_cast<double>(std::numeric_limits<T>::max());
    v = std::isnan(value) ? T(0) : static_cast<T>(std::clamp(value, lo, hi));
  } else {
    v = static_cast<T>(value);
  }
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof v);
  if (swap) std::reverse(bytes, bytes + sizeof(T));
  auto* d = static_cast<unsigned char*>(dst);
  bool zero = std::all_of(bytes, bytes + sizeof(T), [](unsigned char b) { return b == 0; });
  if (zero) {
    std::memset(d, 0, count * sizeof(T));
    return;
  }
  for (size_t i = 0; i < count; ++i) std::memcpy(d + i * sizeof(T), bytes, sizeof(T));
}
}  // namespace

void fill_elements(void* dst, size_t count, DType dtype, double value, bool big_endian) {
  bool swap = big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
  switch (dtype) {
    case DType::boolean: return fill_typed<uint8_t>(dst, count, value != 0, false);
    case DType::int8: return fill_typed<int8_t>(dst, count, value, false);
    case DType::uint8: return fill_typed<uint8_t>(dst, count, value, false);
    case DType::int16: return fill_typed<int16_t>(dst, count, value, swap);
    case DType::uint16: return fill_typed<uint16_t>(dst, count, value, swap);
    case DType::int32: return fill_typed<int32_t>(dst, count, value, swap);
    case DType::uint32: return fill_typed<uint32_t>(dst, count, value, swap);
    case DType::int64: return fill_typed<int64_t>(dst, count, value, swap);
    case DType::uint64: return fill_typed<uint64_t>(dst, count, value, swap);
    case DType::float32: return fill_typed<float>(dst, count, value, swap);
    case DType::float64: return fill_typed<double>(dst, count, value, swap);
  }
}

}  // namespace stowage::detail

namespace stowage {

namespace {

using detail::copy_strided;

constexpr bool kHostBigEndian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__;

// Element strides of a dense block of `shape` in C or Fortran order.
std::vector<int64_t> strides_of(const std::vector<uint64_t>& shape, bool fortran) {
  size_t n = shape.size();
  std::vector<int64_t> s(n);
  int64_t acc = 1;
  if (fortran) {
    for (size_t i = 0; i < n; ++i) {
      s[i] = acc;
      acc *= static_cast<int64_t>(shape[i]);
    }
  } else {
    for (size_t i = n; i-- > 0;) {
      s[i] = acc;
      acc *= static_cast<int64_t>(shape[i]);
    }
  }
  return s;
}

uint64_t product(const std::vector<uint64_t>& v) {
  uint64_t p = 1;
  for (uint64_t x : v) p *= x;
  return p;
}

// The chunks a region touches, as a flat list of chunk indices.
struct ChunkRange {
  std::vector<uint64_t> first, count;
  size_t size() const { return static_cast<size_t>(product(count)); }
  std::vector<uint64_t> at(size_t flat) const {
    std::vector<uint64_t> idx(first.size());
    for (size_t d = first.size(); d-- > 0;) {
      idx[d] = first[d] + flat % count[d];
      flat /= count[d];
    }
    return idx;
  }
};

ChunkRange chunks_touched(const NodeInfo& info, const std::vector<uint64_t>& offset,
                          const std::vector<uint64_t>& shape) {
  ChunkRange r;
  for (size_t d = 0; d < shape.size(); ++d) {
    uint64_t c = info.chunks[d];
    r.first.push_back(offset[d] / c);
    r.count.push_back(shape[d] == 0 ? 0 : (offset[d] + shape[d] - 1) / c - offset[d] / c + 1);
  }
  return r;
}

void check_region(const NodeInfo& info, const std::string& where, const std::vector<uint64_t>& offset,
                  const std::vector<uint64_t>& shape) {
  if (offset.size() != info.shape.size() || shape.size() != info.shape.size())
    throw Error(ErrorCode::invalid_argument,
                where + ": region has rank " + std::to_string(shape.size()) + ", the array has rank " +
                    std::to_string(info.shape.size()));
  for (size_t d = 0; d < shape.size(); ++d)
    if (offset[d] > info.shape[d] || shape[d] > info.shape[d] - offset[d])
      throw Error(ErrorCode::invalid_argument,
                  where + ": region [" + std::to_string(offset[d]) + ", +" + std::to_string(shape[d]) +
                      ") is outside dimension " + std::to_string(d) + " of size " +
                      std::to_string(info.shape[d]));
}

// A reusable per-thread buffer for one chunk.
std::vector<char>& scratch(size_t bytes) {
  thread_local std::vector<char> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer;
}

uint64_t nominal_chunk_bytes(const NodeInfo& info) {
  uint64_t n = product(info.chunks) * dtype_size(info.dtype);
  if (n > (uint64_t{1} << 40))
    throw Error(ErrorCode::corrupt, "chunk of " + std::to_string(n) + " bytes is beyond any sane size");
  return n;
}

// The part of chunk `idx` (whose stored extent is `extent`) that lies in
// the region: per dimension, [lo, hi) in array coordinates.
struct Overlap {
  std::vector<uint64_t> lo, size;
  bool empty = false;
};
Overlap overlap(const NodeInfo& info, const std::vector<uint64_t>& idx, const std::vector<uint64_t>& extent,
                const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape) {
  Overlap o;
  for (size_t d = 0; d < idx.size(); ++d) {
    uint64_t c0 = idx[d] * info.chunks[d];
    uint64_t c1 = std::min(c0 + extent[d], info.shape[d]);
    uint64_t lo = std::max(c0, offset[d]);
    uint64_t hi = std::min(c1, offset[d] + shape[d]);
    if (hi <= lo) {
      o.empty = true;
      hi = lo;
    }
    o.lo.push_back(lo);
    o.size.push_back(hi - lo);
  }
  return o;
}

// Byte offset of array coordinate `lo` inside a block starting at `origin`
// with element strides `strides`.
int64_t element_offset(const std::vector<uint64_t>& lo, const std::vector<uint64_t>& origin,
                       const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t d = 0; d < lo.size(); ++d) off += static_cast<int64_t>(lo[d] - origin[d]) * strides[d];
  return off;
}

std::vector<uint64_t> chunk_origin(const NodeInfo& info, const std::vector<uint64_t>& idx) {
  std::vector<uint64_t> o(idx.size());
  for (size_t d = 0; d < idx.size(); ++d) o[d] = idx[d] * info.chunks[d];
  return o;
}

// The extent of a chunk clipped to the array (what a writer stores).
std::vector<uint64_t> clipped_extent(const NodeInfo& info, const std::vector<uint64_t>& idx) {
  std::vector<uint64_t> e(idx.size());
  for (size_t d = 0; d < idx.size(); ++d)
    e[d] = std::min(info.chunks[d], info.shape[d] - idx[d] * info.chunks[d]);
  return e;
}

std::string chunk_name(const std::vector<uint64_t>& idx) {
  std::string s = "chunk (";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? "," : "") + std::to_string(idx[d]);
  return s + ")";
}

}  // namespace

// Reads one chunk into `buf` (storage order); returns false if MISSING.
static bool read_one_chunk(const Store::State& st, const std::string& node, const NodeInfo& info,
                           const std::vector<uint64_t>& idx, char* buf, size_t cap,
                           std::vector<uint64_t>& stored_shape) {
  stored_shape.assign(idx.size(), 0);
  detail::CallError err;
  int rc = st.vt->read_chunk(st.handle, node.data(), node.size(), idx.data(), buf, cap,
                             stored_shape.data(), &err);
  if (rc == STOWAGE_MISSING) return false;
  st.check(rc, err);
  uint64_t elements = 1;
  for (size_t d = 0; d < idx.size(); ++d) elements *= stored_shape[d];
  if (elements * dtype_size(info.dtype) > cap)
    throw Error(ErrorCode::corrupt,
                st.path + ": " + node + " " + chunk_name(idx) + " claims more elements than fit a chunk",
                st.path, st.plugin_name());
  return true;
}

namespace {
// What a region read or write works out once, before touching chunks.
struct RegionPlan {
  size_t esize;                       // bytes per element
  bool swap;                          // stored byte order differs from the host's
  std::vector<int64_t> user_strides;  // of the caller's C-order buffer
  size_t cap;                         // bytes of one nominal chunk
  ChunkRange range;                   // the chunks the region touches
};
RegionPlan plan_region(const NodeInfo& info, const std::string& where, const std::vector<uint64_t>& offset,
                       const std::vector<uint64_t>& shape) {
  check_region(info, where, offset, shape);
  return {dtype_size(info.dtype), info.big_endian != kHostBigEndian, strides_of(shape, false),
          static_cast<size_t>(nominal_chunk_bytes(info)), chunks_touched(info, offset, shape)};
}
}  // namespace

void Array::read(const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape, void* out) const {
  // (Named copies, not a structured binding: lambdas cannot capture those in C++17.)
  const RegionPlan plan = plan_region(info_, store_->path + "::" + node_, offset, shape);
  const size_t esize = plan.esize, cap = plan.cap;
  const bool swap = plan.swap;
  const std::vector<int64_t>& out_strides = plan.user_strides;
  const ChunkRange& range = plan.range;
  std::shared_lock<std::shared_mutex> lock(store_->mutex);
  detail::parallel_for(store_->registry->threads(), range.size(), [&](size_t flat) {
    std::vector<uint64_t> idx = range.at(flat);
    std::vector<uint64_t> origin = chunk_origin(info_, idx);
    std::vector<char>& buf = scratch(cap);
    std::vector<uint64_t> stored;
    bool present = read_one_chunk(*store_, node_, info_, idx, buf.data(), cap, stored);
    // First the fill value over the chunk's nominal part of the region, where
    // the stored chunk is absent or smaller (a cropped chunk that should not
    // have been, or a missing one).
    Overlap nominal = overlap(info_, idx, info_.chunks, offset, shape);
    if (nominal.empty) return;
    Overlap have = present ? overlap(info_, idx, stored, offset, shape) : Overlap{{}, {}, true};
    if (!present || have.empty || have.size != nominal.size) {
      uint64_t n = product(nominal.size);
      std::vector<char> fill(n * esize);
      detail::fill_elements(fill.data(), n, info_.dtype, info_.fill_value, kHostBigEndian);
      std::vector<int64_t> fs = strides_of(nominal.size, false);
      char* dst = static_cast<char*>(out) + element_offset(nominal.lo, offset, out_strides) * esize;
      copy_strided(fill.data(), fs.data(), dst, out_strides.data(), nominal.size.data(), nominal.size.size(),
                   esize, false);
    }
    if (!present || have.empty) return;
    std::vector<int64_t> chunk_strides = strides_of(stored, info_.fortran_order);
    const char* src = buf.data() + element_offset(have.lo, origin, chunk_strides) * esize;
    char* dst = static_cast<char*>(out) + element_offset(have.lo, offset, out_strides) * esize;
    copy_strided(src, chunk_strides.data(), dst, out_strides.data(), have.size.data(), have.size.size(),
                 esize, swap);
  });
}

void Array::write(const std::vector<uint64_t>& offset, const std::vector<uint64_t>& shape,
                  const void* in) const {
  const RegionPlan plan = plan_region(info_, store_->path + "::" + node_, offset, shape);
  const size_t esize = plan.esize, cap = plan.cap;
  const bool swap = plan.swap;
  const std::vector<int64_t>& in_strides = plan.user_strides;
  const ChunkRange& range = plan.range;
  std::shared_lock<std::shared_mutex> lock(store_->mutex);
  detail::parallel_for(store_->registry->threads(), range.size(), [&](size_t flat) {
    std::vector<uint64_t> idx = range.at(flat);
    std::vector<uint64_t> origin = chunk_origin(info_, idx);
    std::vector<uint64_t> extent = clipped_extent(info_, idx);
    std::vector<int64_t> chunk_strides = strides_of(extent, info_.fortran_order);
    std::vector<char>& buf = scratch(cap);
    Overlap part = overlap(info_, idx, extent, offset, shape);
    if (part.empty) return;
    uint64_t elements = product(extent);
    if (part.size != extent) {
      // Partly covered: merge with what is stored (read-modify-write).
      std::vector<uint64_t> stored;
      std::vector<char> old(cap);
      bool present = read_one_chunk(*store_, node_, info_, idx, old.data(), cap, stored);
      detail::fill_elements(buf.data(), elements, info_.dtype, info_.fill_value, info_.big_endian);
      if (present) {
        Overlap keep = overlap(info_, idx, stored, origin, extent);
        if (!keep.empty) {
          std::vector<int64_t> old_strides = strides_of(stored, info_.fortran_order);
          copy_strided(old.data() + element_offset(keep.lo, origin, old_strides) * esize, old_strides.data(),
                       buf.data() + element_offset(keep.lo, origin, chunk_strides) * esize,
                       chunk_strides.data(), keep.size.data(), keep.size.size(), esize, false);
        }
      }
    }
    const char* src = static_cast<const char*>(in) + element_offset(part.lo, offset, in_strides) * esize;
    char* dst = buf.data() + element_offset(part.lo, origin, chunk_strides) * esize;
    copy_strided(src, in_strides.data(), dst, chunk_strides.data(), part.size.data(), part.size.size(), esize,
                 swap);
    detail::CallError err;
    store_->check(store_->vt->write_chunk(store_->handle, node_.data(), node_.size(), idx.data(), buf.data(),
                                          elements * esize, extent.data(), &err),
                  err);
  });
}

std::vector<uint64_t> Array::chunk_grid() const {
  std::vector<uint64_t> g;
  for (size_t d = 0; d < info_.shape.size(); ++d)
    g.push_back((info_.shape[d] + info_.chunks[d] - 1) / info_.chunks[d]);
  return g;
}

bool Array::chunk_exists(const std::vector<uint64_t>& chunk_index) const {
  const size_t cap = nominal_chunk_bytes(info_);
  std::vector<char> buf(cap);
  std::vector<uint64_t> stored;
  std::shared_lock<std::shared_mutex> lock(store_->mutex);
  return read_one_chunk(*store_, node_, info_, chunk_index, buf.data(), cap, stored);
}

}  // namespace stowage
