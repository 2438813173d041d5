// Codec "xz": N5's xz compression on Debian's liblzma.
//
//   {"type": "xz", "preset": 6}
//
// One .xz stream with a CRC64 check, written by liblzma's streaming encoder:
// the same bytes as N5 Java's xz-java (the N5 README example is reproduced
// byte for byte at preset 6). Decoding also reads concatenated streams and
// stream padding, as the xz tool does.
//
// Each call sets up its own lzma_stream, so the codec needs no Context.
// Keeping one stream per context is no faster (liblzma clears the match
// finder's tables on every re-init anyway; docs/performance.md) and would pin
// ~94 MiB per thread at preset 6.
#include <lzma.h>

#define STOWAGE_PLUGIN_BUILD_EXTRA ", liblzma " LZMA_VERSION_STRING
#include <stowage/codec_config.hpp>
#include <stowage/codec_names.hpp>
#include <stowage/plugin.hpp>

#include <cstring>
#include <new>
#include <string>

namespace {

using stowage::sdk::corrupt;

// A decoder may need at most this much memory (dictionary and state) beyond
// the decoded size: preset 9 needs 65 MiB, so only crafted headers hit it.
constexpr uint64_t kDecoderMemoryAllowance = uint64_t{256} << 20;

const uint8_t kXzMagic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};

// Owns an lzma_stream for the duration of one call.
struct Stream {
  lzma_stream s = LZMA_STREAM_INIT;
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() { lzma_end(&s); }
};

void check_setup(lzma_ret rc, const char* what) {
  if (rc == LZMA_MEM_ERROR) throw std::bad_alloc();
  if (rc != LZMA_OK)
    stowage::sdk::fail(STOWAGE_INTERNAL,
                       std::string("xz: ") + what + " failed with code " + std::to_string(rc));
}

class Xz {
 public:
  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p = {stowage::sdk::Param::integer("preset", 6, 0, 9)};
    return p;
  }

  explicit Xz(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "xz", params());
    preset_ = static_cast<uint32_t>(cfg.integer("preset"));
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  // numcodecs' lzma, read when it holds .xz streams: liblzma's FORMAT_XZ (1,
  // numcodecs' default) or FORMAT_AUTO (0); FORMAT_ALONE and FORMAT_RAW are
  // no .xz streams, and a custom filter chain is not what this codec writes.
  static const char* names() { return R"({"numcodecs":["lzma"]})"; }
  static nlohmann::json import_config(std::string_view dialect, std::string_view name,
                                      std::string_view entry, uint64_t) {
    const stowage::sdk::CodecEntry e(dialect, name, entry);
    constexpr int64_t kFormatAuto = 0, kFormatXz = 1;
    const int64_t format = e.integer("format", kFormatXz);
    if (format != kFormatXz && format != kFormatAuto)
      stowage::sdk::unsupported(e.what() + " with \"format\" " + std::to_string(format) +
                                " (only 1, .xz streams, is read)");
    if (e.has("filters"))
      stowage::sdk::unsupported(e.what() + " with a custom \"filters\" chain is not supported");
    // Decoding reads the check and the preset from the stream; the preset
    // matters only when the array is written.
    return {{"type", "xz"}, {"preset", e.integer("preset", 6)}};
  }
  static nlohmann::json export_config(std::string_view config, std::string_view dialect, uint64_t) {
    const nlohmann::json c = stowage::sdk::config_keys(config);
    return stowage::sdk::codec_entry(dialect, "lzma",
                                     {{"check", -1},
                                      {"filters", nullptr},
                                      {"format", 1},
                                      {"preset", stowage::sdk::config_value(c, "preset")}});
  }

  uint64_t bound(uint64_t n) const {
    size_t b = lzma_stream_buffer_bound(static_cast<size_t>(n));
    return b ? b : UINT64_MAX;
  }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    Stream encoder;
    lzma_stream& s = encoder.s;
    check_setup(lzma_easy_encoder(&s, preset_, LZMA_CHECK_CRC64), "lzma_easy_encoder");
    s.next_in = static_cast<const uint8_t*>(in);
    s.avail_in = n;
    s.next_out = static_cast<uint8_t*>(out);
    s.avail_out = capacity;
    for (;;) {
      lzma_ret rc = lzma_code(&s, LZMA_FINISH);
      if (rc == LZMA_STREAM_END) break;
      if (rc == LZMA_MEM_ERROR) throw std::bad_alloc();
      if (s.avail_out == 0)
        stowage::sdk::invalid("xz encode: the output buffer of " + std::to_string(capacity) +
                              " bytes is too small (bound() gives the size that always fits)");
      if (rc != LZMA_OK)
        stowage::sdk::fail(STOWAGE_INTERNAL,
                           "xz encode: lzma_code failed with code " + std::to_string(rc));
    }
    return capacity - s.avail_out;
  }

  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    if (n < sizeof kXzMagic || std::memcmp(in, kXzMagic, sizeof kXzMagic) != 0)
      corrupt(n == 0
                  ? "xz decode: the payload is empty"
                  : "xz decode: the payload does not start with the xz magic (fd 37 7a 58 5a 00)");
    Stream decoder;
    lzma_stream& s = decoder.s;
    check_setup(lzma_stream_decoder(&s, kDecoderMemoryAllowance + capacity, LZMA_CONCATENATED),
                "lzma_stream_decoder");
    s.next_in = static_cast<const uint8_t*>(in);
    s.avail_in = n;
    s.next_out = static_cast<uint8_t*>(out);
    s.avail_out = capacity;
    uint8_t* out_end = static_cast<uint8_t*>(out) + capacity;
    for (;;) {
      // With the caller's buffer full, a spare byte tells whether more output follows.
      bool full = s.avail_out == 0;
      uint8_t spare;
      if (full) {
        s.next_out = &spare;
        s.avail_out = 1;
      }
      lzma_ret rc = lzma_code(&s, LZMA_FINISH);
      if (full) {
        if (s.avail_out == 0)
          corrupt("xz decode: the payload decodes to more than the expected " +
                  std::to_string(capacity) + " bytes");
        s.next_out = out_end;
        s.avail_out = 0;
      }
      if (rc == LZMA_STREAM_END) break;
      if (rc != LZMA_OK) fail_decode(rc, n);
    }
    return capacity - s.avail_out;
  }

 private:
  [[noreturn]] static void fail_decode(lzma_ret rc, size_t n) {
    switch (rc) {
      case LZMA_BUF_ERROR:
        corrupt("xz decode: the payload is truncated (" + std::to_string(n) +
                " bytes end before the xz stream does)");
      case LZMA_DATA_ERROR:
        corrupt("xz decode: corrupt xz data");
      case LZMA_FORMAT_ERROR:
        corrupt("xz decode: not an xz stream (bad stream header or trailing data)");
      case LZMA_OPTIONS_ERROR:
        corrupt("xz decode: the xz stream uses unsupported or invalid options");
      case LZMA_MEMLIMIT_ERROR:
        stowage::sdk::unsupported(
            "xz decode: the xz stream's dictionary needs more memory than the " +
            std::to_string(kDecoderMemoryAllowance >> 20) +
            " MiB this codec allows beyond the decoded size");
      case LZMA_MEM_ERROR:
        throw std::bad_alloc();
      default:
        stowage::sdk::fail(STOWAGE_INTERNAL,
                           "xz decode: lzma_code failed with code " + std::to_string(rc));
    }
  }

  uint32_t preset_ = 6;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Xz, "xz", "1.0.0", "N5 xz: one .xz stream with CRC64 via liblzma",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
