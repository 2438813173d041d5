// IEEE 754 binary16 (numpy's float16) to and from double, header only, for
// the core and for plugins: C++20 has no 16-bit float type to lean on.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace stowage::sdk {

// The nearest float16, ties to even, as numpy's astype rounds; beyond 65504
// (from 65520 on) it is infinite; NaN stays NaN (quiet, sign kept).
inline uint16_t half_from_double(double d) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  const double a = std::fabs(d);
  if (std::isnan(d)) return sign | 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00;
  // Every product below is exact in double; nearbyint rounds once, ties to even.
  if (a < std::ldexp(1.0, -14)) return sign | uint16_t(std::nearbyint(std::ldexp(a, 24)));
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  const double mantissa = std::nearbyint((std::ldexp(a, 1 - e) - 1.0) * 1024.0);
  // A mantissa rounded up to 1024 carries into the exponent, as it should.
  return sign | uint16_t(((e - 1 + 15) << 10) + int(mantissa));
}

// The value of float16 bits, exactly (every float16 is a double).
inline double half_to_double(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) return sign * std::ldexp(double(mantissa), -24);
  if (exponent == 31)
    return mantissa ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
                    : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(double(1024 + mantissa), exponent - 25);
}

}  // namespace stowage::sdk
