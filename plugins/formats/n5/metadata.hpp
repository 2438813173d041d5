// N5 metadata: attributes.json, data types, and the dataset description the
// plugin derives from them.
//
// N5 lists dimensions fastest-varying first (x, y, z). The plugin shows every
// shape in C order (slowest first), like zarr-python and z5, so `shape` and
// `chunks` below are the *reverse* of N5's `dimensions` and `blockSize`.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace n5 {

// ordered_json keeps the key order of attributes.json on a rewrite.
using json = nlohmann::ordered_json;

// The spec limits a chunk (block) to 2 GiB (README rule 7).
constexpr uint64_t kMaxChunkBytes = uint64_t(1) << 31;
// A node's metadata file, relative to its directory.
constexpr const char* kAttributesFile = "/attributes.json";
// Strings in one block of a string dataset stowage creates with no blockSize given.
constexpr uint64_t kStringBlock = 4096;
// The container version this plugin writes, and the newest major it reads.
constexpr const char* kWrittenVersion = "4.0.0";
constexpr int kNewestMajor = 4;

// What kind of elements a dataset holds.
enum class ElementKind { numeric, string, object };

struct DataType {
  std::string name;  // N5's dataType ("uint16", "string", ...)
  ElementKind kind;
  size_t size;  // bytes per element; 0 for string/object
};

// The dataType of a name, or nullopt if N5 does not know it.
std::optional<DataType> find_data_type(std::string_view name);

// Keys of attributes.json that describe a dataset rather than hold user data.
bool is_dataset_key(std::string_view key);

// Whether parsed attributes describe a dataset (dimensions, blockSize and
// dataType all present).
bool is_dataset(const json& attributes);

struct Dataset {
  DataType type;
  std::vector<uint64_t> shape;   // C order: reversed `dimensions`
  std::vector<uint64_t> chunks;  // C order: reversed `blockSize`
  json compression;              // the codec config (legacy compressionType mapped)
  size_t ndim() const { return shape.size(); }
  uint64_t chunk_elements() const;  // product of `chunks`
  uint64_t grid(size_t d) const;    // number of chunks along C dimension d
  uint64_t block_count() const;     // number of chunks in the grid
};

// Parses a dataset's attributes; `file` names attributes.json in errors.
// Malformed values are CORRUPT, valid but unreadable ones UNSUPPORTED.
Dataset parse_dataset(const json& attributes, const std::string& file);

// The user attributes: everything but the dataset keys and, at the root,
// the "n5" version key. Key order is kept.
json user_attributes(const json& attributes, bool is_root);

// attributes.json of a new dataset in N5 Java's key order (dataType,
// compression, blockSize, dimensions), then `user`.
json dataset_attributes(const Dataset& ds, const json& user);

// The major number of an "n5" version string; nullopt when it does not
// parse (which N5 Java reads as 0.0.0 and accepts).
std::optional<long> version_major(const json& version);

// Parses attributes.json text; `file` names it in errors (CORRUPT).
json parse_attributes(std::string_view text, const std::string& file);

}  // namespace n5
