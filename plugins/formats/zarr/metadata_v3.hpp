// Zarr v3 metadata (zarr-specs docs/v3/core/v3.0.rst): the zarr.json of a
// group or an array, read into the same ArrayMeta the v2 code uses plus what
// only v3 has (chunk key encoding, the codec chain, sharding), and written.
//
// What the host sees of a sharded array is its INNER chunk grid: ArrayMeta's
// `chunks` are the inner chunks, V3Layout::shard the shard shape.
#pragma once

#include "metadata.hpp"

#include <string>
#include <vector>

namespace zarr {

// One bytes -> bytes codec of a chain: a host codec plugin, found by its
// name (codec_names.hpp), or crc32c, which the plugin does itself (a
// checksum appended).
struct BytesCodec {
  json entry;  // as zarr.json has it: {"name", "configuration"}
  json host;   // the host codec's config; null for crc32c or an unknown name
  bool crc32c = false;
};

// How the chunks of a v3 array are keyed and encoded.
struct V3Layout {
  // Chunk key encoding: "default" ("c/0/1", 0-d "c") or "v2" ("0.1", 0-d "0").
  bool default_keys = true;
  char separator = '/';
  // The chunk's codecs after `bytes` (and, when sharded, the inner chunks').
  std::vector<BytesCodec> codecs;
  // The array -> array codecs before "bytes" (sharded: the inner chunks'),
  // as zarr.json has them, but a first "transpose" in C or F order, which
  // is ArrayMeta::fortran (filter_chain.hpp); null: none.
  json filters;
  // sharding_indexed: the shard shape (elements) and its index.
  bool sharded = false;
  std::vector<uint64_t> shard;      // chunk_grid's chunk_shape
  std::vector<uint64_t> per_shard;  // inner chunks per shard along each dimension
  uint64_t chunks_per_shard = 1;    // their product
  bool index_at_end = true;
  bool index_big_endian = false;
  bool index_crc32c = false;
  uint64_t index_bytes() const { return 16 * chunks_per_shard + (index_crc32c ? 4 : 0); }
};

// The node type a zarr.json names: "group" or "array"; CORRUPT naming `file`
// for anything else or no v3 document.
std::string v3_node_type(const json& doc, const std::string& file);

// Parses an array's zarr.json document; `file` names it in errors.
// Malformed metadata is CORRUPT; valid metadata this plugin cannot read (a
// data type, chunk grid, nested sharding) UNSUPPORTED naming it. The bytes
// -> bytes codecs are resolved by resolve_codecs (codec_names.hpp).
ArrayMeta parse_array_v3(const json& doc, const std::string& file);

// The zarr.json of an array (attributes and dimension names given).
json array_json_v3(const ArrayMeta& meta, const json& attributes, const json& dimension_names);
// The zarr.json of an array whose codecs and data type are given (numeric
// arrays: array_json_v3; string arrays: strings.cpp), on `grid` chunks.
json array_document_v3(const ArrayMeta& a, const std::string& data_type,
                       const std::vector<uint64_t>& grid, const json& codecs,
                       const json& attributes, const json& dimension_names);

// A group's zarr.json.
json group_json_v3(const json& attributes);

// The zarr.json "codecs" entry of one bytes -> bytes codec.
json v3_codec_json(const BytesCodec& c);

// The CRC-32C (Castagnoli) of bytes, as the crc32c codec appends it.
uint32_t crc32c(const void* data, size_t size);

}  // namespace zarr
