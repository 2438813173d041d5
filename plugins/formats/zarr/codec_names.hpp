// Codecs by their Zarr names, asked of the host (stowage_host.codec_resolve
// and codec_export): the codec plugins declare which numcodecs ids and v3
// names they answer to, so this plugin keeps no table. A v2 "compressor" is
// resolved in the dialect "numcodecs", a v3 bytes -> bytes codec in "zarr3"
// (the host looks "numcodecs.<id>" up as numcodecs id <id>).
#pragma once

#include "metadata.hpp"

#include <stowage/plugin.hpp>

#include <string>

namespace zarr {

// The host codec config ("type", ...) of a codec entry as a file has it
// (null stays null), for elements of `item_size` bytes. A name no codec
// plugin answers to is not an error here: `error` gets the reason, naming
// `file`, and the array still lists and describes; reading it fails with
// that reason (unreadable()). A bad configuration of a known codec is the
// host's error, naming `file`.
json resolve_codec(const stowage::sdk::Host& host, const char* dialect, const json& entry,
                   size_t item_size, const std::string& file, std::string& error);

// The entry of `dialect` that writes what the host codec config `codec`
// writes (null for none or raw); errors name `dir`.
json export_codec(const stowage::sdk::Host& host, const json& codec, const char* dialect,
                  size_t item_size, const std::string& dir);

// Resolves the codecs of an array just parsed (parse_array, parse_array_v3):
// v2's compressor, v3's bytes -> bytes codecs; the first one's config is the
// array's "codec".
void resolve_codecs(const stowage::sdk::Host& host, ArrayMeta& a, const std::string& file);

// What describe() shows for an array whose codec no plugin answers to: the
// codec as written and why it cannot be read.
json unreadable_codec(const ArrayMeta& a);

// NOT_FOUND with the reason, when the array's codec is unknown.
void require_codec(const ArrayMeta& a);

}  // namespace zarr
