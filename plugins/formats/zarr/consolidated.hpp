// Consolidated metadata: zarr-python 2's ".zmetadata" at a store's root
// (zarr.consolidate_metadata), every node's metadata files in one:
//
//   {"metadata": {".zgroup": {...}, ".zattrs": {...}, "a/.zarray": {...}, "a/.zattrs": {...}},
//    "zarr_consolidated_format": 1}
//
// Opened for reading, a store answers list, describe and open_node from it
// without reading each node's files: over HTTP, one request instead of two
// or three per node and one per listing. The rule for writing is in
// README.md ("Consolidated metadata").
#pragma once

#include "metadata.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarr {

constexpr const char* kConsolidatedFile = ".zmetadata";

class Consolidated {
 public:
  // Parses .zmetadata's text; `file` names it in errors. Malformed is
  // CORRUPT, another "zarr_consolidated_format" UNSUPPORTED.
  static Consolidated parse(std::string_view text, const std::string& file);

  // The metadata file at `key` (relative to the root: "a/b/.zarray"), as
  // text; nullopt when .zmetadata does not hold it.
  std::optional<std::string> text(const std::string& key) const;
  // The child nodes of the node at `dir` (relative, "" for the root), sorted.
  std::vector<std::string> children(const std::string& dir) const;

 private:
  std::map<std::string, json> entries_;
};

// The text of a .zmetadata holding `entries` (key relative to the root ->
// the file's JSON), as zarr-python writes it: keys sorted, 4-space indents.
std::string consolidated_text(const std::map<std::string, json>& entries);

}  // namespace zarr
