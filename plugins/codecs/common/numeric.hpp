// numpy's element casts and arithmetic, for the array -> array codecs
// that compute on elements (delta, astype; numcodecs 0.11's semantics):
// one element loaded in any byte order, cast as numpy's astype casts
// (floats truncate to integers as x86's C cast does, integers wrap), added
// in its type, stored back. Element by element: the codecs keep a typed
// loop for their common case (native byte order, one type).
#pragma once

#include <stowage/array_codec.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace stowage_codecs {

namespace sdk = stowage::sdk;

// An element's value: a float as double, an integer as its 64-bit two's
// complement (sign-extended for signed types, so wrapping is truncation).
struct Num {
  bool fp = false;
  bool is_signed = false;
  double f = 0;
  uint64_t i = 0;
};

inline uint64_t load_bits(const uint8_t* p, const sdk::ElementType& t) {
  uint8_t b[8] = {};
  std::memcpy(b, p, t.size);
  if (t.big_endian == sdk::host_is_little_endian()) std::reverse(b, b + t.size);  // to host order
  uint64_t v = 0;
  if (t.size == 1)
    v = b[0];
  else if (t.size == 2) {
    uint16_t x;
    std::memcpy(&x, b, 2);
    v = x;
  } else if (t.size == 4) {
    uint32_t x;
    std::memcpy(&x, b, 4);
    v = x;
  } else
    std::memcpy(&v, b, 8);
  return v;
}

inline void store_bits(uint8_t* p, const sdk::ElementType& t, uint64_t v) {
  uint8_t b[8];
  if (t.size == 1)
    b[0] = uint8_t(v);
  else if (t.size == 2) {
    uint16_t x = uint16_t(v);
    std::memcpy(b, &x, 2);
  } else if (t.size == 4) {
    uint32_t x = uint32_t(v);
    std::memcpy(b, &x, 4);
  } else
    std::memcpy(b, &v, 8);
  if (t.big_endian == sdk::host_is_little_endian()) std::reverse(b, b + t.size);
  std::memcpy(p, b, t.size);
}

// Truncates bits to the type's width, sign-extending signed types.
inline uint64_t wrap(uint64_t v, const sdk::ElementType& t) {
  if (t.size == 8) return v;
  const int bits = int(8 * t.size);
  v &= (uint64_t(1) << bits) - 1;
  if (t.kind == 'i' && (v >> (bits - 1))) v |= ~uint64_t(0) << bits;
  return v;
}

inline Num load(const uint8_t* p, const sdk::ElementType& t) {
  const uint64_t bits = load_bits(p, t);
  Num n;
  if (t.kind == 'f') {
    n.fp = true;
    if (t.size == 4) {
      float x;
      uint32_t b32 = uint32_t(bits);
      std::memcpy(&x, &b32, 4);
      n.f = x;
    } else {
      std::memcpy(&n.f, &bits, 8);
    }
    return n;
  }
  n.is_signed = t.kind == 'i';
  n.i = t.kind == 'b' ? uint64_t(bits != 0) : wrap(bits, t);
  return n;
}

// A float to an integer as x86's conversion (numpy's C cast) gives it: in
// range truncated toward zero, else the "integer indefinite" 2^63.
inline uint64_t float_to_bits(double f, bool to_unsigned64) {
  if (std::isnan(f)) return uint64_t(1) << 63;
  if (to_unsigned64 && f >= 9223372036854775808.0 && f < 18446744073709551616.0)
    return static_cast<uint64_t>(f);
  if (f < -9223372036854775808.0 || f >= 9223372036854775808.0) return uint64_t(1) << 63;
  return static_cast<uint64_t>(static_cast<int64_t>(f));
}

