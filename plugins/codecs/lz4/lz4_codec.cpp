// Codec "lz4": N5's lz4 compression (lz4-java's LZ4Block stream) and, with
// "framing": "frame", the standard LZ4 frame format (datg files).
//
// Config (N5's "compression" object):
//   {"type": "lz4", "blockSize": 65536}                     default framing "lz4block"
//   {"type": "lz4", "framing": "frame", "level": 0, "blockSizeId": 7,
//    "contentChecksum": true, "blockChecksum": false, "contentSize": false}
//   {"type": "lz4", "framing": "numcodecs", "acceleration": 1}  numcodecs' LZ4 (Zarr v2)
// The canonical form of the default framing leaves "framing" out, so it is
// exactly what N5 Java writes into attributes.json.
//
// Decoding with the default framing also reads the other lz4 framings found
// in N5 containers; the sniffing order and why it is unambiguous are in
// README.md beside this file.
#include <lz4.h>
#include <xxhash.h>

// The library versions in build_info (must precede plugin.hpp).
#define STOWAGE_LZ4_STR2(x) #x
#define STOWAGE_LZ4_STR(x) STOWAGE_LZ4_STR2(x)
#define STOWAGE_PLUGIN_BUILD_EXTRA                                       \
  ", liblz4 " LZ4_VERSION_STRING                                         \
  ", libxxhash " STOWAGE_LZ4_STR(XXH_VERSION_MAJOR) "." STOWAGE_LZ4_STR( \
      XXH_VERSION_MINOR) "." STOWAGE_LZ4_STR(XXH_VERSION_RELEASE)

#include "lz4_block_stream.hpp"
#include "lz4_frame.hpp"

#include <stowage/codec_config.hpp>
#include <stowage/codec_names.hpp>
#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <climits>
#include <string>

namespace {

using namespace stowage_lz4;
using stowage::sdk::corrupt;

// numcodecs' LZ4 (zarr-python): uint32 LE decoded size, then one LZ4 block.
// Returns false when the bytes are not that framing for this capacity.
bool try_numcodecs_block(const uint8_t* in, size_t n, uint8_t* out, size_t capacity,
                         size_t* written) {
  if (n < 5) return false;
  uint32_t size = stowage::sdk::load_le<uint32_t>(in);
  if (size > capacity || size > uint32_t(INT32_MAX) || n - 4 > size_t(INT32_MAX)) return false;
  int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in + 4), reinterpret_cast<char*>(out),
                                static_cast<int>(n - 4), static_cast<int>(size));
  if (got != static_cast<int>(size)) return false;
  *written = size;
  return true;
}

// numcodecs' LZ4 written the way numcodecs writes it: the size, then
// LZ4_compress_fast at the given acceleration (the same call numcodecs makes).
size_t encode_numcodecs_block(const uint8_t* in, size_t n, uint8_t* out, size_t capacity,
                              int acceleration) {
  if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
    stowage::sdk::invalid("lz4: numcodecs' framing holds at most " +
                          std::to_string(LZ4_MAX_INPUT_SIZE) + " bytes, got " + std::to_string(n));
  if (capacity < 4)
    stowage::sdk::invalid("lz4: the output buffer is smaller than bound() for this input");
  stowage::sdk::store_le<uint32_t>(out, static_cast<uint32_t>(n));
  int limit = static_cast<int>(std::min<size_t>(capacity - 4, INT32_MAX));
  int r = LZ4_compress_fast(reinterpret_cast<const char*>(in), reinterpret_cast<char*>(out + 4),
                            static_cast<int>(n), limit, acceleration);
  if (r <= 0)
    stowage::sdk::invalid("lz4: the output buffer is smaller than bound() for this input");
  return 4 + static_cast<size_t>(r);
}

