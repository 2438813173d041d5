// Element casts: what a value becomes in another dtype, and what happens to
// one the dtype cannot hold (CastOverflow).
#include "internal.hpp"

#include <cmath>
#include <limits>

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

}  // namespace

void cast_elements(DType from, DType to, const void* in, void* out, size_t n, CastOverflow overflow,
                   const std::function<std::string(size_t)>& where) {
  visit_dtype(to, [&](auto to_tag) {
    using To = decltype(to_tag);
    visit_dtype(from, [&](auto from_tag) {
      using From = decltype(from_tag);
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
          throw Error(
              ErrorCode::invalid_argument,
              std::string(dtype_name(to)) + " cannot hold the " + dtype_name(from) + " value " +
                  value_text(v) + " at " + where(i) +
                  (std::is_floating_point_v<From>
                       ? "; pass --cast-overflow clip to clip values into range"
                       : "; pass --cast-overflow clip (or wrap) to clip (or wrap) values into range"));
      }
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
