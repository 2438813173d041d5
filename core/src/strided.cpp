// The element copy kernels of region I/O: strided n-d copies with byte
// swap, tiled Fortran-to-C transposition, streaming stores for large
// destinations, and the fill of absent chunks. region.cpp decides what to
// copy where; this file only moves bytes.
#include "strided.hpp"

#include <stowage/half.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace stowage::detail {

namespace {

template <class T>
T byteswap(T v) {
  if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(v));
  if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(v));
  if constexpr (sizeof(T) == 8) return static_cast<T>(__builtin_bswap64(v));
  return v;
}

// A complex element: two numbers (real, imaginary) of type U, each swapped
// on its own; a big-endian complex64 is two big-endian float32, not one 8-byte value.
template <class U>
struct Pair {
  U part[2];
};
template <class U>
Pair<U> byteswap(Pair<U> v) {
  return {{byteswap(v.part[0]), byteswap(v.part[1])}};
}
template <class T>
struct PartOf {
  using type = T;
};
template <class U>
struct PartOf<Pair<U>> {
  using type = U;
};

// Elements move through byte pointers and memcpy, never through a T*: a
// buffer may hold them at any byte offset (a region read into an odd
// address), and a T* not aligned for T is undefined behaviour that clang
// acts on (it lowers memcpy of a T* assuming T's alignment; UBSan's
// alignment check reported it here).
template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void store(char* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

template <class T>
void copy_swapped(const char* s, char* d, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) store(d + i * sizeof(T), byteswap(load<T>(s + i * sizeof(T))));
}

template <class T>
void copy_contiguous(const char* s, char* d, uint64_t n, bool swap) {
  if (swap)
    copy_swapped<T>(s, d, n);
  else
    std::memcpy(d, s, n * sizeof(T));
}

#ifdef __SSE2__
// The byte swap of every element of a 16-byte vector, in SSE2 alone (no
// pshufb, which needs SSSE3): the 16-bit words are put in reverse order
// within each element, then the two bytes of every word are exchanged.
template <class E, class T = typename PartOf<E>::type>
__m128i swap_vector(__m128i v) {
  if constexpr (sizeof(T) == 4) v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xB1), 0xB1);
  if constexpr (sizeof(T) == 8) v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0x1B), 0x1B);
  if constexpr (sizeof(T) == 1) return v;
  return _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));
}

// A contiguous row written with non-temporal stores. A large region read
// scatters short rows (a 64-wide chunk row is 128 bytes) over a destination
// far bigger than the caches; ordinary stores first read every destination
// line from memory (read-for-ownership). Streaming stores skip that read
// once the write-combining buffers see whole lines, which they do when
// neighbouring rows are streamed in order too (copy_side_by_side).
// Forced inline (as is copy_row): it is called once per 128-byte row, so a
// call and its alignment set-up would cost more than the copy (docs/performance.md).
template <class T>
[[gnu::always_inline]] inline void stream_contiguous(const char* s, char* d, uint64_t n,
                                                     bool swap) {
  constexpr uint64_t kVector = 16, kPerVector = kVector / sizeof(T);
  auto address = reinterpret_cast<uintptr_t>(d);
  if (address % sizeof(T) != 0)
    return copy_contiguous<T>(s, d, n, swap);  // misaligned elements: plain
  uint64_t head = std::min<uint64_t>(n, ((kVector - address % kVector) % kVector) / sizeof(T));
  copy_contiguous<T>(s, d, head, swap);
  s += head * sizeof(T), d += head * sizeof(T), n -= head;
  // Swapped in registers on the way: one load and one streaming store a vector.
  auto* out = reinterpret_cast<__m128i*>(d);
  auto* in = reinterpret_cast<const __m128i*>(s);
  uint64_t vectors = n / kPerVector;
  if (swap)
    for (uint64_t k = 0; k < vectors; ++k)
      _mm_stream_si128(out + k, swap_vector<T>(_mm_loadu_si128(in + k)));
  else
    for (uint64_t k = 0; k < vectors; ++k) _mm_stream_si128(out + k, _mm_loadu_si128(in + k));
  s += vectors * kVector, d += vectors * kVector, n -= vectors * kPerVector;
  copy_contiguous<T>(s, d, n, swap);
}
#endif

// The innermost loop: `n` elements with the given strides. Contiguous
// copies are memcpy; swapped ones are a loop the compiler vectorizes.
template <class T>
[[gnu::always_inline]] inline void copy_row(const char* src, int64_t ss, char* dst, int64_t ds,
                                            uint64_t n, CopyMode mode) {
  if (ss == 1 && ds == 1) {
#ifdef __SSE2__
    if (mode.stream) return stream_contiguous<T>(src, dst, n, mode.swap);
#endif
    return copy_contiguous<T>(src, dst, n, mode.swap);
  }
  constexpr auto size = static_cast<int64_t>(sizeof(T));
  for (uint64_t i = 0; i < n; ++i) {
    T v = load<T>(src + static_cast<int64_t>(i) * ss * size);
    if (mode.swap) v = byteswap(v);
    store(dst + static_cast<int64_t>(i) * ds * size, v);
  }
}

