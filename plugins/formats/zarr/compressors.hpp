// numcodecs' compressors (the "compressor" of a .zarray) and the host's
// codec plugins, both ways. Each codec plugin's parameters are in
// plugins/codecs/<id>/; numcodecs' are its classes' __init__ arguments.
//
//   numcodecs                                      host codec
//   {"id":"blosc","cname","clevel","shuffle",      {"type":"blosc", same keys, "typesize": item
//   size}
//    "blocksize"}
//   {"id":"zlib","level"}                          {"type":"gzip","level","useZlib":true}
//   {"id":"gzip","level"}                          {"type":"gzip","level"}
//   {"id":"bz2","level"}                           {"type":"bzip2","blockSize": level}
//   {"id":"lzma","format":1,"check","preset",      {"type":"xz","preset"}  (.xz streams; other
//    "filters":null}                                formats and filter chains are refused)
//   {"id":"zstd","level"}                          {"type":"zstd","level"}
//   {"id":"lz4","acceleration"} {"type":"lz4","framing":"numcodecs","acceleration"}
//
// numcodecs' LZ4 is a 4-byte little-endian size and one LZ4 block, not
// N5's LZ4Block stream: the lz4 plugin's "numcodecs" framing.
#pragma once

#include "metadata.hpp"

#include <string>

namespace zarr {

// The host codec config of a .zarray's "compressor" (null for none), for
// elements of `item_size` bytes; an unknown or unusable compressor is
// UNSUPPORTED naming `file`. No codec plugin is loaded here.
json codec_for_compressor(const json& compressor, size_t item_size, const std::string& file);

// The numcodecs compressor that writes what the host codec `codec`
// (canonical, as the codec plugin gives it) writes; UNSUPPORTED for a codec
// numcodecs has no counterpart of. `codec` null (or raw) is no compressor.
json compressor_for_codec(const json& codec);

// A codec as create() is given it, made ready for the codec plugin: an
// alias resolved ("zlib"), lz4 set to numcodecs' framing, blosc told the
// item size. Null (or raw) stays null.
json prepare_codec(const json& codec, size_t item_size);

}  // namespace zarr
