// Zarr string arrays as stowage's strings node kind: v3's data type
// "string" with the array -> bytes codec "vlen-utf8", and v2's dtype "|O"
// with the filter {"id": "vlen-utf8"} (numcodecs' VLenUTF8), as
// zarr-python 2 and 3, zarrs and zarrita write them. A chunk's strings are
// a little-endian u32 count, then per string a u32 byte length and its
// UTF-8 bytes, in C order; compressors (v2) and bytes -> bytes codecs (v3)
// follow as for numeric arrays.
//
// The metadata is read by the numeric parsers on a copy of the document
// whose strings are replaced by bytes (uint8, the `bytes` codec): shapes,
// chunk grids, chunk keys, compressors and sharding are checked once, there.
#pragma once

#include "metadata.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace zarr {

// What a strings array's ArrayMeta holds: `strings` set, this type, and
// the fill value as a string in FillValue::for_host.
constexpr const char* kStringTypeName = "string";

// Whether a .zarray's dtype is numpy's object type "|O" (strings or other
// Python objects: parse_strings_v2 tells which).
bool is_object_dtype_v2(const json& meta);
// A "|O" array with the filter vlen-utf8; UNSUPPORTED naming `file` for
// another object codec (vlen-bytes, json, pickle...) or more filters.
ArrayMeta parse_strings_v2(const json& meta, const std::string& file);

// Whether a zarr.json's data_type holds variable-length values ("string",
// or the bytes types parse_strings_v3 refuses).
bool is_vlen_data_type_v3(const json& doc);
ArrayMeta parse_strings_v3(const json& doc, const std::string& file);

// A chunk's bytes (decoded by its compressors) into its `count` strings;
// a truncated payload, another count, trailing bytes or invalid UTF-8 are
// CORRUPT naming `key`.
std::vector<std::string> decode_vlen_utf8(const uint8_t* data, size_t size, uint64_t count,
                                          const std::string& key);
// The bytes numcodecs' VLenUTF8 writes for `values`.
std::vector<uint8_t> encode_vlen_utf8(const std::vector<std::string_view>& values);

// Whether `s` is well-formed UTF-8 (no overlongs, surrogates or values past
// U+10FFFF), as Python's strict decoder requires.
bool valid_utf8(std::string_view s);

// A strings array from a create() description ("kind": "strings"): shape,
// chunks (default about 64 Ki strings), "storage"'s "fill_value" (a string;
// default ""). The codec and chunk keys are the store's (strings_io.cpp).
// Bad values are INVALID_ARGUMENT; "shards" is UNSUPPORTED.
ArrayMeta strings_description_meta(const json& d, int version);

// The zarr.json of a v3 strings array.
json strings_array_json_v3(const ArrayMeta& meta, const json& attributes,
                           const json& dimension_names);

}  // namespace zarr
