// Shared by the npy tests: running the numpy peer and reading whole arrays.
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace npytest {

inline test::fs::path peer_script() {
  return test::source_root() / "tests" / "npy" / "npy_peer.py";
}

// Runs npy_peer.py MODE DIR and fails the test with its output if it fails.
inline std::string run_peer(const std::string& mode, const test::fs::path& dir) {
  test::RunResult r = test::run(test::python() + " " + test::quote(peer_script().string()) + " " +
                                mode + " " + test::quote(dir.string()));
  INFO(r.output);
  REQUIRE(r.status == 0);
  return r.output;
}

// The whole array as bytes (C order, host byte order).
inline std::string read_bytes(const stowage::Array& a) {
  std::string out(a.info().element_count() * stowage::dtype_size(a.dtype()), '\0');
  a.read(std::vector<uint64_t>(a.ndim(), 0), a.shape(), out.data());
  return out;
}

// Opens `path` expecting an error; returns it (or fails the test).
inline stowage::Error open_error(const std::string& path, const std::string& format = "npy") {
  try {
    stowage::Store s = stowage::Store::open(path, stowage::Mode::read, format);
    stowage::Array a = s.array("");
    read_bytes(a);
  } catch (const stowage::Error& e) {
    return e;
  }
  FAIL("no error opening " << path);
  throw;  // unreachable
}

}  // namespace npytest
