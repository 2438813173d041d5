// Reading DataAxesFormats 0.3.0 "packed" properties (packed_format
// "indexed+zipped"): <name>.zip or <name>.<component>.zip is a Zarr v3 shard
// that is also a ZIP archive. At offset 0 there is one (offset u64, nbytes u64)
// pair per chunk, chunk grid walked in Julia column-major order, then a
// crc32c. Each chunk payload is a whole compressed stream that decodes to the
// full (zero- or ""-padded) chunk, itself column-major.
//
// Payloads are decoded through the host's codecs (gzip, zstd, blosc), so the
// plugin links no compression library. Bitshuffle-filtered zstd is not
// supported (UNSUPPORTED, naming the file).
#pragma once

#include "daf_json.hpp"

#include <stowage/plugin.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace daf {

// The decoded elements (element_size bytes each) of an array of `shape`
// (Julia dims, e.g. {rows, cols} or {n}), column-major, padding cropped.
// `shard` is the whole file (read by the caller through the storage layer),
// `zip_path` its name for errors; its codecs come from `host`.
std::vector<unsigned char> read_packed_numeric(const stowage::sdk::Host& host,
                                               const std::string& zip_path, std::string_view shard,
                                               const Packing& packing,
                                               const std::vector<uint64_t>& shape,
                                               size_t element_size);

// The decoded strings (vlen-utf8 chunks: u32 count, then u32 length + bytes
// per value) of an array of `shape`, column-major, padding cropped.
std::vector<std::string> read_packed_strings(const stowage::sdk::Host& host,
                                             const std::string& zip_path, std::string_view shard,
                                             const Packing& packing,
                                             const std::vector<uint64_t>& shape);

}  // namespace daf
