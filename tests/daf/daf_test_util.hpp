// Helpers shared by the daf test files.
#pragma once

#include <test_support.hpp>

#include <stowage/stowage.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

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
  test::RunResult r = test::run(test::python() + " " + test::quote(script.string()) + " " +
                                test::quote(repo.string()));
  if (r.status != 0) throw std::runtime_error("daf_peer.py failed: " + r.output);
  return stowage::json::parse(r.output);
}

// ---- what a reader sees, for comparing two stores ----

using stowage::json;

// Everything a reader sees of a store: for every node, its description and
// its values (bytes of numeric data in C order, strings as they are).
inline json snapshot(const stowage::Store& store, const std::string& node = "") {
  json out;
  stowage::NodeInfo info = store.describe(node);
  json d = store.describe_json(node);
  out["describe"] = d;
  switch (info.kind) {
    case stowage::NodeKind::group:
      for (const std::string& child : store.list(node))
        out["children"][child] = snapshot(store, node.empty() ? child : node + "/" + child);
      break;
    case stowage::NodeKind::strings:
      out["strings"] = store.read_strings(node);
      break;
    case stowage::NodeKind::array: {
      std::vector<uint8_t> bytes(info.element_count() * stowage::dtype_size(info.dtype));
      if (!bytes.empty())
        store.array(node).read(std::vector<uint64_t>(info.shape.size(), 0), info.shape,
                               bytes.data());
      out["bytes"] = json::binary(bytes);
      break;
    }
    case stowage::NodeKind::sparse: {
      std::vector<uint8_t> bytes(info.element_count() * stowage::dtype_size(info.dtype));
      if (!bytes.empty())
        store.sparse(node).read_dense(0, 0, info.shape[0], info.shape[1], bytes.data());
      out["bytes"] = json::binary(bytes);
      break;
    }
    default:
      throw std::runtime_error(node + ": a Daf node of unexpected kind");
  }
  return out;
}

// Leaves (properties and axes) in a snapshot, to know a comparison saw data.
inline size_t leaves(const json& s) {
  if (!s.contains("children")) return 1;
  size_t n = 0;
  for (const auto& [name, child] : s["children"].items()) n += leaves(child);
  return n;
}

// A fixture's snapshot, or the error code opening or reading it gives.
inline json snapshot_or_error(const std::string& location) {
  try {
    return snapshot(stowage::Store::open(location, stowage::Mode::read, "daf"));
  } catch (const stowage::Error& e) {
    return {{"error", stowage::error_code_name(e.code())}};
  }
}

inline std::vector<std::string> fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(fixtures_dir()))
    if (e.is_directory() && fs::exists(e.path() / "daf.json"))
      names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace daf_test
