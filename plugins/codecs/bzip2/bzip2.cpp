// Codec "bzip2": N5's bzip2 compression on Debian's libbz2.
//
//   {"type": "bzip2", "blockSize": 9}
//
// One bzip2 stream "BZh<blockSize>" per chunk, as N5 Java's commons-compress
// writes it (libbz2 picks other Huffman tables, so the bytes differ from
// Java's while decoding to the same data). Decoding also reads concatenated
// streams, as Python's bz2 and the bzip2 tool do.
//
// A bzip2 state is allocated per call (it is sized by blockSize and dwarfed
// by the cost of the transform itself), so the codec needs no Context.
#include <bzlib.h>

// libbz2 has no version macro; BZ2_bzlibVersion() is only known at run time.
#define STOWAGE_PLUGIN_BUILD_EXTRA ", libbz2"
#include <stowage/codec_config.hpp>
#include <stowage/codec_names.hpp>
#include <stowage/plugin.hpp>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

namespace {

using stowage::sdk::corrupt;

// libbz2 counts bytes in 32-bit unsigned: larger buffers go in slices.
constexpr size_t kSlice = size_t{1} << 30;

unsigned slice(const char* from, const char* end) {
  return static_cast<unsigned>(std::min(static_cast<size_t>(end - from), kSlice));
}

bool is_stream_magic(const char* p, size_t left) {
  return left >= 4 && std::memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9';
}

void check_setup(int rc, const char* what) {
  if (rc == BZ_MEM_ERROR) throw std::bad_alloc();
  if (rc != BZ_OK)
    stowage::sdk::fail(STOWAGE_INTERNAL,
                       std::string("bzip2: ") + what + " failed with code " + std::to_string(rc));
}

// Owns a bz_stream set up for compression or decompression.
class Stream {
 public:
  static Stream compressor(int block_size) {
    Stream s(true);
    check_setup(BZ2_bzCompressInit(&s.bz_, block_size, 0, 0), "BZ2_bzCompressInit");
    s.ready_ = true;
    return s;
  }
  static Stream decompressor() {
    Stream s(false);
    check_setup(BZ2_bzDecompressInit(&s.bz_, 0, 0), "BZ2_bzDecompressInit");
    s.ready_ = true;
    return s;
  }
  Stream(Stream&& o) noexcept : bz_(o.bz_), compress_(o.compress_), ready_(o.ready_) {
    o.ready_ = false;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (ready_) compress_ ? BZ2_bzCompressEnd(&bz_) : BZ2_bzDecompressEnd(&bz_);
  }
  bz_stream* operator->() { return &bz_; }
  bz_stream* get() { return &bz_; }

 private:
  explicit Stream(bool compress) : compress_(compress) {}
  bz_stream bz_{};
  bool compress_;
  bool ready_ = false;
};

class Bzip2 {
 public:
  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p = {stowage::sdk::Param::integer("blockSize", 9, 1, 9)};
    return p;
  }

  explicit Bzip2(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "bzip2", params());
    block_size_ = static_cast<int>(cfg.integer("blockSize"));
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  // numcodecs' bz2, whose "level" is the block size in 100 kB (N5's blockSize).
  static const char* names() { return R"({"numcodecs":["bz2"]})"; }
  static nlohmann::json import_config(std::string_view dialect, std::string_view name,
                                      std::string_view entry, uint64_t) {
    const stowage::sdk::CodecEntry e(dialect, name, entry);
    return {{"type", "bzip2"}, {"blockSize", e.integer("level", 1)}};
  }
  static nlohmann::json export_config(std::string_view config, std::string_view dialect, uint64_t) {
    const nlohmann::json c = stowage::sdk::config_keys(config);
    return stowage::sdk::codec_entry(dialect, "bz2",
                                     {{"level", stowage::sdk::config_value(c, "blockSize")}});
  }

