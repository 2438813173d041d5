// Shared helpers of the bpcells tests: fixture lookup, whole-matrix reads,
// and copying a matrix through the stowage API.
#pragma once

#include <test_support.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace bpcells_test {

namespace fs = std::filesystem;

inline fs::path fixture_dir() { return test::fixtures() / "bpcells"; }

// Fixture matrix names (directories with an .expected.json beside them).
inline std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fixture_dir()))
    if (entry.is_directory() &&
        fs::exists(fixture_dir() / (entry.path().filename().string() + ".expected.json")))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline stowage::json expected(const std::string& name) {
  return test::read_json(fixture_dir() / (name + ".expected.json"));
}

inline std::vector<std::string> list_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

// The whole matrix as dense C-order bytes.
inline std::string read_dense(const stowage::Sparse& m) {
  const auto& info = m.info();
  std::string dense(info.shape[0] * info.shape[1] * stowage::dtype_size(info.dtype), '\0');
  m.read_dense(0, 0, info.shape[0], info.shape[1], dense.data());
  return dense;
}

// Copies a matrix (values, names, layout) into a new bpcells directory,
// appending one major at a time as a streaming converter would.
inline void copy_matrix(const std::string& from, const std::string& to, bool packed) {
  stowage::Store src = stowage::Store::open(from);
  stowage::NodeInfo info = src.describe("");
  stowage::Store dst = stowage::Store::open(to, stowage::Mode::truncate, "bpcells");
  dst.create("", {{"kind", "sparse"},
                  {"dtype", stowage::dtype_name(info.dtype)},
                  {"shape", info.shape},
                  {"layout", info.csr ? "csr" : "csc"},
                  {"packed", packed}});
  stowage::NodeInfo created = dst.describe("");
  for (int d = 0; d < 2; ++d)
    if (!info.dims[d].labels.empty())
      dst.write_strings(created.dims[d].labels, src.read_strings(info.dims[d].labels));
  stowage::Sparse in = src.sparse(""), out = dst.sparse("");
  for (uint64_t major = 0; major < in.majors(); ++major) out.append(in.read(major, major + 1), 1);
  dst.close();
}

// A sparse matrix held in memory, majors in order.
struct Matrix {
  std::string dtype;
  uint64_t rows = 0, cols = 0;
  bool csr = false;
  std::vector<uint64_t> indptr{0};
  std::vector<uint32_t> indices;
  std::vector<uint8_t> values;  // raw bytes of dtype
};

inline size_t esize(const std::string& dtype) {
  return dtype == "float64" || dtype == "uint64" ? 8 : 4;
}

// A random sparse matrix: uint32 values are small counts with explicit zeros
// and 2^32-1 mixed in; float values are exact; uint64 values are random bits.
inline Matrix random_matrix(const std::string& dtype, uint64_t rows, uint64_t cols, bool csr,
                            double density, uint32_t seed) {
  Matrix m;
  m.dtype = dtype;
  m.rows = rows;
  m.cols = cols;
  m.csr = csr;
  std::mt19937_64 rng(seed);
  uint64_t majors = csr ? rows : cols, minors = csr ? cols : rows;
  size_t es = esize(dtype);
  for (uint64_t j = 0; j < majors; ++j) {
    for (uint64_t i = 0; i < minors; ++i) {
      if (std::uniform_real_distribution<double>(0, 1)(rng) >= density) continue;
      m.indices.push_back(uint32_t(i));
      uint64_t r = rng();
      uint8_t bytes[8];
      if (dtype == "uint32") {
        // Mostly small counts, with explicit zeros and the extremes BPCells must keep.
        uint32_t v = r % 50 == 0 ? 0 : r % 53 == 0 ? 0xFFFFFFFFu : uint32_t(1 + r % 20);
        std::memcpy(bytes, &v, 4);
      } else if (dtype == "float32") {
        float v = float(int64_t(r % 2001) - 1000) / 8.0f;
        std::memcpy(bytes, &v, 4);
      } else if (dtype == "float64") {
        double v = double(int64_t(r % 2000001) - 1000000) / 3.0;
        std::memcpy(bytes, &v, 8);
      } else {
        uint64_t v = r;
        std::memcpy(bytes, &v, 8);
      }
      m.values.insert(m.values.end(), bytes, bytes + es);
    }
    m.indptr.push_back(m.indices.size());
  }
  return m;
}

// Writes m appending majors in batches of varying size.
inline void write_matrix(const Matrix& m, const std::string& path, bool packed, uint32_t seed) {
  stowage::Store store = stowage::Store::open(path, stowage::Mode::truncate, "bpcells");
  store.create("", {{"kind", "sparse"},
                    {"dtype", m.dtype},
                    {"shape", {m.rows, m.cols}},
                    {"layout", m.csr ? "csr" : "csc"},
                    {"packed", packed}});
  stowage::Sparse out = store.sparse("");
  std::mt19937 rng(seed);
  uint64_t majors = m.indptr.size() - 1, done = 0;
  size_t es = esize(m.dtype);
  while (done < majors) {
    uint64_t n = std::min<uint64_t>(majors - done, 1 + rng() % 7);
    stowage::SparseSlice s;
    uint64_t first = m.indptr[done];
    for (uint64_t j = done; j <= done + n; ++j) s.indptr.push_back(m.indptr[j] - first);
    s.indices.assign(m.indices.begin() + first, m.indices.begin() + m.indptr[done + n]);
    s.values.assign(m.values.begin() + first * es, m.values.begin() + m.indptr[done + n] * es);
    out.append(s, n);
    done += n;
  }
  store.close();
}

inline std::string hex(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += digits[p[i] >> 4], out += digits[p[i] & 15];
  return out;
}

// Everything a reader sees of a matrix: its description, its names, its
// dense values, and its majors read one at a time and in uneven runs (so
// partial chunks at both ends are decoded through the window).
inline stowage::json snapshot(const stowage::Store& store) {
  stowage::json out;
  stowage::NodeInfo info = store.describe("");
  out["describe"] = store.describe_json("");
  for (const auto& d : info.dims)
    if (!d.labels.empty()) out["names"][d.labels] = store.read_strings(d.labels);
  stowage::Sparse m = store.sparse("");
  std::string dense = read_dense(m);
  out["dense"] = hex(reinterpret_cast<const uint8_t*>(dense.data()), dense.size());
  for (uint64_t step : {1, 3}) {
    for (uint64_t begin = 0; begin < m.majors(); begin += step) {
      stowage::SparseSlice s = m.read(begin, std::min(begin + step, m.majors()));
      out["runs"].push_back({{"indptr", s.indptr},
                             {"indices", s.indices},
                             {"values", hex(s.values.data(), s.values.size())}});
    }
  }
  return out;
}

// The dense C-order bytes of m.
inline std::string dense_of(const Matrix& m) {
  size_t es = esize(m.dtype);
  std::string dense(m.rows * m.cols * es, '\0');
  for (uint64_t j = 0; j + 1 < m.indptr.size(); ++j)
    for (uint64_t k = m.indptr[j]; k < m.indptr[j + 1]; ++k) {
      uint64_t r = m.csr ? j : m.indices[k], c = m.csr ? m.indices[k] : j;
      std::memcpy(&dense[(r * m.cols + c) * es], &m.values[k * es], es);
    }
  return dense;
}

}  // namespace bpcells_test
