// Helpers shared by the Zarr test files: opening stores, reading whole
// arrays, running zarr-python (zarr_peer.py) and what it printed.
#pragma once

#include "test_support.hpp"

#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace zarrtest {

using stowage::json;
namespace fs = std::filesystem;

inline fs::path fixture(const std::string& name) { return test::fixtures() / "zarr" / name; }

inline stowage::Store open_zarr(const std::string& path, stowage::Mode mode = stowage::Mode::read) {
  return stowage::Store::open(path, mode, "zarr");
}

// JSON equality ignoring key order (ordered_json compares order too).
inline nlohmann::json unordered(const json& j) { return nlohmann::json::parse(j.dump()); }

// A whole array as bytes in host byte order, C order.
inline std::string read_bytes(const stowage::Array& a) {
  std::string out(a.info().element_count() * stowage::dtype_size(a.dtype()), '\0');
  a.read(std::vector<uint64_t>(a.ndim(), 0), a.shape(), out.data());
  return out;
}

// The codec plugin a numcodecs compressor needs ("raw" for none).
inline std::string plugin_of(const json& compressor) {
  if (compressor.is_null()) return "raw";
  const std::string id = compressor.value("id", "");
  if (id == "zlib" || id == "gzip") return "gzip";
  if (id == "bz2") return "bzip2";
  if (id == "lzma") return "xz";
  return id;
}

// Runs tests/zarr/zarr_peer.py with `args`; fails the test when it fails.
inline std::string run_peer(const std::string& args) {
  const fs::path script = test::source_root() / "tests" / "zarr" / "zarr_peer.py";
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " + args);
  REQUIRE_MESSAGE(r.status == 0, r.output);
  return r.output;
}

// The JSON lines a peer printed, by "node".
inline std::map<std::string, json> lines_by_node(const std::string& output) {
  std::map<std::string, json> out;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;
    json j = json::parse(line);
    out[j.at("node").get<std::string>()] = j;
  }
  return out;
}

// The file zarr_peer.py dumped `node` into.
inline std::string dumped(const fs::path& out, std::string node) {
  for (size_t at; (at = node.find('/')) != std::string::npos;) node.replace(at, 1, "__");
  return test::read_file(out / (node + ".bin"));
}

}  // namespace zarrtest
