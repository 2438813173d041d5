// Helpers shared by the datg test files: fixture paths, bit patterns, the
// independent Python reader, and checking that an error names its file.
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace datgtest {

namespace fs = std::filesystem;
using stowage::json;

inline fs::path fixture(const std::string& name) { return test::fixtures() / "datg" / name; }

// Every fixture base name (from its .expected.json), sorted.
inline std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(test::fixtures() / "datg")) {
    const std::string file = entry.path().filename().string();
    const std::string suffix = ".expected.json";
    if (file.size() > suffix.size() && file.substr(file.size() - suffix.size()) == suffix)
      names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

inline std::vector<uint64_t> bits_of(const std::vector<double>& values) {
  std::vector<uint64_t> bits(values.size());
  if (!values.empty()) std::memcpy(bits.data(), values.data(), values.size() * 8);
  return bits;
}

inline double from_bits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// A raw little-endian float64 file (the fixtures' .expected.bin) as bit patterns.
inline std::vector<uint64_t> read_le_bits(const fs::path& path) {
  const std::string bytes = test::read_file(path);
  std::vector<uint64_t> bits(bytes.size() / 8);
  for (size_t i = 0; i < bits.size(); ++i) {
    uint64_t v = 0;
    for (int b = 7; b >= 0; --b) v = (v << 8) | static_cast<uint8_t>(bytes[8 * i + b]);
    bits[i] = v;
  }
  return bits;
}

// Copies a dataset's three files to dir/<new_base>.*; returns dir/<new_base>.datg.
inline fs::path copy_dataset(const std::string& fixture_base, const fs::path& dir,
                             const std::string& new_base) {
  for (const char* ext : {".datg", ".rows.txt.gz", ".cols.txt.gz"})
    fs::copy_file(fixture(fixture_base + ext), dir / (new_base + ext),
                  fs::copy_options::overwrite_existing);
  return dir / (new_base + ".datg");
}

inline std::string peer_script() {
  return (test::source_root() / "tests" / "datg" / "datg_peer.py").string();
}

struct PeerRead {
  json info;                   // footer, metadata, names, offsets
  std::vector<uint64_t> bits;  // the matrix, C order
};

// Reads a datg dataset with the independent Python reader.
inline PeerRead peer_read(const fs::path& datg) {
  test::TempDir tmp;
  const fs::path bin = tmp / "out.bin", info = tmp / "out.json";
  test::RunResult r = test::run(test::python() + " " + test::quote(peer_script()) + " read " +
                                test::quote(datg.string()) + " " + test::quote(bin.string()) + " " +
                                test::quote(info.string()));
  INFO(r.output);
  REQUIRE(r.status == 0);
  return {test::read_json(info), read_le_bits(bin)};
}

inline stowage::Store open_datg(const fs::path& path) {
  return stowage::Store::open(path.string(), stowage::Mode::read, "datg");
}

// Runs fn and returns the stowage::Error it must throw, after checking its
// code and that its message names `file`.
template <class Fn>
std::string expect_error(Fn&& fn, stowage::ErrorCode code, const fs::path& file) {
  try {
    fn();
  } catch (const stowage::Error& e) {
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(std::string(stowage::error_code_name(e.code())) == stowage::error_code_name(code));
    CHECK(message.find(file.filename().string()) != std::string::npos);
    return message;
  }
  FAIL("no error was thrown for " << file.string());
  return {};
}

// Overwrites bytes of a file at `offset` (negative: from the end).
inline void patch(const fs::path& path, int64_t offset, const std::string& bytes) {
  std::string data = test::read_file(path);
  const size_t at =
      offset < 0 ? data.size() - static_cast<size_t>(-offset) : static_cast<size_t>(offset);
  data.replace(at, bytes.size(), bytes);
  test::write_file(path, data);
}

inline std::vector<std::string> read_names(const stowage::Store& store, const char* node) {
  return store.read_strings(node);
}

}  // namespace datgtest
