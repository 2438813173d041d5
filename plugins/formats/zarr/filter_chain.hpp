// A chunk's array -> array codecs ("filters"): a .zarray's "filters" (each
// a numcodecs filter, dialect "numcodecs") or a zarr.json's codecs before
// "bytes" (dialect "zarr3"). Each is a codec plugin of kind "codec.array"
// (delta, shuffle, astype, or a lab's own), found by its name through the
// host and made for the chunk it sees: the first for the array's chunk,
// each next one for what the one before encodes into. Writing runs them in
// list order before the bytes codecs; reading undoes them last first.
#pragma once

#include "metadata.hpp"

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zarr {

struct FilterChain {
  std::vector<std::unique_ptr<stowage::sdk::HostCodec>> codecs;  // in the order they encode
  // bytes[i]: a chunk's size entering codec i when encoding; bytes.back()
  // is what the bytes codecs see.
  std::vector<uint64_t> bytes;
  uint64_t encoded_bytes() const { return bytes.back(); }
};

// The chain of `entries` (null or a list) for chunks of `chunk_shape`
// elements of `type`; null for null or an empty list. A name no codec
// plugin answers to sets `error` (naming `file`, the array still lists and
// describes), the entry into `unknown` (may be null), and gives null. A
// configuration the codec refuses is CORRUPT naming `file` and the entry
// (INVALID_ARGUMENT when `creating`: the caller's).
std::shared_ptr<const FilterChain> make_filters(const stowage::sdk::Host& host, const char* dialect,
                                                const json& entries, const DataType& type,
                                                const std::vector<uint64_t>& chunk_shape,
                                                const std::string& file, std::string& error,
                                                bool creating, json* unknown);

// Undoes every codec, last first: `in` holds chain.encoded_bytes(), `out`
// receives chain.bytes[0]. Intermediate steps use `scratch`.
void decode_filters(const FilterChain& chain, const uint8_t* in, uint8_t* out,
                    stowage::sdk::BufferPool& scratch, const std::string& key);

// Applies every codec, first first, to a whole chunk `in` of
// chain.bytes[0]; the result (chain.encoded_bytes()) is in the lease.
stowage::sdk::BufferPool::Lease encode_filters(const FilterChain& chain, const uint8_t* in,
                                               stowage::sdk::BufferPool& scratch,
                                               const std::string& key);

}  // namespace zarr
