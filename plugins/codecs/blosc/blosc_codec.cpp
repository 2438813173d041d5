// Codec "blosc": N5's blosc compression (n5-blosc), one c-blosc 1.x frame per
// chunk, through Debian's libblosc.
//
// Config (N5's "compression" object), n5-blosc's keys and defaults:
//   {"type": "blosc", "cname": "blosclz", "clevel": 6, "shuffle": 0,
//    "blocksize": 0, "nthreads": 1, "typesize": 1}
// shuffle: 0 none, 1 byte, 2 bit, -1 auto (bit shuffle for typesize 1, byte
// shuffle otherwise, as numcodecs does). blocksize 0 lets blosc choose.
// n5-blosc always compresses with typesize 1; decoding reads the typesize
// (and everything else) from the frame's header.
//
// Only the _ctx functions are used: they neither touch blosc's global state
// nor need blosc_init(), so one instance serves many threads at once.
#include <blosc.h>

// The library version in build_info (must precede plugin.hpp).
#define STOWAGE_PLUGIN_BUILD_EXTRA ", c-blosc " BLOSC_VERSION_STRING " (headers)"

#include <stowage/codec_config.hpp>
#include <stowage/codec_names.hpp>
#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace {

using stowage::sdk::corrupt;
using stowage::sdk::load_le;

// The 16-byte header every c-blosc 1.x frame starts with.
struct FrameHeader {
  uint8_t version, version_lz, flags, typesize;
  uint32_t nbytes, blocksize, cbytes;
};

FrameHeader parse_header(const uint8_t* in, size_t n) {
  if (n < BLOSC_MIN_HEADER_LENGTH)
    corrupt("blosc: truncated frame: " + std::to_string(n) + " bytes, the header alone is " +
            std::to_string(BLOSC_MIN_HEADER_LENGTH));
  return {in[0],
          in[1],
          in[2],
          in[3],
          load_le<uint32_t>(in + 4),
          load_le<uint32_t>(in + 8),
          load_le<uint32_t>(in + 12)};
}

// Checks what the header declares against the buffer and the caller's
// capacity before libblosc sees the bytes.
void check_header(const FrameHeader& h, size_t n, size_t capacity) {
  if (h.version == 0 || h.version > BLOSC_VERSION_FORMAT)
    stowage::sdk::unsupported("blosc: frame format version " + std::to_string(h.version) +
                              " (this c-blosc " BLOSC_VERSION_STRING " reads 1.." +
                              std::to_string(BLOSC_VERSION_FORMAT) + ")");
  if (h.cbytes < BLOSC_MIN_HEADER_LENGTH || h.cbytes > n)
    corrupt("blosc: the header declares " + std::to_string(h.cbytes) +
            " compressed bytes but the payload has " + std::to_string(n) +
            (h.cbytes > n ? " (truncated)" : ""));
  if (h.nbytes > capacity)
    corrupt("blosc: the frame decodes to " + std::to_string(h.nbytes) +
            " bytes, more than the expected " + std::to_string(capacity));
  if ((h.flags & BLOSC_MEMCPYED) && h.cbytes != uint64_t(h.nbytes) + BLOSC_MIN_HEADER_LENGTH)
    corrupt("blosc: a stored (memcpyed) frame of " + std::to_string(h.nbytes) + " bytes has " +
            std::to_string(h.cbytes) + " compressed bytes instead of " +
            std::to_string(uint64_t(h.nbytes) + BLOSC_MIN_HEADER_LENGTH));
  if (h.nbytes > 0 && h.blocksize == 0) corrupt("blosc: the header declares a block size of 0");
  if (h.typesize == 0) corrupt("blosc: the header declares a type size of 0");
}

class BloscCodec {
 public:
  static const stowage::sdk::Params& params() {
    using stowage::sdk::Param;
    static const stowage::sdk::Params p = {
        Param::choice("cname", "blosclz", {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}),
        Param::integer("clevel", 6, 0, 9),
        Param::integer("shuffle", 0, -1, 2),
        Param::integer("blocksize", 0, 0, INT32_MAX),
        Param::integer("nthreads", 1, 1, 256),
        Param::integer("typesize", 1, 1, BLOSC_MAX_TYPESIZE)};
    return p;
  }

