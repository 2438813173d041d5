// Helpers shared by the lz4 and blosc suites: the codec from the registry, test
// data, and checking that an operation fails with a given code and message.
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace lz4test {

using Bytes = std::vector<uint8_t>;

inline stowage::Codec codec(const std::string& config) {
  return stowage::Registry::global().codec(std::string_view(config));
}

inline Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
inline std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

// Incompressible bytes (LZ4 stores them RAW).
inline Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<uint8_t>(rng());
  return out;
}

// Compressible data: little-endian uint16 ramps with some noise, like image tiles.
inline Bytes ramp_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = i % 2 ? static_cast<uint8_t>((i / 512) & 0xFF)
                   : static_cast<uint8_t>((i / 2) % 97 + (rng() % 3));
  return out;
}

// Compressible runs interleaved with random stretches: RAW and LZ4 blocks in one stream.
inline Bytes mixed_bytes(size_t n, uint32_t seed) {
  Bytes out = random_bytes(n, seed);
  for (size_t i = 0; i < n; ++i)
    if ((i / 3000) % 2 == 0) out[i] = static_cast<uint8_t>(i / 3000);
  return out;
}

// Runs f and checks it throws stowage::Error with `code` and a message containing `words`.
template <class F>
void check_error(F&& f, stowage::ErrorCode code, const std::string& words) {
  try {
    f();
    FAIL_CHECK("no error, expected one containing: " << words);
  } catch (const stowage::Error& e) {
    CHECK_MESSAGE(e.code() == code, e.what());
    CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos,
                  "message \"" << e.what() << "\" lacks \"" << words << "\"");
  }
}

inline void check_corrupt_decode(const stowage::Codec& c, const Bytes& in, size_t capacity,
                                 const std::string& words) {
  Bytes out(capacity);
  check_error([&] { c.decode(in.data(), in.size(), out.data(), out.size()); },
              stowage::ErrorCode::corrupt, words);
}

}  // namespace lz4test
