// Codec "gzip" (also reachable as "zlib"): N5's gzip compression on libdeflate and zlib.
//
//   {"type": "gzip", "level": 6, "useZlib": false, "encoder": "zlib"}
//
// useZlib false writes gzip (RFC 1952) like N5 Java 4.x (commons-compress:
// mtime 0, OS byte 0xff); useZlib true writes zlib (RFC 1950) like
// java.util.zip.Deflater. The config {"type": "zlib"} means useZlib true.
// Decoding ignores useZlib: like z5 it recognises gzip and zlib headers by
// their bytes, and it reads concatenated gzip members as commons-compress does.
//
// Encoding is libdeflate's by default (2-3x zlib's deflate at the same
// level); "encoder": "zlib" encodes with zlib's deflate, whose bytes are N5
// Java's (java.util.zip is zlib). Any gzip/zlib reader reads either. Decoding
// uses libdeflate (twice as fast), or zlib's inflate in the copy that
// tests/gzip builds with STOWAGE_GZIP_ZLIB_INFLATE; both check the CRC32 /
// Adler-32 and bound the output.
//
// Setting up a deflate stream costs more than compressing a small chunk
// (docs/performance.md), so the codec's Context keeps one compressor of each
// kind and one decompressor, reused per call; the host pools Contexts per
// configuration.
#include <libdeflate.h>
#include <zlib.h>
#ifdef STOWAGE_GZIP_ZLIB_INFLATE
#define STOWAGE_PLUGIN_BUILD_EXTRA \
  ", libdeflate " LIBDEFLATE_VERSION_STRING " and zlib " ZLIB_VERSION " (encode), zlib (decode)"
#else
#define STOWAGE_PLUGIN_BUILD_EXTRA                                    \
  ", libdeflate " LIBDEFLATE_VERSION_STRING " and zlib " ZLIB_VERSION \
  " (encode), libdeflate "                                            \
  "(decode)"
#endif
#include <stowage/codec_config.hpp>
#include <stowage/codec_names.hpp>
#include <stowage/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

namespace {

using stowage::sdk::corrupt;

// zlib counts bytes in 32-bit uInt: larger buffers are handed over in slices.
constexpr size_t kSlice = size_t{1} << 30;

uInt slice(const Bytef* from, const Bytef* end) {
  return static_cast<uInt>(std::min(static_cast<size_t>(end - from), kSlice));
}

constexpr int kWindowBits = 15;
constexpr int kGzipWrapper = 16;  // added to windowBits: gzip header and trailer
constexpr int kAutoWrapper = 32;  // added to windowBits: inflate detects gzip or zlib

// One deflater per context, reinitialised only when the wrapper changes.
class Deflater {
 public:
  ~Deflater() {
    if (ready_) deflateEnd(&z_);
  }
  z_stream& acquire(int level, bool zlib) {
    if (ready_ && zlib == zlib_) {
      check(deflateReset(&z_), "deflateReset");
      if (level != level_) check(deflateParams(&z_, level, Z_DEFAULT_STRATEGY), "deflateParams");
    } else {
      if (ready_) deflateEnd(&z_);
      ready_ = false;
      z_ = z_stream{};
      int bits = zlib ? kWindowBits : kWindowBits + kGzipWrapper;
      check(deflateInit2(&z_, level, Z_DEFLATED, bits, 8, Z_DEFAULT_STRATEGY), "deflateInit2");
      ready_ = true;
    }
    level_ = level;
    zlib_ = zlib;
    // N5 Java's commons-compress header: no name, mtime 0, OS "unknown" (0xff).
    static gz_header header = [] {
      gz_header h{};
      h.os = 0xff;
      return h;
    }();
    if (!zlib) check(deflateSetHeader(&z_, &header), "deflateSetHeader");
    return z_;
  }

