// Element casts: what a value becomes in another dtype, and what happens to
// one the dtype cannot hold (CastOverflow).
#include "internal.hpp"

#include <stowage/half.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace stowage::copying {

namespace {

// Whether `v` survives the conversion to To: an integer in To's range; for a
// float going to an integer type, finite and in range once truncated toward
// zero (as numpy's astype and C++ truncate); for float64 -> float32, not a
// finite value that would become infinite. Any value fits a float from an
// integer, and bool (non-zero is true).
template <class To, class From>
bool fits(From v) {
  using Lim = std::numeric_limits<To>;
  if constexpr (std::is_floating_point_v<To>) {
    if constexpr (std::is_floating_point_v<From>)
      return !std::isfinite(v) ||
             std::fabs(static_cast<long double>(v)) <= static_cast<long double>(Lim::max());
    else
      return true;
  } else if constexpr (std::is_floating_point_v<From>) {
    // long double holds every int64/uint64 bound exactly.
    return std::isfinite(v) &&
           static_cast<long double>(v) > static_cast<long double>(Lim::min()) - 1 &&
           static_cast<long double>(v) < static_cast<long double>(Lim::max()) + 1;
  } else if constexpr (std::is_signed_v<From>) {
    return v < 0
               ? std::is_signed_v<To> && static_cast<int64_t>(v) >= static_cast<int64_t>(Lim::min())
               : static_cast<uint64_t>(v) <= static_cast<uint64_t>(Lim::max());
  } else {
    return static_cast<uint64_t>(v) <= static_cast<uint64_t>(Lim::max());
  }
}

template <class T>
std::string value_text(T v) {
  if constexpr (std::is_floating_point_v<T>)
    if (!std::isfinite(v)) return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
  return json(v).dump();
}

// The nearest value To can hold (NaN -> 0), for CastOverflow::clip.
template <class To, class From>
To clipped(From v) {
  using Lim = std::numeric_limits<To>;
  if constexpr (std::is_floating_point_v<From>) {
    if (std::isnan(v)) return To(0);
    if constexpr (std::is_floating_point_v<To>) return v > 0 ? Lim::max() : Lim::lowest();
  }
  if constexpr (std::is_signed_v<From> || std::is_floating_point_v<From>)
    if (v < 0) return Lim::lowest();
  return Lim::max();
}

// ---- float16 and complex: each value as a pair of doubles ---------------------------

// Every float16, float32 and complex part is a double exactly; an integer
// beyond 2^53 rounds, as numpy's conversion to those types does.
struct Number {
  double re, im;
};

template <class T>
inline constexpr bool kIsComplex =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
Number number_of(T v) {
  if constexpr (std::is_same_v<T, Float16>)
    return {sdk::half_to_double(v.bits), 0};
  else if constexpr (kIsComplex<T>)
    return {double(v.real()), double(v.imag())};
  else
    return {double(v), 0};
}

std::string number_text(Number v, bool complex) {
  if (!complex) return value_text(v.re);
  std::string im = value_text(v.im);
  return "(" + value_text(v.re) + (im[0] == '-' ? "" : "+") + im + "j)";
}

// A float part of To's: its value, or nullopt when a finite value would
// become infinite (clipped to the largest finite value when asked).
template <class U>
std::optional<U> float_part(double v, CastOverflow overflow) {
  using Lim = std::numeric_limits<U>;
  if (!std::isfinite(v) || std::fabs(v) <= double(Lim::max())) return static_cast<U>(v);
  if (overflow != CastOverflow::clip) return std::nullopt;
  return v > 0 ? Lim::max() : Lim::lowest();
}

std::optional<Float16> half_part(double v, CastOverflow overflow) {
  const uint16_t bits = sdk::half_from_double(v);
  if (!std::isfinite(v) || (bits & 0x7fff) != 0x7c00) return Float16{bits};
  if (overflow != CastOverflow::clip) return std::nullopt;
  return Float16{uint16_t(v > 0 ? 0x7bff : 0xfbff)};  // +-65504
}

// `v` as a To (the real part only, for a real To), or nullopt if it cannot hold it.
template <class To>
std::optional<To> number_as(Number v, CastOverflow overflow) {
  if constexpr (std::is_same_v<To, Float16>) {
    return half_part(v.re, overflow);
  } else if constexpr (kIsComplex<To>) {
    using U = typename To::value_type;
    auto re = float_part<U>(v.re, overflow), im = float_part<U>(v.im, overflow);
    if (!re || !im) return std::nullopt;
    return To(*re, *im);
  } else if constexpr (std::is_floating_point_v<To>) {
    return float_part<To>(v.re, overflow);
  } else {
    if (fits<To>(v.re)) return static_cast<To>(v.re);
    if (overflow != CastOverflow::clip) return std::nullopt;
    return clipped<To>(v.re);
  }
}

// Casts from or to float16 or complex. A complex value loses its imaginary
// part only on a cast the user named (Converter::target_dtype refuses others).
template <class To, class From>
void cast_numbers(DType from, DType to, const void* in, void* out, size_t n, CastOverflow overflow,
                  const std::function<std::string(size_t)>& where) {
  for (size_t i = 0; i < n; ++i) {
    From f;
    std::memcpy(&f, static_cast<const char*>(in) + i * sizeof f, sizeof f);
    const Number v = number_of(f);
    std::optional<To> t;
    if constexpr (std::is_integral_v<To>)
      if (to == DType::boolean) t = To(v.re != 0 || v.im != 0);  // NaN is true, as in numpy
    if (!t) t = number_as<To>(v, overflow);
    if (!t)
      throw Error(ErrorCode::invalid_argument,
                  std::string(dtype_name(to)) + " cannot hold the " + dtype_name(from) + " value " +
                      number_text(v, dtype_is_complex(from)) + " at " + where(i) +
                      "; pass --cast-overflow clip to clip values into range");
    std::memcpy(static_cast<char*>(out) + i * sizeof(To), &*t, sizeof(To));
  }
}

// Casts between bool, the integers, float32 and float64.
template <class To, class From>
void cast_plain(DType from, DType to, const void* in, void* out, size_t n, CastOverflow overflow,
                const std::function<std::string(size_t)>& where) {
  const From* p = static_cast<const From*>(in);
  To* q = static_cast<To*>(out);
  if (to == DType::boolean) {
    for (size_t i = 0; i < n; ++i) q[i] = p[i] != From(0);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    const From v = p[i];
    if (fits<To>(v)) {
      q[i] = static_cast<To>(v);
      continue;
    }
    const bool wraps =
        overflow == CastOverflow::wrap && std::is_integral_v<From> && std::is_integral_v<To>;
    if (wraps)
      q[i] = static_cast<To>(v);  // modulo 2^bits (gcc, and C++20 for every compiler)
    else if (overflow == CastOverflow::clip)
      q[i] = clipped<To>(v);
    else
      throw Error(ErrorCode::invalid_argument,
                  std::string(dtype_name(to)) + " cannot hold the " + dtype_name(from) + " value " +
                      value_text(v) + " at " + where(i) +
                      (std::is_floating_point_v<From>
                           ? "; pass --cast-overflow clip to clip values into range"
                           : "; pass --cast-overflow clip (or wrap) to clip (or wrap) values "
                             "into range"));
  }
}

}  // namespace

void cast_elements(DType from, DType to, const void* in, void* out, size_t n, CastOverflow overflow,
                   const std::function<std::string(size_t)>& where) {
  visit_dtype(to, [&](auto to_tag) {
    using To = decltype(to_tag);
    visit_dtype(from, [&](auto from_tag) {
      using From = decltype(from_tag);
      if constexpr (std::is_arithmetic_v<To> && std::is_arithmetic_v<From>)
        cast_plain<To, From>(from, to, in, out, n, overflow, where);
      else
        cast_numbers<To, From>(from, to, in, out, n, overflow, where);
    });
  });
}

std::string index_text(const std::string& node, const std::vector<uint64_t>& offset,
                       const std::vector<uint64_t>& extent, size_t i) {
  std::vector<uint64_t> at(extent.size());
  for (size_t d = extent.size(); d-- > 0;) {
    at[d] = offset[d] + i % extent[d];
    i /= extent[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < at.size(); ++d) text += (d ? ", " : "") + std::to_string(at[d]);
  return text + "] of " + node;
}

}  // namespace stowage::copying
