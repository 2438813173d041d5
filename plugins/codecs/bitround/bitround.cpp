// Codec "bitround": numcodecs' BitRound filter, an array -> array codec.
//
//   {"type": "bitround", "keepbits": 10}
//
// Each float keeps `keepbits` bits of its mantissa, rounded half to even
// on its bits (Klöwer et al. 2021): numcodecs 0.11's numcodecs/bitround.py.
// The bits are stored as the signed integer of the float's width and byte
// order ("<f4" -> "<i4"), as numcodecs returns them; keepbits equal to the
// mantissa's width stores the floats unchanged. Decoding copies.
#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <algorithm>
#include <cstring>
#include <string>

namespace {

namespace sdk = stowage::sdk;

// Mantissa bits of float16, float32, float64 (numcodecs' max_bits).
int mantissa_bits(uint32_t size) { return size == 2 ? 10 : size == 4 ? 23 : 52; }

template <class U>
void round_bits(const uint8_t* in, uint8_t* out, uint64_t count, int maskbits, bool swap) {
  const U half = (U(1) << (maskbits - 1)) - 1;  // half_quantum1
  const U mask = U(~U(0)) << maskbits;          // (all_set >> maskbits) << maskbits
  for (uint64_t k = 0; k < count; ++k) {
    uint8_t b[sizeof(U)];
    std::memcpy(b, in + k * sizeof(U), sizeof(U));
    if (swap) std::reverse(b, b + sizeof(U));
    U v;
    std::memcpy(&v, b, sizeof(U));
    // b += ((b >> maskbits) & 1) + half_quantum1; b &= mask (wrapping, as numpy's ints)
    v = U(v + U(((v >> maskbits) & 1) + half));
    v = U(v & mask);
    std::memcpy(b, &v, sizeof(U));
    if (swap) std::reverse(b, b + sizeof(U));
    std::memcpy(out + k * sizeof(U), b, sizeof(U));
  }
}

class BitRound {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.bitround".
  static const char* names() { return R"({"numcodecs": ["bitround"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {sdk::Param::integer("keepbits", 0, 0, 52)};
    return p;
  }

  BitRound(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk)
      : chunk_(chunk) {
    sdk::CodecConfig cfg(config_json, "bitround", params());
    if (!cfg.has("keepbits")) sdk::invalid("bitround: \"keepbits\" is required");
    keepbits_ = int(cfg.integer("keepbits"));
    if (chunk.dtype.kind != 'f')  // numcodecs: TypeError
      sdk::invalid("bitround: only float arrays (16-64bit) can be bit-rounded, not \"" +
                   chunk.dtype.typestr() + "\"");
    const int bits = mantissa_bits(chunk.dtype.size);
    if (keepbits_ > bits)
      sdk::invalid("bitround: \"keepbits\" " + std::to_string(keepbits_) + " is too large for \"" +
                   chunk.dtype.typestr() + "\" (at most " + std::to_string(bits) + ")");
    maskbits_ = bits - keepbits_;
    encoded_ = chunk;
    if (maskbits_ > 0) encoded_.dtype.kind = 'i';  // numcodecs returns the integer view
    bytes_ = chunk.bytes();
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  uint64_t bound(uint64_t) const { return bytes_; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("bitround", false, n, bytes_, capacity, bytes_);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (maskbits_ == 0) return std::memcpy(dst, src, bytes_), bytes_;
    const bool swap = !chunk_.dtype.native();
    const uint64_t count = chunk_.elements();
    switch (chunk_.dtype.size) {
      case 2:
        round_bits<uint16_t>(src, dst, count, maskbits_, swap);
        break;
      case 4:
        round_bits<uint32_t>(src, dst, count, maskbits_, swap);
        break;
      default:
        round_bits<uint64_t>(src, dst, count, maskbits_, swap);
    }
    return bytes_;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("bitround", true, n, bytes_, capacity, bytes_);
    std::memcpy(out, in, bytes_);  // the integers' bits are the floats'
    return bytes_;
  }

 private:
  sdk::ChunkSpec chunk_, encoded_;
  int keepbits_ = 0, maskbits_ = 0;
  uint64_t bytes_ = 0;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(BitRound, "bitround", "1.0.0",
                                  "numcodecs bitround (array -> array): floats keep keepbits "
                                  "mantissa bits, rounded",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