// numcodecs' framing only: anything else is corrupt.
size_t decode_numcodecs_block(const uint8_t* in, size_t n, uint8_t* out, size_t capacity) {
  if (n < 4)
    corrupt("lz4: " + std::to_string(n) + " bytes are too few for numcodecs' 4-byte size prefix");
  const uint32_t size = stowage::sdk::load_le<uint32_t>(in);
  if (size > capacity)
    corrupt("lz4: the size prefix says " + std::to_string(size) +
            " bytes, more than the expected " + std::to_string(capacity));
  size_t written = 0;
  if (size == 0) return 0;
  if (!try_numcodecs_block(in, n, out, capacity, &written))
    corrupt("lz4: the LZ4 block after numcodecs' size prefix does not decode to its " +
            std::to_string(size) + " bytes");
  return written;
}

// z5: one bare LZ4 block that must use every input byte.
size_t decode_bare_block(const uint8_t* in, size_t n, uint8_t* out, size_t capacity) {
  if (n > static_cast<size_t>(INT32_MAX))
    corrupt("lz4: a bare LZ4 block cannot be larger than 2 GiB (" + std::to_string(n) + " bytes)");
  int limit = static_cast<int>(std::min<size_t>(capacity, INT32_MAX));
  int got = LZ4_decompress_safe(reinterpret_cast<const char*>(in), reinterpret_cast<char*>(out),
                                static_cast<int>(n), limit);
  if (got < 0)
    corrupt("lz4: the " + std::to_string(n) +
            " bytes are in no known lz4 framing (not an LZ4Block stream, not an LZ4 frame, not a "
            "size-prefixed block for " +
            std::to_string(capacity) + " bytes, not a bare LZ4 block that decodes within them)");
  return static_cast<size_t>(got);
}

// The default framing's decoder: LZ4Block, then frame, then numcodecs, then bare.
size_t decode_any_framing(FrameDecoder& decoder, const uint8_t* in, size_t n, uint8_t* out,
                          size_t capacity) {
  if (n == 0) return 0;  // an LZ4Block stream without blocks
  if (is_block_stream(in, n)) return block_stream_decode(in, n, out, capacity);
  if (is_frame(in, n)) return frame_decode(decoder, in, n, out, capacity);
  size_t written = 0;
  if (try_numcodecs_block(in, n, out, capacity, &written)) return written;
  return decode_bare_block(in, n, out, capacity);
}

class Lz4Codec {
 public:
  // The scratch state of one thread: a frame decompression context.
  using Context = FrameDecoder;

  // Both framings' parameters; each framing reads its own.
  static const stowage::sdk::Params& params() {
    using stowage::sdk::Param;
    static const stowage::sdk::Params p = {
        Param::integer("blockSize", 65536, 0, kMaxBlockSize),
        Param::choice("framing", "lz4block", {"lz4block", "frame", "numcodecs"}),
        Param::integer("level", 0, 0, 12),
        Param::integer("blockSizeId", 7, 4, 7),
        Param::boolean("contentChecksum", true),
        Param::boolean("blockChecksum", false),
        Param::boolean("contentSize", false),
        Param::integer("acceleration", 1, 1, 65537)};  // LZ4_ACCELERATION_MAX
    return p;
  }

  explicit Lz4Codec(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "lz4", params());
    const std::string framing = cfg.choice("framing");
    frame_ = framing == "frame";
    numcodecs_ = framing == "numcodecs";
    if (frame_)
      read_frame_options(cfg);
    else if (numcodecs_)
      read_numcodecs_options(cfg);
    else
      read_block_options(cfg);
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  // numcodecs' lz4: a 4-byte little-endian size and one LZ4 block, this
  // codec's "numcodecs" framing. A config of N5's framing (lz4block, the
  // default) is written in numcodecs' (its blockSize has no meaning there);
  // an LZ4 frame has no numcodecs counterpart.
  static const char* names() { return R"({"numcodecs":["lz4"]})"; }
  static nlohmann::json import_config(std::string_view dialect, std::string_view name,
                                      std::string_view entry, uint64_t) {
    const stowage::sdk::CodecEntry e(dialect, name, entry);
    // LZ4 treats an acceleration below 1 as 1.
    const int64_t acceleration = std::max<int64_t>(1, e.integer("acceleration", 1));
    return {{"type", "lz4"}, {"framing", "numcodecs"}, {"acceleration", acceleration}};
  }
  static nlohmann::json export_config(std::string_view config, std::string_view dialect, uint64_t) {
    const nlohmann::json c = stowage::sdk::config_keys(config);
    const nlohmann::json framing = c.value("framing", nlohmann::json("lz4block"));
    if (framing != "numcodecs" && framing != "lz4block")
      stowage::sdk::unsupported("lz4 with \"framing\" " + framing.dump() +
                                " has no numcodecs counterpart (Zarr stores numcodecs' "
                                "size-prefixed LZ4 block)");
    // The canonical config of N5's framing has no acceleration: LZ4's default, 1.
    return stowage::sdk::codec_entry(dialect, "lz4",
                                     {{"acceleration", c.value("acceleration", int64_t{1})}});
  }

