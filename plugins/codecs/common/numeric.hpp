// numpy's element casts and arithmetic, for the array -> array codecs
// that compute on elements (delta, astype, fixedscaleoffset, quantize;
// numcodecs 0.11's semantics):
// one element loaded in any byte order, cast as numpy's astype casts
// (floats truncate to integers as numpy's x86-64 casts do, integers wrap), added
// in its type, stored back. Element by element: the codecs keep a typed
// loop for their common case (native byte order, one type).
#pragma once

#include <stowage/array_codec.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
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

// A float to an integer of type `t` as numpy 1.24's casts give it on
// x86-64 (its C casts, vectorised): to 1-, 2- and 4-byte integers through
// a 32-bit conversion, to 8-byte ones through a 64-bit one; a conversion
// out of range (NaN, infinities) is the "integer indefinite" 0x80...0, and
// unsigned targets of 4 and 8 bytes convert x >= 2^(bits-1) as
// (x - 2^(bits-1)) with the top bit flipped. Checked against numpy for
// NaN, infinities and values past every range (tests/filters).
inline uint64_t float_to_bits(double f, const sdk::ElementType& t) {
  const auto cvt32 = [](double x) -> uint64_t {  // cvttsd2si, 32 bits
    if (!(x > -2147483649.0 && x < 2147483648.0)) return uint64_t(0x80000000u);
    return uint64_t(int64_t(int32_t(x)));
  };
  const auto cvt64 = [](double x) -> uint64_t {  // cvttsd2si, 64 bits
    if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) return uint64_t(1) << 63;
    return uint64_t(int64_t(x));
  };
  if (t.size == 8) {
    if (t.kind == 'u' && f >= 9223372036854775808.0)
      return cvt64(f - 9223372036854775808.0) ^ (uint64_t(1) << 63);
    return cvt64(f);
  }
  if (t.size == 4 && t.kind == 'u' && f >= 2147483648.0)
    return (cvt32(f - 2147483648.0) ^ 0x80000000u) & 0xffffffffu;
  return cvt32(f);
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
    n.i = wrap(v.fp ? float_to_bits(v.f, t) : v.i, t);
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

// What this header computes in: bool (unless `bools` is false), integers,
// float32 and float64; float16 and complex are UNSUPPORTED naming the
// codec and the config key.
inline void require_arithmetic(const char* codec, const sdk::ElementType& t, const char* key,
                               bool bools = true) {
  if (t.kind == 'c' || (t.kind == 'f' && t.size == 2) || (!bools && t.kind == 'b'))
    sdk::unsupported(std::string(codec) + ": \"" + key + "\" \"" + t.typestr() +
                     "\" is not supported (" + (bools ? "bool, " : "") +
                     "integers, float32 and float64 are)");
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
    sdk::ElementType t;
    t.kind = std::is_signed_v<To> ? 'i' : 'u';
    t.size = sizeof(To);
    return static_cast<To>(float_to_bits(double(x), t));
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

// ---- numpy 1.24's types of `array op python_scalar` ---------------------
// fixedscaleoffset and quantize compute `(x - offset) * scale` with Python
// numbers from their config, and numpy < 2 types the result by the
// scalar's value (value-based casting): uint8 - 1000 is uint16, float32 *
// 70000 is float64, int16 - 0.5 is float64.

// A Python number as a JSON config holds it: an int (JSON without a
// fraction or exponent) or a float.
struct Scalar {
  bool is_int = false;
  bool negative = false;  // ints: the sign, `i` the two's complement
  uint64_t i = 0;
  double f = 0;  // the value as a double (both kinds)
};

inline sdk::ElementType element(char kind, uint32_t size) {
  sdk::ElementType t;
  t.kind = kind;
  t.size = size;
  t.big_endian = !sdk::host_is_little_endian();
  return t;
}

// numpy's np.min_scalar_type of a Python number.
inline sdk::ElementType min_scalar_type(const Scalar& s) {
  if (s.is_int) {
    if (!s.negative)
      return element('u', s.i <= 0xff ? 1 : s.i <= 0xffff ? 2 : s.i <= 0xffffffffu ? 4 : 8);
    const int64_t v = int64_t(s.i);
    return element('i', v >= -128 ? 1 : v >= -32768 ? 2 : v >= -2147483648LL ? 4 : 8);
  }
  if (!std::isfinite(s.f) || (s.f > -65000 && s.f < 65000)) return element('f', 2);
  return element('f', s.f > -3.4e38 && s.f < 3.4e38 ? 4 : 8);
}

// numpy's np.promote_types over bool, integers and floats (native order).
inline sdk::ElementType promote(const sdk::ElementType& a, const sdk::ElementType& b) {
  const auto order = [](char k) { return k == 'b' ? 0 : k == 'f' ? 2 : 1; };
  if (a.kind == 'b') return b.kind == 'b' ? element('b', 1) : element(b.kind, b.size);
  if (b.kind == 'b') return element(a.kind, a.size);
  if (order(a.kind) != order(b.kind)) {  // an integer and a float
    const sdk::ElementType& i = order(a.kind) == 1 ? a : b;
    const sdk::ElementType& f = order(a.kind) == 1 ? b : a;
    const uint32_t holds = i.size == 1 ? 2 : i.size == 2 ? 4 : 8;
    return element('f', std::max(holds, f.size));
  }
  if (a.kind == b.kind) return element(a.kind, std::max(a.size, b.size));
  const sdk::ElementType& u = a.kind == 'u' ? a : b;
  const sdk::ElementType& i = a.kind == 'u' ? b : a;
  if (i.size > u.size) return element('i', i.size);
  return u.size == 8 ? element('f', 8) : element('i', 2 * u.size);
}

// The type of `array op scalar` for an array of `t` (numpy < 2): the
// scalar counts by its value (min_scalar_type) unless its kind is above the
// array's, then as float64 or int64.
inline sdk::ElementType result_type(const sdk::ElementType& t, const Scalar& s) {
  const int array_kind = t.kind == 'b' ? 0 : t.kind == 'f' ? 2 : 1;
  const int scalar_kind = s.is_int ? 1 : 2;
  if (array_kind >= scalar_kind) return promote(t, min_scalar_type(s));
  return promote(t, s.is_int ? element('i', 8) : element('f', 8));
}

// The scalar as a value of type `t` (what numpy casts it to for the loop).
inline Num cast(const Scalar& s, const sdk::ElementType& t) {
  Num n;
  if (s.is_int) {
    n.is_signed = s.negative;
    n.i = s.i;
  } else {
    n.fp = true;
    n.f = s.f;
  }
  return cast(n, t);
}

}  // namespace stowage_codecs
