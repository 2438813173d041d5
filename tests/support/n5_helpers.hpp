// Every N5 test helper, in one place:
//   n5test    for the N5 suite (tests/n5): opening stores, comparing JSON
//             regardless of key order, and element-wise data for every dtype;
//   n5chunks  every chunk of the shared N5 fixtures compressed with one codec,
//             with the bytes its payload must decode to, built independently
//             from the fixture's expected.bin (little-endian, C order) -- no
//             N5 reader involved; for the codec suites (lz4, blosc).
// (What n5_test_writer writes is in n5_writer_values.hpp, beside this file:
// that helper process links no doctest.)
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
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
  return json{
      {"kind", "array"}, {"dtype", dtype}, {"shape", shape}, {"chunks", chunks}, {"codec", codec}};
}

}  // namespace n5test

namespace n5chunks {

struct Chunk {
  std::string file;           // the chunk file
  stowage::json compression;  // the dataset's "compression" object
  std::string payload;        // the chunk's bytes after the N5 block header
  std::string expected;       // the decoded payload: big-endian elements, N5 order
};

inline size_t dtype_bytes(const std::string& t) {
  if (t == "uint8" || t == "int8") return 1;
  if (t == "uint16" || t == "int16") return 2;
  if (t == "uint32" || t == "int32" || t == "float32") return 4;
  if (t == "uint64" || t == "int64" || t == "float64") return 8;
  throw std::runtime_error("unexpected dataType " + t);
}

inline uint32_t be32(const std::string& s, size_t at) {
  return uint32_t(uint8_t(s[at])) << 24 | uint32_t(uint8_t(s[at + 1])) << 16 |
         uint32_t(uint8_t(s[at + 2])) << 8 | uint32_t(uint8_t(s[at + 3]));
}

// The chunk's elements taken from expected.bin; positions beyond the dataset
// (zarr's padded edge chunks) are zeros.
inline std::string expected_chunk(const std::string& bin, const std::vector<uint64_t>& dims,
                                  const std::vector<uint64_t>& block,
                                  const std::vector<uint64_t>& grid,
                                  const std::vector<uint64_t>& chunk_dims, size_t width) {
  size_t count = 1;
  for (uint64_t d : chunk_dims) count *= d;
  std::string out(count * width, '\0');
  std::vector<uint64_t> local(chunk_dims.size(), 0);
  for (size_t e = 0; e < count; ++e) {
    bool inside = true;
    uint64_t offset = 0, stride = 1;
    for (size_t k = 0; k < dims.size(); ++k) {  // N5 order: fastest first
      uint64_t pos = grid[k] * block[k] + local[k];
      inside = inside && pos < dims[k];
      offset += pos * stride;
      stride *= dims[k];
    }
    if (inside)
      for (size_t b = 0; b < width; ++b) out[e * width + b] = bin[offset * width + (width - 1 - b)];
    for (size_t k = 0; k < local.size() && ++local[k] == chunk_dims[k]; ++k) local[k] = 0;
  }
  return out;
}

inline Chunk load_chunk(const test::fs::path& file, const stowage::json& ds, const std::string& bin,
                        const std::vector<uint64_t>& grid) {
  std::string bytes = test::read_file(file);
  uint16_t mode = uint16_t(uint8_t(bytes.at(0)) << 8 | uint8_t(bytes.at(1)));
  size_t ndim = uint16_t(uint8_t(bytes.at(2)) << 8 | uint8_t(bytes.at(3)));
  std::vector<uint64_t> chunk_dims;
  for (size_t k = 0; k < ndim; ++k) chunk_dims.push_back(be32(bytes, 4 + 4 * k));
  size_t header = 4 + 4 * ndim + (mode == 1 ? 4 : 0);
  auto dims = ds["dimensions_n5_order"].get<std::vector<uint64_t>>();
  auto block = ds["blockSize_n5_order"].get<std::vector<uint64_t>>();
  size_t width = dtype_bytes(ds["dataType"].get<std::string>());
  return {file.string(), ds["compression"], bytes.substr(header),
          expected_chunk(bin, dims, block, grid, chunk_dims, width)};
}

// Every present chunk of every fixture dataset whose compression type is `type`.
inline std::vector<Chunk> chunks_of(const std::string& type) {
  std::vector<Chunk> out;
  test::fs::path dir = test::fixtures() / "n5";
  std::vector<test::fs::path> sidecars;
  for (const auto& entry : test::fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.size() > 14 && name.substr(name.size() - 14) == ".expected.json")
      sidecars.push_back(entry.path());
  }
  std::sort(sidecars.begin(), sidecars.end());
  for (const auto& sidecar : sidecars) {
    std::string name = sidecar.filename().string();
    test::fs::path container = dir / name.substr(0, name.size() - 14);
    stowage::json doc = test::read_json(sidecar);
    for (const auto& [path, ds] : doc["datasets"].items()) {
      const stowage::json& c = ds["compression"];
      if (!c.is_object() || c.value("type", "") != type || !ds.contains("expected_bin")) continue;
      std::string bin = test::read_file(dir / ds["expected_bin"].get<std::string>());
      for (const auto& g : ds["chunks_present_n5_order"]) {
        auto grid = g.get<std::vector<uint64_t>>();
        test::fs::path file = container / path;
        for (uint64_t i : grid) file /= std::to_string(i);
        out.push_back(load_chunk(file, ds, bin, grid));
      }
    }
  }
  return out;
}

}  // namespace n5chunks
