// Codec "raw": N5's uncompressed payload. Encoding and decoding are copies.
#include <stowage/plugin.hpp>

#include <cstring>
#include <string>

namespace {

class Raw {
 public:
  explicit Raw(std::string_view /*config_json: no parameters*/) {}
  std::string canonical_config() const { return R"({"type":"raw"})"; }
  uint64_t bound(uint64_t n) const { return n; }
  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    return copy(in, n, out, capacity, "encode");
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    return copy(in, n, out, capacity, "decode");
  }

 private:
  static size_t copy(const void* in, size_t n, void* out, size_t capacity, const char* what) {
    if (n > capacity)
      stowage::sdk::corrupt(std::string("raw ") + what + ": " + std::to_string(n) +
                            " bytes do not fit the " + std::to_string(capacity) + "-byte buffer");
    if (n) std::memcpy(out, in, n);
    return n;
  }
};

}  // namespace

STOWAGE_DEFINE_CODEC_PLUGIN(Raw, "raw", "1.0.0", "N5 raw: no compression",
                            STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