  // libbz2's documented worst case: 1% larger plus 600 bytes.
  uint64_t bound(uint64_t n) const {
    if (n > (UINT64_MAX >> 1)) return UINT64_MAX;  // no buffer is that large
    return n + n / 100 + 600;
  }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    Stream s = Stream::compressor(block_size_);
    const char* in_end = static_cast<const char*>(in) + n;
    char* out_end = static_cast<char*>(out) + capacity;
    s->next_in = const_cast<char*>(static_cast<const char*>(in));
    s->next_out = static_cast<char*>(out);
    for (;;) {
      s->avail_in = slice(s->next_in, in_end);
      s->avail_out = slice(s->next_out, out_end);
      bool last = static_cast<size_t>(in_end - s->next_in) == s->avail_in;
      int rc = BZ2_bzCompress(s.get(), last ? BZ_FINISH : BZ_RUN);
      if (rc == BZ_STREAM_END) break;
      // Not finished with the output buffer full: it cannot hold the stream.
      if (s->next_out == out_end)
        stowage::sdk::invalid("bzip2 encode: the output buffer of " + std::to_string(capacity) +
                              " bytes is too small (bound() gives the size that always fits)");
      if (rc != BZ_RUN_OK && rc != BZ_FINISH_OK)
        stowage::sdk::fail(STOWAGE_INTERNAL,
                           "bzip2 encode: BZ2_bzCompress failed with code " + std::to_string(rc));
    }
    return static_cast<size_t>(s->next_out - static_cast<char*>(out));
  }

  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    const char* begin = static_cast<const char*>(in);
    if (!is_stream_magic(begin, n))
      corrupt(
          n == 0
              ? "bzip2 decode: the payload is empty"
              : "bzip2 decode: the payload does not start with a bzip2 header (\"BZh1\"..\"BZh9\")");
    const char* in_end = begin + n;
    char* out_end = static_cast<char*>(out) + capacity;
    const char* next_in = begin;
    char* next_out = static_cast<char*>(out);
    // One pass per concatenated stream.
    while (next_in != in_end) {
      if (!is_stream_magic(next_in, static_cast<size_t>(in_end - next_in)))
        corrupt("bzip2 decode: " + std::to_string(in_end - next_in) +
                " bytes of trailing data after the bzip2 stream");
      decode_stream(next_in, in_end, next_out, out_end, capacity);
    }
    return static_cast<size_t>(next_out - static_cast<char*>(out));
  }

 private:
  // Decodes the stream at next_in, advancing both cursors past it.
  static void decode_stream(const char*& next_in, const char* in_end, char*& next_out,
                            char* out_end, size_t capacity) {
    Stream s = Stream::decompressor();
    s->next_in = const_cast<char*>(next_in);
    s->next_out = next_out;
    for (;;) {
      bool full = s->next_out == out_end;
      char spare;
      s->avail_in = slice(s->next_in, in_end);
      // With the caller's buffer full, a spare byte tells whether more output follows.
      if (full) {
        s->next_out = &spare;
        s->avail_out = 1;
      } else {
        s->avail_out = slice(s->next_out, out_end);
      }
      const char* in_before = s->next_in;
      const char* out_before = s->next_out;
      int rc = BZ2_bzDecompress(s.get());
      bool progress = s->next_in != in_before || s->next_out != out_before;
      if (full) {
        if (s->avail_out == 0)
          corrupt("bzip2 decode: the payload decodes to more than the expected " +
                  std::to_string(capacity) + " bytes");
        s->next_out = out_end;
      }
      if (rc == BZ_STREAM_END) break;
      if (rc == BZ_DATA_ERROR || rc == BZ_DATA_ERROR_MAGIC)
        corrupt("bzip2 decode: corrupt bzip2 data (code " + std::to_string(rc) + ")");
      if (rc == BZ_MEM_ERROR) throw std::bad_alloc();
      if (rc != BZ_OK)
        stowage::sdk::fail(STOWAGE_INTERNAL,
                           "bzip2 decode: BZ2_bzDecompress failed with code " + std::to_string(rc));
      // BZ_OK with all input consumed and nothing more to give: the stream is cut short.
      if (!progress && s->next_in == in_end)
        corrupt("bzip2 decode: the payload is truncated (" + std::to_string(in_end - next_in) +
                " bytes end before the bzip2 stream does)");
    }
    next_in = s->next_in;
    next_out = s->next_out;
  }

  int block_size_ = 9;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Bzip2, "bzip2", "1.0.0", "N5 bzip2: one bzip2 stream via libbz2",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
