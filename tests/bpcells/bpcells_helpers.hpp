// Shared helpers of the bpcells tests: fixture lookup, whole-matrix reads,
// and copying a matrix through the stowage API.
#pragma once

#include <test_support.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace bpcells_test {

namespace fs = std::filesystem;

inline fs::path fixture_dir() { return test::fixtures() / "bpcells"; }

// Fixture matrix names (directories with an .expected.json beside them).
inline std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fixture_dir()))
    if (entry.is_directory() && fs::exists(fixture_dir() / (entry.path().filename().string() + ".expected.json")))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline stowage::json expected(const std::string& name) {
  return test::read_json(fixture_dir() / (name + ".expected.json"));
}

inline std::vector<std::string> list_files(const fs::path& dir) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path().filename().string());
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
    if (!info.dims[d].labels.empty()) dst.write_strings(created.dims[d].labels, src.read_strings(info.dims[d].labels));
  stowage::Sparse in = src.sparse(""), out = dst.sparse("");
  for (uint64_t major = 0; major < in.majors(); ++major) out.append(in.read(major, major + 1), 1);
  dst.close();
}

}  // namespace bpcells_test