// A 2-D block whose fastest source and destination dimensions differ (a
// Fortran-order chunk into a C-order buffer): copied in square tiles so both
// sides stay in cache, instead of striding through one of them.
template <class T>
void copy_transposed(const char* src, const int64_t* ss, char* dst, const int64_t* ds,
                     const uint64_t* shape, bool swap) {
  constexpr uint64_t kTile = 32;
  constexpr auto size = static_cast<int64_t>(sizeof(T));
  for (uint64_t i0 = 0; i0 < shape[0]; i0 += kTile) {
    uint64_t i1 = std::min(shape[0], i0 + kTile);
    for (uint64_t j0 = 0; j0 < shape[1]; j0 += kTile) {
      uint64_t j1 = std::min(shape[1], j0 + kTile);
      for (uint64_t i = i0; i < i1; ++i)
        for (uint64_t j = j0; j < j1; ++j) {
          T v = load<T>(src +
                        (static_cast<int64_t>(i) * ss[0] + static_cast<int64_t>(j) * ss[1]) * size);
          if (swap) v = byteswap(v);
          store(dst + (static_cast<int64_t>(i) * ds[0] + static_cast<int64_t>(j) * ds[1]) * size,
                v);
        }
    }
  }
}

template <class T>
void copy_nd(const char* src, const int64_t* ss, char* dst, const int64_t* ds,
             const uint64_t* shape, size_t ndim, CopyMode mode) {
  if (ndim == 1) return copy_row<T>(src, ss[0], dst, ds[0], shape[0], mode);
  if (ndim == 2 && ds[1] == 1 && ss[1] != 1 && ss[0] == 1 && shape[0] > 1 && shape[1] > 1)
    return copy_transposed<T>(src, ss, dst, ds, shape, mode.swap);
  for (uint64_t i = 0; i < shape[0]; ++i)
    copy_nd<T>(src + static_cast<int64_t>(i) * ss[0] * static_cast<int64_t>(sizeof(T)), ss + 1,
               dst + static_cast<int64_t>(i) * ds[0] * static_cast<int64_t>(sizeof(T)), ds + 1,
               shape + 1, ndim - 1, mode);
}

}  // namespace

void copy_strided(const void* src, const int64_t* src_strides, void* dst,
                  const int64_t* dst_strides, const uint64_t* shape, size_t ndim,
                  size_t element_size, CopyMode mode) {
  for (size_t i = 0; i < ndim; ++i)
    if (shape[i] == 0) return;
  auto* s = static_cast<const char*>(src);
  auto* d = static_cast<char*>(dst);
  if (ndim == 0) {
    uint64_t one = 1;
    int64_t unit = 1;
    return copy_strided(src, &unit, dst, &unit, &one, 1, element_size, mode);
  }
  switch (element_size) {
    case 1:
      copy_nd<uint8_t>(s, src_strides, d, dst_strides, shape, ndim, {false, mode.stream, 1});
      break;
    case 2:
      copy_nd<uint16_t>(s, src_strides, d, dst_strides, shape, ndim, mode);
      break;
    case 4:
      copy_nd<uint32_t>(s, src_strides, d, dst_strides, shape, ndim, mode);
      break;
    case 8:
      if (mode.parts == 2)
        copy_nd<Pair<uint32_t>>(s, src_strides, d, dst_strides, shape, ndim, mode);
      else
        copy_nd<uint64_t>(s, src_strides, d, dst_strides, shape, ndim, mode);
      break;
    case 16:
      copy_nd<Pair<uint64_t>>(s, src_strides, d, dst_strides, shape, ndim, mode);
      break;
    default:
      throw Error(ErrorCode::internal,
                  "copy_strided: element size " + std::to_string(element_size));
  }
#ifdef __SSE2__
  // Streaming stores are weakly ordered: make them visible before the
  // caller hands the buffer to another thread.
  if (mode.stream) _mm_sfence();
#endif
}

