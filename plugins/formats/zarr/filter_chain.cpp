#include "filter_chain.hpp"

#include "codec_names.hpp"

#include <stowage/array_codec.hpp>

#include <algorithm>

namespace zarr {

namespace sdk = stowage::sdk;

namespace {

// The spec of a chunk as an array -> array codec takes it.
json chunk_spec(const std::string& typestr, const std::vector<uint64_t>& shape) {
  return json{{"dtype", typestr}, {"shape", shape}};
}

}  // namespace

std::shared_ptr<const FilterChain> make_filters(const sdk::Host& host, const char* dialect,
                                                const json& entries, const DataType& type,
                                                const std::vector<uint64_t>& chunk_shape,
                                                const std::string& file, std::string& error,
                                                bool creating, json* unknown) {
  if (entries.is_null() || (entries.is_array() && entries.empty())) return nullptr;
  if (!entries.is_array())
    sdk::corrupt(file + ": \"filters\" must be null or a list, got " + entries.dump());
  auto chain = std::make_shared<FilterChain>();
  sdk::ElementType element;
  element.kind = type.kind;
  element.size = uint32_t(type.size);
  element.big_endian = type.big_endian;
  json spec = chunk_spec(element.typestr(), chunk_shape);
  uint64_t bytes = type.size;
  for (uint64_t e : chunk_shape) bytes *= e;
  const uint64_t chunk_bytes = bytes;
  chain->bytes.push_back(bytes);
  for (const json& entry : entries) {
    const json config = resolve_codec(host, dialect, entry, type.size, file, error);
    if (config.is_null()) {  // `error` says why
      if (unknown) *unknown = entry;
      return nullptr;
    }
    try {
      chain->codecs.push_back(std::make_unique<sdk::HostCodec>(host, config.dump(), spec.dump()));
    } catch (const sdk::Error& e) {
      const bool bad = e.code() == STOWAGE_INVALID_ARGUMENT || e.code() == STOWAGE_CORRUPT;
      sdk::fail(bad ? (creating ? STOWAGE_INVALID_ARGUMENT : STOWAGE_CORRUPT) : e.code(),
                file + ": filter " + entry.dump() + ": " + e.what());
    }
    spec = json::parse(chain->codecs.back()->encoded_chunk());
    bytes = sdk::ChunkSpec::parse(spec.dump()).bytes();
    // At most one widening from 1-byte to 8-byte elements: a chain that
    // grows a chunk more would make a small array cost gigabytes to read.
    if (bytes > 8 * chunk_bytes || bytes > kMaxChunkBytes)
      sdk::unsupported(file + ": filter " + entry.dump() + " makes a chunk of " +
                       std::to_string(chunk_bytes) + " bytes " + std::to_string(bytes) +
                       " bytes long (at most 8 times as long and 2 GiB)");
    chain->bytes.push_back(bytes);
  }
  return chain;
}

void decode_filters(const FilterChain& chain, const uint8_t* in, uint8_t* out,
                    sdk::BufferPool& scratch, const std::string& key) {
  std::vector<sdk::BufferPool::Lease> steps;  // each alive until the next has used it
  const uint8_t* from = in;
  for (size_t i = chain.codecs.size(); i-- > 0;) {
    uint8_t* to = out;
    if (i > 0) to = steps.emplace_back(scratch.take(chain.bytes[i])).data();
    try {
      const size_t got = chain.codecs[i]->decode(from, chain.bytes[i + 1], to, chain.bytes[i]);
      if (got != chain.bytes[i])
        sdk::corrupt("a filter decodes to " + std::to_string(got) + " bytes, not " +
                     std::to_string(chain.bytes[i]));
    } catch (const sdk::Error& e) {
      sdk::fail(e.code(), key + ": " + e.what());
    }
    from = to;
  }
}

sdk::BufferPool::Lease encode_filters(const FilterChain& chain, const uint8_t* in,
                                      sdk::BufferPool& scratch, const std::string& key) {
  std::vector<sdk::BufferPool::Lease> steps;
  const uint8_t* from = in;
  for (size_t i = 0; i < chain.codecs.size(); ++i) {
    uint8_t* to = steps.emplace_back(scratch.take(chain.bytes[i + 1])).data();
    try {
      chain.codecs[i]->encode(from, chain.bytes[i], to, chain.bytes[i + 1]);
    } catch (const sdk::Error& e) {
      sdk::fail(e.code(), key + ": " + e.what());
    }
    from = to;
  }
  return std::move(steps.back());
}

}  // namespace zarr
