// The framing every checksum codec plugin shares (crc32c, adler32, crc32,
// fletcher32): the payload unchanged plus a 4-byte little-endian checksum of
// it, before the payload (numcodecs' Checksum32 default, "location": "start")
// or after it (Zarr v3's crc32c, numcodecs' Fletcher32, "location": "end").
// Header-only: each plugin includes it and links nothing of ours.
//
// A plugin supplies the algorithm:
//   struct Algo {
//     static constexpr const char* kId = "crc32";
//     static constexpr Location kLocation = Location::start;  // the default
//     static constexpr bool kLocationParam = true;  // numcodecs lets the config move it
//     static uint32_t checksum(const uint8_t* data, size_t n);
//   };
//   using Crc32 = checksum32::Codec<Algo>;
#ifndef STOWAGE_CODECS_CHECKSUM32_HPP
#define STOWAGE_CODECS_CHECKSUM32_HPP

#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace checksum32 {

enum class Location { start, end };

constexpr size_t kSize = 4;

inline const char* location_name(Location l) { return l == Location::start ? "start" : "end"; }

inline void store_le32(uint8_t* p, uint32_t v) {
  for (size_t i = 0; i < kSize; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t load_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (size_t i = 0; i < kSize; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

inline std::string hex(uint32_t v) {
  char s[11];
  std::snprintf(s, sizeof s, "0x%08x", static_cast<unsigned>(v));
  return s;
}

// The codec's configuration: where the checksum goes. No scratch state, so
// no Context: one object serves every thread.
template <class Algo>
class Codec {
 public:
  static const stowage::sdk::Params& params() {
    static const stowage::sdk::Params p =
        Algo::kLocationParam ? stowage::sdk::Params{stowage::sdk::Param::choice(
                                   "location", location_name(Algo::kLocation), {"start", "end"})}
                             : stowage::sdk::Params{};
    return p;
  }

  explicit Codec(std::string_view config_json) {
    stowage::sdk::CodecConfig cfg(config_json, Algo::kId, params());
    if constexpr (Algo::kLocationParam)
      location_ = cfg.choice("location") == "start" ? Location::start : Location::end;
    canonical_ = cfg.canonical();
  }

  std::string canonical_config() const { return canonical_; }

  uint64_t bound(uint64_t n) const { return n > UINT64_MAX - kSize ? UINT64_MAX : n + kSize; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    if (capacity < kSize || capacity - kSize < n)
      stowage::sdk::invalid(std::string(Algo::kId) + " encode: the output buffer of " +
                            std::to_string(capacity) + " bytes is too small for " +
                            std::to_string(n) + " bytes and the 4-byte checksum");
    auto* dst = static_cast<uint8_t*>(out);
    const auto* src = static_cast<const uint8_t*>(in);
    const uint32_t checksum = Algo::checksum(src, n);  // before the move: `out` may be `in`
    uint8_t* sum = location_ == Location::start ? dst : dst + n;
    uint8_t* payload = location_ == Location::start ? dst + kSize : dst;
    if (n) std::memmove(payload, src, n);
    store_le32(sum, checksum);
    return n + kSize;
  }

  // Checks before it copies: a mismatch leaves the caller's buffer untouched.
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    if (n < kSize)
      stowage::sdk::corrupt(std::string(Algo::kId) + " decode: the payload of " +
                            std::to_string(n) + " bytes is shorter than its 4-byte checksum");
    const auto* src = static_cast<const uint8_t*>(in);
    const size_t size = n - kSize;
    const uint8_t* sum = location_ == Location::start ? src : src + size;
    const uint8_t* payload = location_ == Location::start ? src + kSize : src;
    if (size > capacity)
      stowage::sdk::corrupt(std::string(Algo::kId) + " decode: the payload holds " +
                            std::to_string(size) + " bytes, more than the expected " +
                            std::to_string(capacity));
    const uint32_t stored = load_le32(sum), computed = Algo::checksum(payload, size);
    if (stored != computed)
      stowage::sdk::corrupt(std::string(Algo::kId) + " decode: checksum mismatch (stored " +
                            hex(stored) + ", computed " + hex(computed) + " over " +
                            std::to_string(size) + " bytes, checksum at the " +
                            location_name(location_) + ")");
    if (size) std::memmove(out, payload, size);
    return size;
  }

 private:
  Location location_ = Algo::kLocation;
  std::string canonical_;
};

}  // namespace checksum32

#endif  // STOWAGE_CODECS_CHECKSUM32_HPP
