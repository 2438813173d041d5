// Codec "packbits": numcodecs' PackBits filter, an array -> array codec.
//
//   {"type": "packbits"}
//
// The chunk's bytes, viewed as bools (numpy's view(bool): a non-zero byte
// is true), packed eight to a byte, most significant bit first
// (np.packbits), after a one-byte header: the number of padding bits in the
// last byte. The encoded chunk is a 1-d uint8 array of ceil(n / 8) + 1
// elements; decoding gives bytes 0 and 1. numcodecs 0.11's
// numcodecs/packbits.py.
#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cstring>
#include <string>

namespace {

namespace sdk = stowage::sdk;

class PackBits {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.packbits".
  static const char* names() { return R"({"numcodecs": ["packbits"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {};
    return p;
  }

  PackBits(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk) {
    sdk::CodecConfig cfg(config_json, "packbits", params());
    count_ = chunk.bytes();
    packed_ = (count_ + 7) / 8 + 1;
    padding_ = uint8_t(count_ % 8 ? 8 - count_ % 8 : 0);
    encoded_.dtype = sdk::ElementType::parse("|u1");
    encoded_.shape = {packed_};
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  uint64_t bound(uint64_t) const { return packed_; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("packbits", false, n, count_, capacity, packed_);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    dst[0] = padding_;
    std::memset(dst + 1, 0, packed_ - 1);
    for (uint64_t k = 0; k < count_; ++k)
      if (src[k]) dst[1 + k / 8] |= uint8_t(0x80 >> (k % 8));
    return packed_;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    sdk::check_call("packbits", true, n, packed_, capacity, count_);
    // numcodecs drops the header's count of bits from the end: another count
    // would decode to another number of elements than the chunk's.
    if (src[0] != padding_)
      sdk::corrupt("packbits decode: the header says " + std::to_string(src[0]) +
                   " padding bits, a chunk of " + std::to_string(count_) + " has " +
                   std::to_string(padding_));
    for (uint64_t k = 0; k < count_; ++k) dst[k] = (src[1 + k / 8] >> (7 - k % 8)) & 1;
    return count_;
  }

 private:
  uint64_t count_ = 0, packed_ = 1;
  uint8_t padding_ = 0;
  sdk::ChunkSpec encoded_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(PackBits, "packbits", "1.0.0",
                                  "numcodecs packbits (array -> array): bools packed eight to "
                                  "a byte after a padding count",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