// `v` cast to type `t`, as numpy's astype does (floats: one rounding from
// the source value; integers: wrapped; bool: non-zero).
inline Num cast(const Num& v, const sdk::ElementType& t) {
  Num n;
  if (t.kind == 'f') {
    n.fp = true;
    if (t.size == 4)
      n.f = v.fp          ? static_cast<float>(v.f)
            : v.is_signed ? static_cast<float>(int64_t(v.i))
                          : static_cast<float>(v.i);
    else
      n.f = v.fp ? v.f : v.is_signed ? static_cast<double>(int64_t(v.i)) : static_cast<double>(v.i);
    return n;
  }
  n.is_signed = t.kind == 'i';
  if (t.kind == 'b')
    n.i = v.fp ? v.f != 0 : v.i != 0;
  else
    n.i = wrap(v.fp ? float_to_bits(v.f, t.kind == 'u' && t.size == 8) : v.i, t);
  return n;
}

// Stores `v`, already of type `t`.
inline void store(uint8_t* p, const sdk::ElementType& t, const Num& v) {
  if (t.kind != 'f') return store_bits(p, t, v.i);
  if (t.size == 4) {
    const float x = static_cast<float>(v.f);
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return store_bits(p, t, b);
  }
  uint64_t b;
  std::memcpy(&b, &v.f, 8);
  store_bits(p, t, b);
}

// a + sign * b in type `t` (both of it): floats round to t, integers wrap.
inline Num add(const Num& a, const Num& b, int sign, const sdk::ElementType& t) {
  Num n = a;
  if (t.kind == 'f')
    n.f = t.size == 4 ? double(float(a.f) + float(sign * b.f)) : a.f + sign * b.f;
  else
    n.i = wrap(sign > 0 ? a.i + b.i : a.i - b.i, t);
  return n;
}

// ---- the same casts as typed loops, for both types in this machine's byte order ----

// `x` cast as cast() casts it, for C++ types (bool, integers, float, double).
template <class To, class From>
To numpy_cast(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return x != 0;
  } else if constexpr (std::is_floating_point_v<To> || !std::is_floating_point_v<From>) {
    return static_cast<To>(x);  // one rounding; integers wrap (two's complement)
  } else {
    return static_cast<To>(float_to_bits(double(x), std::is_unsigned_v<To> && sizeof(To) == 8));
  }
}

template <class T>
struct Tag {
  using type = T;
};

// Calls fn(Tag<T>) with the C++ type of `t`; false for float16 and complex.
template <class Fn>
bool with_type(const sdk::ElementType& t, Fn&& fn) {
  switch (t.kind) {
    case 'b':
      return fn(Tag<bool>{}), true;
    case 'i':
      if (t.size == 1) return fn(Tag<int8_t>{}), true;
      if (t.size == 2) return fn(Tag<int16_t>{}), true;
      if (t.size == 4) return fn(Tag<int32_t>{}), true;
      return fn(Tag<int64_t>{}), true;
    case 'u':
      if (t.size == 1) return fn(Tag<uint8_t>{}), true;
      if (t.size == 2) return fn(Tag<uint16_t>{}), true;
      if (t.size == 4) return fn(Tag<uint32_t>{}), true;
      return fn(Tag<uint64_t>{}), true;
    case 'f':
      if (t.size == 4) return fn(Tag<float>{}), true;
      if (t.size == 8) return fn(Tag<double>{}), true;
      return false;
    default:
      return false;
  }
}

// `count` elements of `from` at `in` cast to `to` at `out` in one typed
// loop (numpy's speed, ~8x the element-by-element path); false when either
// type is not in this machine's byte order, or has no C++ type here.
// (Not inlined, as delta's loop, so no pointer is reloaded per element.)
[[gnu::noinline]] inline bool cast_native(const sdk::ElementType& from, const sdk::ElementType& to,
                                          const uint8_t* in, uint8_t* out, uint64_t count) {
  if (!from.native() || !to.native()) return false;
  bool done = false;
  with_type(from, [&](auto f) {
    using From = typename decltype(f)::type;
    with_type(to, [&](auto t) {
      using To = typename decltype(t)::type;
      for (uint64_t k = 0; k < count; ++k) {
        From x;
        std::memcpy(&x, in + k * sizeof(From), sizeof(From));
        const To y = numpy_cast<To>(x);
        std::memcpy(out + k * sizeof(To), &y, sizeof(To));
      }
      done = true;
    });
  });
  return done;
}

}  // namespace stowage_codecs
