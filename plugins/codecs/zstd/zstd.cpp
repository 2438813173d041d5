// Codec "zstd": n5-zstandard's compression on Debian's libzstd.
//
//   {"type": "zstd", "level": 3}
//
// One zstd frame with its content size, as n5-zstandard's ZstdCompressCtx
// writes it. Decoding reads frames with or without a content size (zarr,
// streaming writers), several concatenated frames and skippable frames.
// zarr-python writes a stray "id": "zstd", which is kept and ignored.
//
// Contexts are expensive to create and cheap to reuse (docs/performance.md): the codec's Context
// holds one compression and one decompression context, made on first use,
// and the host keeps Contexts pooled per configuration.
#include <zstd.h>
#include <zstd_errors.h>

#define STOWAGE_PLUGIN_BUILD_EXTRA ", libzstd " ZSTD_VERSION_STRING
#include <stowage/codec_config.hpp>
#include <stowage/codec_names.hpp>
#include <stowage/plugin.hpp>

#include <new>
#include <string>

namespace {

using stowage::sdk::corrupt;

// The scratch state of one thread: zstd's own contexts.
struct Contexts {
  ZSTD_CCtx* cctx = nullptr;
  ZSTD_DCtx* dctx = nullptr;
  Contexts() = default;
  Contexts(const Contexts&) = delete;
  Contexts& operator=(const Contexts&) = delete;
  ~Contexts() {
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
  }
  ZSTD_CCtx* compressor() {
    if (!cctx && !(cctx = ZSTD_createCCtx())) throw std::bad_alloc();
    return cctx;
  }
  ZSTD_DCtx* decompressor() {
    if (!dctx && !(dctx = ZSTD_createDCtx())) throw std::bad_alloc();
    return dctx;
  }
};

class Zstd {
 public:
  using Context = Contexts;

  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p = {
        stowage::sdk::Param::integer("level", 3, ZSTD_minCLevel(), ZSTD_maxCLevel())};
    return p;
  }

  explicit Zstd(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "zstd", params());
    level_ = static_cast<int>(cfg.integer("level"));
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  // Zarr's names. A "checksum" is a flag in the frame itself, which decoding checks.
  static const char* names() { return R"({"numcodecs":["zstd"],"zarr3":["zstd"]})"; }
  static nlohmann::json import_config(std::string_view dialect, std::string_view name,
                                      std::string_view entry, uint64_t) {
    const stowage::sdk::CodecEntry e(dialect, name, entry);
    return {{"type", "zstd"}, {"level", e.integer("level", e.numcodecs() ? 1 : 0)}};
  }
  static nlohmann::json export_config(std::string_view config, std::string_view dialect, uint64_t) {
    const nlohmann::json c = stowage::sdk::config_keys(config);
    nlohmann::json keys = {{"level", stowage::sdk::config_value(c, "level")}};
    if (dialect == "zarr3") keys["checksum"] = false;
    return stowage::sdk::codec_entry(dialect, "zstd", keys);
  }

  uint64_t bound(uint64_t n) const {
    size_t b = ZSTD_compressBound(static_cast<size_t>(n));
    return ZSTD_isError(b) ? UINT64_MAX : b;
  }

  size_t encode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    size_t rc = ZSTD_compressCCtx(cx.compressor(), out, capacity, in, n, level_);
    if (!ZSTD_isError(rc)) return rc;
    if (ZSTD_getErrorCode(rc) == ZSTD_error_dstSize_tooSmall)
      stowage::sdk::invalid("zstd encode: the output buffer of " + std::to_string(capacity) +
                            " bytes is too small (bound() gives the size that always fits)");
    if (ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation) throw std::bad_alloc();
    stowage::sdk::fail(STOWAGE_INTERNAL, std::string("zstd encode: ") + ZSTD_getErrorName(rc));
  }

  size_t decode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const {
    if (n == 0) corrupt("zstd decode: the payload is empty");
    // A declared content size larger than the buffer fails before any work.
    unsigned long long declared = ZSTD_getFrameContentSize(in, n);
    if (declared == ZSTD_CONTENTSIZE_ERROR)
      corrupt("zstd decode: the payload does not start with a zstd frame header");
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > capacity)
      corrupt("zstd decode: the frame declares " + std::to_string(declared) +
              " bytes, more than the expected " + std::to_string(capacity));
    size_t rc = ZSTD_decompressDCtx(cx.decompressor(), out, capacity, in, n);
    if (!ZSTD_isError(rc)) return rc;
    switch (ZSTD_getErrorCode(rc)) {
      case ZSTD_error_dstSize_tooSmall:
        corrupt("zstd decode: the payload decodes to more than the expected " +
                std::to_string(capacity) + " bytes");
      case ZSTD_error_srcSize_wrong:
        corrupt("zstd decode: the payload is truncated or has trailing data (" + std::to_string(n) +
                " bytes do not end where the zstd frames do)");
      case ZSTD_error_memory_allocation:
        throw std::bad_alloc();
      default:
        corrupt(std::string("zstd decode: corrupt zstd data (") + ZSTD_getErrorName(rc) + ")");
    }
  }

 private:
  int level_ = 3;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Zstd, "zstd", "1.0.0", "n5-zstandard zstd: one zstd frame via libzstd",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
