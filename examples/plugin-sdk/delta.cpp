// stowage_codec_delta: a complete third-party codec built against the
// installed stowage SDK only (found through pkg-config).
//
// It stores each little-endian integer as its difference from the previous
// one. Smooth integer data (counters, timestamps, sorted ids, image rows)
// becomes small numbers that a following compressor packs far better.
// Config: {"type": "delta", "typesize": 1|2|4|8}  (default 4).
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cstring>
#include <string>

namespace {

// The configuration: immutable once made, used by many threads at once.
// Delta needs no scratch state, so it declares no Context (a codec that
// does, e.g. a compression context, declares `struct Context` and takes a
// `Context&` first in encode and decode; the host keeps one per thread).
class Delta {
 public:
  // Every parameter, declared once: the descriptor's schema and the checks
  // in CodecConfig both come from here.
  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p = {stowage::sdk::Param::integer("typesize", 4, 1, 8)};
    return p;
  }

  Delta(const stowage::sdk::Host& host, std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "delta", params());
    typesize_ = static_cast<size_t>(cfg.integer("typesize"));
    if (typesize_ != 1 && typesize_ != 2 && typesize_ != 4 && typesize_ != 8)
      stowage::sdk::invalid("delta: \"typesize\" must be 1, 2, 4 or 8");
    canonical_ = cfg.canonical();
    // The host of the registry creating this codec (never a global one).
    host.log(STOWAGE_LOG_DEBUG, "delta: typesize " + std::to_string(typesize_));
  }
  std::string canonical_config() const { return canonical_; }
  uint64_t bound(uint64_t n) const { return n; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    check(n, capacity, "encode");
    switch (typesize_) {
      case 1:
        return run<uint8_t, true>(in, n, out);
      case 2:
        return run<uint16_t, true>(in, n, out);
      case 4:
        return run<uint32_t, true>(in, n, out);
      default:
        return run<uint64_t, true>(in, n, out);
    }
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    check(n, capacity, "decode");
    switch (typesize_) {
      case 1:
        return run<uint8_t, false>(in, n, out);
      case 2:
        return run<uint16_t, false>(in, n, out);
      case 4:
        return run<uint32_t, false>(in, n, out);
      default:
        return run<uint64_t, false>(in, n, out);
    }
  }

 private:
  // Bad input to encode is the caller's (INVALID_ARGUMENT); to decode, the
  // payload's (CORRUPT), as plugin.h asks.
  void check(size_t n, size_t capacity, const char* what) const {
    const bool encoding = std::string(what) == "encode";
    auto fail = [&](const std::string& why) {
      encoding ? stowage::sdk::invalid(std::string("delta ") + what + ": " + why)
               : stowage::sdk::corrupt(std::string("delta ") + what + ": " + why);
    };
    if (n % typesize_ != 0)
      fail(std::to_string(n) + " bytes is not a whole number of " + std::to_string(typesize_) +
           "-byte elements");
    if (n > capacity) fail("output buffer too small");
  }

  // Wrapping unsigned arithmetic makes encode and decode exact inverses.
  // Little-endian hosts only (the elements are taken in host order).
  template <class T, bool kEncode>
  static size_t run(const void* in, size_t n, void* out) {
    const auto* src = static_cast<const unsigned char*>(in);
    auto* dst = static_cast<unsigned char*>(out);
    T previous = 0;
    for (size_t i = 0; i < n / sizeof(T); ++i) {
      T v;
      std::memcpy(&v, src + i * sizeof(T), sizeof(T));
      T r = kEncode ? static_cast<T>(v - previous) : static_cast<T>(v + previous);
      previous = kEncode ? v : r;
      std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
    }
    return n;
  }

  size_t typesize_ = 4;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Delta, "delta", "1.0.0",
                            "delta filter for little-endian integers (example third-party codec)",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
