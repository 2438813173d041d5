#include "compressors.hpp"

#include <stowage/plugin.hpp>

#include <algorithm>

namespace zarr {

using stowage::sdk::corrupt;
using stowage::sdk::unsupported;

namespace {

// compressor[key] as an integer, numcodecs' default when absent or null.
int64_t integer(const json& compressor, const char* key, int64_t fallback,
                const std::string& file) {
  if (!compressor.contains(key) || compressor[key].is_null()) return fallback;
  const json& v = compressor[key];
  if (!v.is_number_integer())
    corrupt(file + ": compressor " + compressor["id"].dump() + ": \"" + key +
            "\" must be an integer, got " + v.dump());
  return v.get<int64_t>();
}

std::string text(const json& compressor, const char* key, const char* fallback,
                 const std::string& file) {
  if (!compressor.contains(key) || compressor[key].is_null()) return fallback;
  const json& v = compressor[key];
  if (!v.is_string())
    corrupt(file + ": compressor " + compressor["id"].dump() + ": \"" + key +
            "\" must be a string, got " + v.dump());
  return v.get<std::string>();
}

// liblzma's FORMAT_AUTO, FORMAT_XZ (numcodecs' default); FORMAT_ALONE and
// FORMAT_RAW are not .xz streams.
constexpr int64_t kLzmaFormatAuto = 0, kLzmaFormatXz = 1;

json lzma_codec(const json& c, const std::string& file) {
  const int64_t format = integer(c, "format", kLzmaFormatXz, file);
  if (format != kLzmaFormatXz && format != kLzmaFormatAuto)
    unsupported(file + ": compressor \"lzma\" with \"format\" " + std::to_string(format) +
                " (only 1, .xz streams, is read)");
  if (c.contains("filters") && !c["filters"].is_null())
    unsupported(file + ": compressor \"lzma\" with a custom \"filters\" chain is not supported");
  // Decoding reads the check and the preset from the stream; the preset
  // matters only when this array is written.
  return json{{"type", "xz"}, {"preset", integer(c, "preset", 6, file)}};
}

}  // namespace

json codec_for_compressor(const json& c, size_t item_size, const std::string& file) {
  if (c.is_null()) return nullptr;
  if (!c.is_object() || !c.contains("id") || !c["id"].is_string())
    corrupt(file + ": \"compressor\" must be null or an object with a string \"id\", got " +
            c.dump());
  const std::string id = c["id"].get<std::string>();
  if (id == "blosc")
    return json{{"type", "blosc"},
                {"cname", text(c, "cname", "lz4", file)},
                {"clevel", integer(c, "clevel", 5, file)},
                {"shuffle", integer(c, "shuffle", 1, file)},
                {"blocksize", integer(c, "blocksize", 0, file)},
                {"typesize", item_size}};
  if (id == "zlib")
    return json{{"type", "gzip"}, {"level", integer(c, "level", 1, file)}, {"useZlib", true}};
  if (id == "gzip")
    return json{{"type", "gzip"}, {"level", integer(c, "level", 1, file)}, {"useZlib", false}};
  if (id == "bz2") return json{{"type", "bzip2"}, {"blockSize", integer(c, "level", 1, file)}};
  if (id == "lzma") return lzma_codec(c, file);
  // (A "checksum" of newer numcodecs is in the frame itself, which the zstd plugin checks.)
  if (id == "zstd") return json{{"type", "zstd"}, {"level", integer(c, "level", 1, file)}};
  if (id == "lz4") {
    // LZ4 treats an acceleration below 1 as 1.
    const int64_t acceleration = std::max<int64_t>(1, integer(c, "acceleration", 1, file));
    return json{{"type", "lz4"}, {"framing", "numcodecs"}, {"acceleration", acceleration}};
  }
  unsupported(file + ": compressor \"" + id +
              "\" is not supported (blosc, zlib, gzip, bz2, lzma, zstd and lz4 are)");
}

json prepare_codec(const json& codec, size_t item_size) {
  if (codec.is_null()) return nullptr;
  if (!codec.is_object() || !codec.contains("type") || !codec["type"].is_string())
    stowage::sdk::invalid(
        "zarr create: \"codec\" must be null or an object with a string \"type\", got " +
        codec.dump());
  json c = codec;
  const std::string type = c["type"].get<std::string>();
  if (type == "raw") return nullptr;
  if (type == "zlib") {
    c["type"] = "gzip";
    c["useZlib"] = true;
  } else if (type == "lz4") {
    if (c.contains("framing") && c["framing"] != "numcodecs" && c["framing"] != "lz4block")
      unsupported(
          "zarr: lz4 with \"framing\" " + c["framing"].dump() +
          " has no numcodecs counterpart (Zarr v2 stores numcodecs' size-prefixed LZ4 block)");
    c["framing"] = "numcodecs";
    c.erase("blockSize");  // N5's LZ4Block size: no meaning here
  } else if (type == "blosc") {
    c["typesize"] = item_size;  // lets shuffle work; numcodecs passes the item size too
    c.erase("nthreads");
  }
  return c;
}

json compressor_for_codec(const json& codec) {
  if (codec.is_null()) return nullptr;
  const std::string type = codec.value("type", "raw");
  const auto get = [&](const char* key) {
    if (!codec.contains(key))
      unsupported("zarr: codec " + codec.dump() + " has no \"" + key + "\"");
    return codec[key];
  };
  if (type == "raw") return nullptr;
  if (type == "blosc")
    return json{{"blocksize", get("blocksize")},
                {"clevel", get("clevel")},
                {"cname", get("cname")},
                {"id", "blosc"},
                {"shuffle", get("shuffle")}};
  if (type == "gzip")
    return json{{"id", codec.value("useZlib", false) ? "zlib" : "gzip"}, {"level", get("level")}};
  if (type == "bzip2") return json{{"id", "bz2"}, {"level", get("blockSize")}};
  if (type == "xz")
    return json{{"check", -1},
                {"filters", nullptr},
                {"format", kLzmaFormatXz},
                {"id", "lzma"},
                {"preset", get("preset")}};
  if (type == "zstd") return json{{"id", "zstd"}, {"level", get("level")}};
  if (type == "lz4") {
    if (codec.value("framing", "") != "numcodecs")
      unsupported("zarr: lz4 codec " + codec.dump() + " is not numcodecs' framing");
    return json{{"acceleration", get("acceleration")}, {"id", "lz4"}};
  }
  unsupported(
      "zarr: codec \"" + type +
      "\" has no numcodecs compressor (Zarr v2 takes blosc, gzip/zlib, bzip2, xz, zstd and lz4)");
}

}  // namespace zarr