 private:
  static void check(int rc, const char* what) {
    if (rc == Z_MEM_ERROR) throw std::bad_alloc();
    if (rc != Z_OK)
      stowage::sdk::fail(STOWAGE_INTERNAL, std::string("gzip: zlib ") + what +
                                               " failed with code " + std::to_string(rc));
  }
  z_stream z_{};
  bool ready_ = false, zlib_ = false;
  int level_ = 0;
};

// One libdeflate compressor per context, reallocated only when the level
// changes. Its gzip header, like N5 Java's, has no name, mtime 0 and OS 0xff.
class Compressor {
 public:
  ~Compressor() { libdeflate_free_compressor(c_); }
  libdeflate_compressor* acquire(int level) {
    if (!c_ || level != level_) {
      libdeflate_free_compressor(c_);
      c_ = libdeflate_alloc_compressor(level);  // 0..9 as zlib's; checked by params()
      if (!c_) throw std::bad_alloc();
      level_ = level;
    }
    return c_;
  }

 private:
  libdeflate_compressor* c_ = nullptr;
  int level_ = 0;
};

bool is_gzip_magic(const Bytef* p, size_t left) {
  return left >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

// RFC 1950: CM 8 (deflate), window <= 32K, and the 16-bit header is a multiple of 31.
bool is_zlib_header(const Bytef* p, size_t left) {
  return left >= 2 && (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && ((p[0] << 8) | p[1]) % 31 == 0;
}

const char* wrapper_name(bool gzip) { return gzip ? "gzip" : "zlib"; }

// After a stream ends with `left` bytes to go: commons-compress reads on while
// another gzip member follows; anything else after the stream is garbage.
void require_next_member(bool gzip, const Bytef* p, size_t left) {
  if (!gzip || !is_gzip_magic(p, left))
    corrupt("gzip decode: " + std::to_string(left) + " bytes of trailing data after the " +
            wrapper_name(gzip) + " stream");
}

[[noreturn]] void fail_oversized(size_t capacity) {
  corrupt("gzip decode: the payload decodes to more than the expected " + std::to_string(capacity) +
          " bytes");
}

#ifndef STOWAGE_GZIP_ZLIB_INFLATE
// Decoding with libdeflate: twice zlib's inflate speed on N5 chunks (one-shot
// decoding into the caller's buffer). One decompressor per context.
class Inflater {
 public:
  Inflater() : d_(libdeflate_alloc_decompressor()) {
    if (!d_) throw std::bad_alloc();
  }
  ~Inflater() { libdeflate_free_decompressor(d_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  size_t inflate(const Bytef* in, size_t n, Bytef* out, size_t capacity, bool gzip) {
    Bytef spare;
    if (!out) out = &spare;  // libdeflate wants a pointer even for 0 bytes
    size_t pos = 0, written = 0;
    do {
      if (pos > 0) require_next_member(gzip, in + pos, n - pos);
      size_t used = 0, produced = 0;
      libdeflate_result rc =
          gzip ? libdeflate_gzip_decompress_ex(d_, in + pos, n - pos, out + written,
                                               capacity - written, &used, &produced)
               : libdeflate_zlib_decompress_ex(d_, in + pos, n - pos, out + written,
                                               capacity - written, &used, &produced);
      if (rc == LIBDEFLATE_INSUFFICIENT_SPACE) fail_oversized(capacity);
      if (rc != LIBDEFLATE_SUCCESS)
        corrupt(std::string("gzip decode: corrupt or truncated ") + wrapper_name(gzip) + " data (" +
                std::to_string(n) + " bytes, the stream starting at byte " + std::to_string(pos) +
                " does not decode)");
      pos += used;
      written += produced;
    } while (pos < n);
    return written;
  }

 private:
  libdeflate_decompressor* d_;
};
#else
// Decoding with zlib's inflate, one stream per context, reset per call.
class Inflater {
 public:
  Inflater() {
    if (inflateInit2(&z_, kWindowBits + kAutoWrapper) != Z_OK) throw std::bad_alloc();
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  size_t inflate(const Bytef* in, size_t n, Bytef* out, size_t capacity, bool gzip) {
    if (inflateReset2(&z_, kWindowBits + kAutoWrapper) != Z_OK) throw std::bad_alloc();
    const Bytef* in_end = in + n;
    Bytef* out_end = out + capacity;
    z_.next_in = const_cast<Bytef*>(in);
    z_.next_out = out;
    for (;;) {
      int rc = step(in_end, out_end, capacity);
      if (rc == Z_STREAM_END) {
        size_t left = static_cast<size_t>(in_end - z_.next_in);
        if (left == 0) break;
        require_next_member(gzip, z_.next_in, left);
        if (inflateReset2(&z_, kWindowBits + kGzipWrapper) != Z_OK) throw std::bad_alloc();
        continue;
      }
      if (rc == Z_OK) continue;
      if (rc == Z_BUF_ERROR && z_.next_in == in_end)
        corrupt("gzip decode: the payload is truncated (" + std::to_string(n) +
                " bytes end before the " + wrapper_name(gzip) + " stream does)");
      if (rc == Z_NEED_DICT) corrupt("gzip decode: the zlib stream needs a preset dictionary");
      if (rc == Z_MEM_ERROR) throw std::bad_alloc();
      corrupt(std::string("gzip decode: corrupt ") + wrapper_name(gzip) + " data (" +
              (z_.msg ? z_.msg : "code " + std::to_string(rc)) + ")");
    }
    return static_cast<size_t>(z_.next_out - out);
  }

 private:
  // One inflate() call. When the caller's buffer is full, a one-byte spare
  // buffer tells whether more output follows (oversized) or only the trailer.
  int step(const Bytef* in_end, Bytef* out_end, size_t capacity) {
    z_.avail_in = slice(z_.next_in, in_end);
    bool full = z_.next_out == out_end;
    Bytef spare;
    if (full) {
      z_.next_out = &spare;
      z_.avail_out = 1;
    } else {
      z_.avail_out = slice(z_.next_out, out_end);
    }
    int rc = ::inflate(&z_, Z_NO_FLUSH);
    if (full) {
      if (z_.avail_out == 0) fail_oversized(capacity);
      z_.next_out = out_end;
    }
    return rc;
  }

  z_stream z_{};
};
#endif

class Gzip {
 public:
  // The scratch state of one thread; each stream is made on first use.
  struct Context {
    Compressor compressor;
    Deflater deflater;
    std::unique_ptr<Inflater> inflater;
  };

  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p = {
        stowage::sdk::Param::integer("level", 6, -1, 9),
        stowage::sdk::Param::boolean("useZlib", false),
        stowage::sdk::Param::choice("encoder", "libdeflate", {"libdeflate", "zlib"})};
    return p;
  }

  explicit Gzip(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "gzip", params());
    bool alias_zlib = cfg.given_type() == "zlib";
    level_ = static_cast<int>(cfg.integer("level"));
    use_zlib_ = cfg.boolean("useZlib", alias_zlib);
    if (alias_zlib && !use_zlib_)
      stowage::sdk::invalid("gzip: the config has \"type\": \"zlib\" but \"useZlib\": false");
    zlib_encoder_ = cfg.choice("encoder") == "zlib";
    // The default is left out so that attributes.json stays as N5 Java
    // writes it; "zlib" is kept so that a dataset reopened writes alike.
    if (!zlib_encoder_) cfg.drop("encoder");
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  // Zarr's names: numcodecs' zlib (RFC 1950) and gzip, v3's gzip (RFC 1952).
  static const char* names() { return R"({"numcodecs":["zlib","gzip"],"zarr3":["gzip"]})"; }
  static nlohmann::json import_config(std::string_view dialect, std::string_view name,
                                      std::string_view entry, uint64_t) {
    const stowage::sdk::CodecEntry e(dialect, name, entry);
    const int64_t default_level = e.numcodecs() ? 1 : 5;  // numcodecs' and zarr-python 3's
    return {{"type", "gzip"},
            {"level", e.integer("level", default_level)},
            {"useZlib", e.numcodecs() && name == "zlib"}};
  }
  // v3 has gzip only: a zlib config is written there as gzip, as before.
  static nlohmann::json export_config(std::string_view config, std::string_view dialect, uint64_t) {
    const nlohmann::json c = stowage::sdk::config_keys(config);
    const bool zlib = dialect == "numcodecs" && c.value("useZlib", false);
    return stowage::sdk::codec_entry(dialect, zlib ? "zlib" : "gzip",
                                     {{"level", stowage::sdk::config_value(c, "level")}});
  }

  // compressBound covers the zlib wrapper (6 bytes); gzip's is 18. libdeflate's
  // bound (any level, gzip wrapper) is larger than zlib's for large inputs.
  uint64_t bound(uint64_t n) const {
    if (n > (UINT64_MAX >> 1)) return UINT64_MAX;  // no buffer is that large
    uint64_t zlib = compressBound(static_cast<uLong>(n)) + 12;
    return std::max<uint64_t>(zlib, libdeflate_gzip_compress_bound(nullptr, n));
  }

  size_t encode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    return zlib_encoder_ ? deflate_zlib(cx, in, n, out, capacity)
                         : deflate_libdeflate(cx, in, n, out, capacity);
  }

  size_t decode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    const Bytef* begin = static_cast<const Bytef*>(in);
    bool gzip = is_gzip_magic(begin, n);
    if (!gzip && !is_zlib_header(begin, n))
      corrupt(
          n == 0 ? "gzip decode: the payload is empty"
                 : "gzip decode: the payload starts with neither a gzip (1f 8b) nor a zlib header");
    if (!cx.inflater) cx.inflater = std::make_unique<Inflater>();
    return cx.inflater->inflate(begin, n, static_cast<Bytef*>(out), capacity, gzip);
  }

 private:
  [[noreturn]] static void too_small(size_t capacity) {
    stowage::sdk::invalid("gzip encode: the output buffer of " + std::to_string(capacity) +
                          " bytes is too small (bound() gives the size that always fits)");
  }

  // One call: libdeflate compresses whole buffers; 0 means it did not fit.
  size_t deflate_libdeflate(Context& cx, const void* in, size_t n, void* out,
                            size_t capacity) const {
    libdeflate_compressor* c = cx.compressor.acquire(level_ < 0 ? 6 : level_);
    size_t written = use_zlib_ ? libdeflate_zlib_compress(c, in, n, out, capacity)
                               : libdeflate_gzip_compress(c, in, n, out, capacity);
    if (written == 0) too_small(capacity);
    return written;
  }

  size_t deflate_zlib(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    z_stream& z = cx.deflater.acquire(level_, use_zlib_);
    const Bytef* in_end = static_cast<const Bytef*>(in) + n;
    Bytef* out_end = static_cast<Bytef*>(out) + capacity;
    z.next_in = const_cast<Bytef*>(static_cast<const Bytef*>(in));
    z.next_out = static_cast<Bytef*>(out);
    for (;;) {
      z.avail_in = slice(z.next_in, in_end);
      z.avail_out = slice(z.next_out, out_end);
      bool last = static_cast<size_t>(in_end - z.next_in) == z.avail_in;
      int rc = deflate(&z, last ? Z_FINISH : Z_NO_FLUSH);
      if (rc == Z_STREAM_END) break;
      // Not finished with the output buffer full: it cannot hold the stream.
      if (z.next_out == out_end) too_small(capacity);
      if (rc != Z_OK && rc != Z_BUF_ERROR)
        stowage::sdk::fail(STOWAGE_INTERNAL,
                           "gzip encode: deflate failed with code " + std::to_string(rc));
    }
    return static_cast<size_t>(z.next_out - static_cast<Bytef*>(out));
  }

  int level_ = 6;
  bool use_zlib_ = false, zlib_encoder_ = false;
  std::string canonical_;
};

const char* const kAliases[] = {"zlib", nullptr};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN_WITH_ALIASES(
    Gzip, "gzip", "1.0.0",
    "N5 gzip: gzip (RFC 1952) or, with useZlib, zlib (RFC 1950) via libdeflate or zlib",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE, kAliases)
