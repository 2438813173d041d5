// Zarr v2 metadata (zarr-specs docs/v2/v2.0.rst): the .zarray of an array,
// its data type and fill value, and the JSON of the files this plugin writes.
//
// Zarr lists shapes slowest dimension first, as stowage does, so shapes and
// chunk shapes pass through unchanged; "order": "F" only changes how the
// elements of one chunk are laid out, which the host handles.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zarr {

// ordered_json keeps the key order of a file on a rewrite.
using json = nlohmann::ordered_json;

struct FilterChain;  // filter_chain.hpp

// The metadata files of a node, relative to its directory.
constexpr const char* kGroupFile = ".zgroup";
constexpr const char* kArrayFile = ".zarray";
constexpr const char* kAttributesFile = ".zattrs";
constexpr const char* kV3File = "zarr.json";
// A metadata file larger than this is refused before it is read whole.
constexpr uint64_t kMaxMetadataBytes = uint64_t(1) << 28;
// Chunks are decoded whole in memory, and blosc's frames end at 2 GiB.
constexpr uint64_t kMaxChunkBytes = uint64_t(1) << 31;

// A numeric data type as .zarray spells it (numpy's typestr: "<u2", ">f8",
// "|b1") and as stowage names it ("uint16", "float64", "bool").
struct DataType {
  std::string typestr;  // as in the file
  std::string name;     // stowage's dtype
  char kind = 'u';      // 'b' bool, 'i' signed, 'u' unsigned, 'f' float, 'c' complex
  size_t size = 1;      // bytes per element
  bool big_endian = false;
};

// The data type of a typestr; UNSUPPORTED naming `file` for one stowage has
// no type for (datetime, strings, structured), CORRUPT for
// one that is no typestr at all.
DataType parse_data_type(const json& dtype, const std::string& file);

// The typestr of stowage's dtype `name` in the given byte order; nullopt for
// a name stowage does not have.
std::optional<DataType> data_type_for(std::string_view name, bool big_endian);

// The value of missing chunks. The file's JSON (a number, "NaN",
// "Infinity", "-Infinity", or null, read as 0) becomes one element's bytes
// in the array's byte order, and what describe() tells the host.
struct FillValue {
  json in_file;                // as written in .zarray
  json for_host;               // a number, or "NaN"/"Infinity"/"-Infinity"
  std::vector<uint8_t> bytes;  // one element, in the array's byte order
  // An integer a double cannot hold exactly (beyond 2^53): the host would
  // round it, so the plugin fills missing chunks itself.
  bool plugin_fills = false;
  bool is_zero() const;
};

// Parses a fill value for `type`; an unusable one is CORRUPT naming `file`.
FillValue parse_fill_value(const json& value, const DataType& type, const std::string& file);
// A complex type's part (complex64: float32) and a complex fill value of two parts' ones.
DataType complex_part_type(const DataType& complex);
FillValue join_complex_fill(const FillValue& re, const FillValue& im);

struct V3Layout;  // metadata_v3.hpp

// An array as its .zarray (or, for v3, its zarr.json) describes it.
struct ArrayMeta {
  DataType type;
  std::vector<uint64_t> shape, chunks;
  bool fortran = false;  // "order": "F"
  char separator = '.';  // dimension_separator
  FillValue fill;
  json compressor;          // numcodecs' config as in the file (null: none)
  json codec;               // the host codec it translates to (null: none)
  std::string codec_error;  // why no codec plugin reads it (codec_names.hpp); empty: one does
  json codec_unknown;       // the codec (or filter) entry no plugin answers to
  json filters;             // v2: numcodecs' filters as in the file (null: none)
  std::shared_ptr<const FilterChain> filter_chain;  // parsed (null: none)
  std::shared_ptr<const V3Layout> v3;               // Zarr v3 only: keys, codec chain, sharding
  bool strings = false;  // vlen-utf8 strings: a strings node (strings.hpp)

  size_t ndim() const { return shape.size(); }
  uint64_t grid(size_t d) const { return (shape[d] + chunks[d] - 1) / chunks[d]; }
  uint64_t chunk_elements() const;
  uint64_t chunk_bytes() const { return chunk_elements() * type.size; }
};

// Parses a .zarray's text; `file` names it in errors. Malformed metadata is
// CORRUPT, valid metadata this plugin cannot read (a filter or data type)
// UNSUPPORTED. The compressor is resolved by resolve_codecs (codec_names.hpp).
ArrayMeta parse_array(std::string_view text, const std::string& file);

// Extents from a create() description (v2 and v3): `key` must be an array
// of integers >= min, else INVALID_ARGUMENT naming it (store.cpp).
std::vector<uint64_t> description_extents(const json& d, const char* key, uint64_t min);

// What v2 and v3 read alike from a create() description: dtype and byte
// order, shape, chunks (at most 2 GiB each), C or F order, fill value
// (store.cpp); `version` 2 or 3 names the type as that version's metadata
// does. Bad values are INVALID_ARGUMENT, a dtype Zarr lacks UNSUPPORTED.
ArrayMeta description_meta(const json& d, int version);
// The description's "shards" into a v3 layout (store_v3.cpp).
void apply_shards(V3Layout& layout, const json& d, const ArrayMeta& a);
// A new v3 array's chunk keys from a create's "storage": another v3 store's
// "chunk_key_encoding" when it describes one, else the default ("/").
void apply_chunk_keys(V3Layout& layout, const json& storage);

// The .zarray of an array, keys sorted as zarr-python writes them.
json array_json(const ArrayMeta& meta);

// Parses a JSON object file (.zgroup, .zattrs): CORRUPT naming `file` when
// it is not one.
json parse_object(std::string_view text, const std::string& file);

// JSON text as zarr-python writes it: 4-space indents, ASCII only (zarr
// 2.x reads metadata as ASCII), NaN and infinities as zarr's strings.
std::string to_text(const json& j);

}  // namespace zarr