  explicit BloscCodec(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "blosc", params());
    cname_ = cfg.choice("cname");
    if (blosc_compname_to_compcode(cname_.c_str()) < 0)
      stowage::sdk::unsupported(
          "blosc: \"cname\" \"" + cname_ +
          "\" is not built into this c-blosc; it has: " + blosc_list_compressors());
    clevel_ = static_cast<int>(cfg.integer("clevel"));
    shuffle_ = static_cast<int>(cfg.integer("shuffle"));
    blocksize_ = static_cast<size_t>(cfg.integer("blocksize"));
    nthreads_ = static_cast<int>(cfg.integer("nthreads"));
    typesize_ = static_cast<size_t>(cfg.integer("typesize"));
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  // Zarr's names: numcodecs' blosc (shuffle 0..2, -1 auto) and v3's, whose
  // shuffle is named. numcodecs passes the item size as the typesize; v3
  // records it (the array's item size when absent).
  static const char* names() { return R"({"numcodecs":["blosc"],"zarr3":["blosc"]})"; }
  static nlohmann::json import_config(std::string_view dialect, std::string_view name,
                                      std::string_view entry, uint64_t item_size) {
    const stowage::sdk::CodecEntry e(dialect, name, entry);
    int64_t shuffle = 0;
    if (e.numcodecs()) {
      shuffle = e.integer("shuffle", 1);
    } else {
      const std::string named = e.text("shuffle", "noshuffle");
      shuffle = shuffle_code(named);
      if (shuffle < 0)
        stowage::sdk::corrupt(e.what() + ": \"shuffle\" \"" + named +
                              "\" is not noshuffle, shuffle or bitshuffle");
    }
    const int64_t typesize =
        e.numcodecs() ? int64_t(item_size) : e.integer("typesize", int64_t(item_size));
    return {{"type", "blosc"},
            {"cname", e.text("cname", "lz4")},
            {"clevel", e.integer("clevel", 5)},
            {"shuffle", shuffle},
            {"blocksize", e.integer("blocksize", 0)},
            {"typesize", typesize}};
  }
  static nlohmann::json export_config(std::string_view config, std::string_view dialect,
                                      uint64_t item_size) {
    using stowage::sdk::config_value;
    const nlohmann::json c = stowage::sdk::config_keys(config);
    nlohmann::json keys = {{"blocksize", config_value(c, "blocksize")},
                           {"clevel", config_value(c, "clevel")},
                           {"cname", config_value(c, "cname")},
                           {"shuffle", config_value(c, "shuffle")}};
    if (dialect == "numcodecs") return stowage::sdk::codec_entry(dialect, "blosc", keys);
    const int64_t typesize = item_size ? int64_t(item_size) : c.value("typesize", int64_t{1});
    int shuffle = keys["shuffle"].get<int>();
    if (shuffle < 0) shuffle = typesize == 1 ? 2 : 1;  // numcodecs' auto, as decoding does
    static const char* const kShuffle[] = {"noshuffle", "shuffle", "bitshuffle"};
    keys["shuffle"] = kShuffle[std::clamp(shuffle, 0, 2)];
    keys["typesize"] = typesize;
    return stowage::sdk::codec_entry(dialect, "blosc", keys);
  }
  // v3's shuffle names as numcodecs' numbers; -1 for another name.
  static int shuffle_code(const std::string& name) {
    return name == "noshuffle" ? 0 : name == "shuffle" ? 1 : name == "bitshuffle" ? 2 : -1;
  }

  uint64_t bound(uint64_t n) const { return n + BLOSC_MAX_OVERHEAD; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    if (n > static_cast<size_t>(BLOSC_MAX_BUFFERSIZE))
      stowage::sdk::invalid("blosc: a frame holds at most " + std::to_string(BLOSC_MAX_BUFFERSIZE) +
                            " bytes, got " + std::to_string(n));
    int r = blosc_compress_ctx(clevel_, effective_shuffle(), typesize_, n, in, out, capacity,
                               cname_.c_str(), blocksize_, nthreads_);
    if (r == 0)
      stowage::sdk::invalid("blosc: the output buffer (" + std::to_string(capacity) +
                            " bytes) is smaller than bound() for this input");
    if (r < 0)
      stowage::sdk::fail(STOWAGE_INTERNAL,
                         "blosc: compression failed (c-blosc error " + std::to_string(r) + ")");
    return static_cast<size_t>(r);
  }

  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    const auto* src = static_cast<const uint8_t*>(in);
    FrameHeader h = parse_header(src, n);
    check_header(h, n, capacity);
    size_t declared = 0;
    if (blosc_cbuffer_validate(src, h.cbytes, &declared) != 0)
      corrupt("blosc: c-blosc rejects the frame header as inconsistent");
    if (h.nbytes == 0) return 0;
    int r = blosc_decompress_ctx(src, out, capacity, nthreads_);
    if (r <= 0)
      corrupt("blosc: corrupt frame (c-blosc error " + std::to_string(r) + " decoding " +
              std::to_string(h.cbytes) + " bytes into " + std::to_string(h.nbytes) + ")");
    return static_cast<size_t>(r);
  }

 private:
  int effective_shuffle() const {
    if (shuffle_ != -1) return shuffle_;
    return typesize_ == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
  }

  std::string cname_;
  int clevel_ = 6, shuffle_ = 0, nthreads_ = 1;
  size_t blocksize_ = 0, typesize_ = 1;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(BloscCodec, "blosc", "1.0.0",
                            "N5 blosc (n5-blosc): one c-blosc 1.x frame",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
