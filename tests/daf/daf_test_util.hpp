// Helpers shared by the daf test files.
#pragma once

#include <test_support.hpp>

#include <stowage/stowage.hpp>

#include <string>

namespace daf_test {

namespace fs = std::filesystem;

inline fs::path fixtures_dir() { return test::fixtures() / "daf"; }

// stowage dtype of a Daf element type.
inline std::string dtype_of(const std::string& eltype) {
  if (eltype == "Bool") return "bool";
  std::string d;
  for (char c : eltype) d += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return d;  // Int8 -> int8, UInt64 -> uint64, Float32 -> float32
}

// Runs the independent Python reader on a repository and parses its output.
inline stowage::json peer_read(const fs::path& repo) {
  fs::path script = test::source_root() / "tests" / "daf" / "daf_peer.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " + test::quote(repo.string()));
  if (r.status != 0) throw std::runtime_error("daf_peer.py failed: " + r.output);
  return stowage::json::parse(r.output);
}

}  // namespace daf_test