namespace {
// One element's value, in host order: saturated for integers, rounded for floats.
template <class T>
T element_value(double value, double imag) {
  T v;
  if constexpr (std::is_same_v<T, Float16>) {
    v.bits = sdk::half_from_double(value);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    using U = typename T::value_type;
    v = T(static_cast<U>(value), static_cast<U>(imag));
  } else if constexpr (std::is_integral_v<T>) {
    // Saturate: a fill value outside the type's range is a caller error we
    // do not turn into undefined behaviour. The top is 2^digits, one past
    // max(): a 64-bit max() is no double (it rounds up to 2^64 or 2^63, and
    // converting that back is undefined), so uint64's max as a fill value
    // arrives as 2^64 and saturates to max().
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double top = std::ldexp(1.0, std::numeric_limits<T>::digits);
    v = std::isnan(value) ? T(0)
        : value >= top    ? std::numeric_limits<T>::max()
        : value <= lo     ? std::numeric_limits<T>::lowest()
                          : static_cast<T>(value);
  } else {
    v = static_cast<T>(value);
  }
  return v;
}

template <class T>
void fill_typed(void* dst, size_t count, double value, double imag, bool swap) {
  const T v = element_value<T>(value, imag);
  unsigned char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof v);
  // Each part of a complex value is swapped on its own.
  constexpr size_t kPart = std::is_same_v<T, std::complex<float>>    ? 4
                           : std::is_same_v<T, std::complex<double>> ? 8
                                                                     : sizeof(T);
  if (swap)
    for (size_t at = 0; at < sizeof(T); at += kPart) std::reverse(bytes + at, bytes + at + kPart);
  auto* d = static_cast<unsigned char*>(dst);
  bool zero = std::all_of(bytes, bytes + sizeof(T), [](unsigned char b) { return b == 0; });
  if (zero) {
    std::memset(d, 0, count * sizeof(T));
    return;
  }
  for (size_t i = 0; i < count; ++i) std::memcpy(d + i * sizeof(T), bytes, sizeof(T));
}
}  // namespace

void fill_elements(void* dst, size_t count, DType dtype, double value, bool big_endian,
                   double imag) {
  bool swap = big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
  if (dtype == DType::boolean) value = value != 0;
  visit_dtype(dtype, [&](auto tag) {
    fill_typed<decltype(tag)>(dst, count, value, imag, swap && sizeof(tag) > 1);
  });
}

}  // namespace stowage::detail

namespace stowage::detail {

namespace {
// A large read copies about a million short rows (a 64-wide chunk row is
// 128 bytes), so the per-row bookkeeping costs as much as a few percent of
// a codec-bound read: each part keeps a pointer to its current row and
// steps it by its strides, instead of recomputing offsets from indices.
template <class T>
void copy_side_by_side_typed(const std::vector<RowPart>& parts, const uint64_t* lead_shape,
                             size_t lead, CopyMode mode) {
  uint64_t rows = 1;
  for (size_t i = 0; i < lead; ++i) rows *= lead_shape[i];
  const size_t n = parts.size();
  std::vector<const char*> src(n);
  std::vector<char*> dst(n);
  for (size_t p = 0; p < n; ++p) {
    src[p] = static_cast<const char*>(parts[p].src);
    dst[p] = static_cast<char*>(parts[p].dst);
  }
  constexpr int64_t kSize = static_cast<int64_t>(sizeof(T));
  std::vector<uint64_t> at(lead, 0);  // the current row's index in the leading dimensions
  for (uint64_t r = 0; r < rows; ++r) {
    for (size_t p = 0; p < n; ++p) copy_row<T>(src[p], 1, dst[p], 1, parts[p].width, mode);
    // Next row: the last leading dimension that has not wrapped steps
    // forward, the ones after it go back to their start.
    for (size_t i = lead; i-- > 0;) {
      bool wraps = ++at[i] == lead_shape[i];
      int64_t steps = wraps ? 1 - static_cast<int64_t>(lead_shape[i]) : 1;
      for (size_t p = 0; p < n; ++p) {
        src[p] += steps * parts[p].src_strides[i] * kSize;
        dst[p] += steps * parts[p].dst_strides[i] * kSize;
      }
      if (!wraps) break;
      at[i] = 0;
    }
  }
}
}  // namespace

void copy_side_by_side(const std::vector<RowPart>& parts, const uint64_t* lead_shape, size_t ndim,
                       size_t element_size, CopyMode mode) {
  if (parts.empty() || ndim == 0) return;
  for (size_t i = 0; i + 1 < ndim; ++i)
    if (lead_shape[i] == 0) return;
  switch (element_size) {
    case 1:
      copy_side_by_side_typed<uint8_t>(parts, lead_shape, ndim - 1, {false, mode.stream, 1});
      break;
    case 2:
      copy_side_by_side_typed<uint16_t>(parts, lead_shape, ndim - 1, mode);
      break;
    case 4:
      copy_side_by_side_typed<uint32_t>(parts, lead_shape, ndim - 1, mode);
      break;
    case 8:
      if (mode.parts == 2)
        copy_side_by_side_typed<Pair<uint32_t>>(parts, lead_shape, ndim - 1, mode);
      else
        copy_side_by_side_typed<uint64_t>(parts, lead_shape, ndim - 1, mode);
      break;
    case 16:
      copy_side_by_side_typed<Pair<uint64_t>>(parts, lead_shape, ndim - 1, mode);
      break;
    default:
      throw Error(ErrorCode::internal,
                  "copy_side_by_side: element size " + std::to_string(element_size));
  }
#ifdef __SSE2__
  if (mode.stream) _mm_sfence();
#endif
}

}  // namespace stowage::detail
