// Helpers shared by the N5 test files: opening stores, comparing JSON
// regardless of key order, and element-wise data for every dtype.
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

namespace n5test {

using stowage::json;
namespace fs = std::filesystem;

inline fs::path fixture(const std::string& name) { return test::fixtures() / "n5" / name; }

inline stowage::Store open_n5(const fs::path& path, stowage::Mode mode = stowage::Mode::read,
                              const json& options = json::object()) {
  return stowage::Store::open(path.string(), mode, "n5", options);
}

// JSON equality ignoring key order (ordered_json compares order too).
inline nlohmann::json unordered(const json& j) { return nlohmann::json::parse(j.dump()); }

// Reads a whole array as bytes (host byte order).
inline std::string read_bytes(const stowage::Array& a) {
  std::string out(a.info().element_count() * stowage::dtype_size(a.dtype()), '\0');
  a.read(std::vector<uint64_t>(a.ndim(), 0), a.shape(), out.data());
  return out;
}

// Deterministic bytes that look like data of some dtype (compressible but
// not constant), `n` bytes, seeded.
inline std::string sample_bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    s[i] = static_cast<char>((i % 7 == 0) ? (x >> 24) : ((i / 16) & 0x3f));
  }
  return s;
}

inline std::vector<uint64_t> reversed(std::vector<uint64_t> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

// A description for Store::create.
inline json array_desc(const std::string& dtype, const std::vector<uint64_t>& shape,
                       const std::vector<uint64_t>& chunks, const json& codec = nullptr) {
  return json{{"kind", "array"}, {"dtype", dtype}, {"shape", shape}, {"chunks", chunks}, {"codec", codec}};
}

}  // namespace n5test
