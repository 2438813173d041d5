// stowage_codec_snappy: a third-party bytes-to-bytes codec on a library,
// Debian's libsnappy (libsnappy-dev), built against the installed stowage
// SDK only (found through pkg-config).
//
// The bytes are snappy's raw format (no framing), as snappy::RawCompress and
// python-snappy's snappy.compress write them: a varint of the decoded size,
// then literals and copies. No checksum: a damaged stream may decode to other
// bytes (the framing's CRCs would catch that; N5's snappy has none either).
// Config: {"type": "snappy"}, no parameters.
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <snappy-c.h>

#include <cstring>
#include <string>

namespace {

// The configuration: immutable, used by many threads at once. snappy needs
// no scratch state between calls, so there is no Context.
class Snappy {
 public:
  // No parameters; declaring the empty list still gives a schema ("{}").
  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p;
    return p;
  }

  explicit Snappy(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, "snappy", params());
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }

  // snappy's own worst case (32 + n + n/6); it takes sizes up to 4 GiB - 1.
  uint64_t bound(uint64_t n) const {
    return n > kMaxInput ? UINT64_MAX : snappy_max_compressed_length(static_cast<size_t>(n));
  }

  // snappy writes only into a buffer of its worst case: a smaller one gets a
  // scratch copy, and the result is refused only if it does not fit.
  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    if (n > kMaxInput)
      stowage::sdk::invalid("snappy encode: " + std::to_string(n) +
                            " bytes is more than snappy takes (4 GiB - 1)");
    const size_t worst = snappy_max_compressed_length(n);
    if (capacity >= worst) return compress(in, n, static_cast<char*>(out), worst);
    std::string scratch(worst, '\0');
    size_t size = compress(in, n, scratch.data(), worst);
    if (size > capacity)
      stowage::sdk::invalid("snappy encode: the output buffer of " + std::to_string(capacity) +
                            " bytes is too small for " + std::to_string(size));
    std::memcpy(out, scratch.data(), size);
    return size;
  }

  // Bad payloads are CORRUPT (the data's fault), as plugin.h asks.
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    const char* src = static_cast<const char*>(in);
    size_t size = 0;
    if (snappy_uncompressed_length(src, n, &size) != SNAPPY_OK)
      stowage::sdk::corrupt("snappy decode: the " + std::to_string(n) +
                            " bytes do not start with a snappy length");
    if (size > capacity)
      stowage::sdk::corrupt("snappy decode: the payload decodes to " + std::to_string(size) +
                            " bytes, more than the expected " + std::to_string(capacity));
    if (snappy_uncompress(src, n, static_cast<char*>(out), &size) != SNAPPY_OK)
      stowage::sdk::corrupt("snappy decode: corrupt or truncated snappy data (" +
                            std::to_string(n) + " bytes)");
    return size;
  }

 private:
  static constexpr uint64_t kMaxInput = 0xffffffffu;

  static size_t compress(const void* in, size_t n, char* out, size_t worst) {
    size_t size = worst;
    if (snappy_compress(static_cast<const char*>(in), n, out, &size) != SNAPPY_OK)
      stowage::sdk::fail(STOWAGE_INTERNAL, "snappy encode: snappy_compress failed");
    return size;
  }

  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Snappy, "snappy", "1.0.0",
                            "snappy raw format via libsnappy (example third-party codec)",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