  uint64_t bound(uint64_t n) const {
    if (numcodecs_)
      return n > uint64_t(LZ4_MAX_INPUT_SIZE) ? UINT64_MAX
                                              : 4 + uint64_t(LZ4_compressBound(int(n)));
    return frame_ ? frame_bound(n, frame_options_)
                  : block_stream_bound(n, std::max<uint32_t>(block_size_, kMinBlockSize));
  }

  size_t encode(Context&, const void* in, size_t n, void* out, size_t capacity) const {
    const auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (frame_) return frame_encode(src, n, dst, capacity, frame_options_);
    if (numcodecs_) return encode_numcodecs_block(src, n, dst, capacity, acceleration_);
    if (n > static_cast<size_t>(INT32_MAX))
      stowage::sdk::invalid("lz4: LZ4Block streams hold at most 2 GiB per chunk, got " +
                            std::to_string(n) + " bytes");
    if (block_size_ < kMinBlockSize)
      stowage::sdk::invalid("lz4: \"blockSize\" is " + std::to_string(block_size_) +
                            ", allowed range 64..33554432 for writing (a blockSize below 64 is "
                            "z5's lz4 level: such datasets are read, not written)");
    return block_stream_encode(src, n, dst, capacity, block_size_);
  }

  size_t decode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    const auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (numcodecs_) return decode_numcodecs_block(src, n, dst, capacity);
    return frame_ ? frame_decode(cx, src, n, dst, capacity)
                  : decode_any_framing(cx, src, n, dst, capacity);
  }

 private:
  // lz4-java checks blockSize (64..2^25) only when writing, and N5 Java reads
  // any value. z5 stores its lz4 *level* under "blockSize"; accepting 0..63
  // here is what lets its containers be read. encode() refuses them.
  void read_block_options(stowage::sdk::CodecConfig& cfg) {
    block_size_ = static_cast<uint32_t>(cfg.integer("blockSize"));
    cfg.drop("framing");  // the N5 default: keep attributes.json as N5 Java writes it
  }

  void read_frame_options(stowage::sdk::CodecConfig& cfg) {
    if (cfg.has("blockSize"))
      stowage::sdk::invalid(
          "lz4: \"blockSize\" belongs to the lz4block framing; with \"framing\": \"frame\" use "
          "\"blockSizeId\" (4..7)");
    frame_options_.content_checksum = cfg.boolean("contentChecksum");
    frame_options_.block_checksum = cfg.boolean("blockChecksum");
    frame_options_.block_size_id = static_cast<int>(cfg.integer("blockSizeId"));
    frame_options_.content_size = cfg.boolean("contentSize");
    frame_options_.level = static_cast<int>(cfg.integer("level"));
  }

  // numcodecs' LZ4 (Zarr v2): its one parameter, LZ4_compress_fast's.
  void read_numcodecs_options(stowage::sdk::CodecConfig& cfg) {
    if (cfg.has("blockSize"))
      stowage::sdk::invalid(
          "lz4: \"blockSize\" belongs to the lz4block framing; numcodecs' has only \"acceleration\"");
    acceleration_ = static_cast<int>(cfg.integer("acceleration"));
  }

  bool frame_ = false, numcodecs_ = false;
  int acceleration_ = 1;
  uint32_t block_size_ = 65536;
  FrameOptions frame_options_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(
    Lz4Codec, "lz4", "1.0.0",
    "N5 lz4 (lz4-java LZ4Block stream) and the LZ4 frame format; reads numcodecs, z5 and rust-n5 lz4",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
