// stowage_codec_xordelta: a complete third-party ARRAY -> ARRAY codec (a
// filter), built against the installed stowage SDK only.
//
// Gorilla-style XOR delta: element k is stored as the XOR of its bits with
// element k-1's bits (element 0 as itself). Neighbours that share their
// high bits (slowly varying floats, counters, timestamps) become words of
// mostly zero bits, which a compressor after it (snappy, zstd) packs far
// better. Decoding XORs the running result back in.
//
// Config: {"type": "xordelta", "dtype": "<f8"}; "dtype" (a numpy typestr of
// size 1, 2, 4 or 8) is optional and defaults to the chunk's, as numcodecs'
// delta does. It only fixes the element size: XOR works on bits, so the
// kind and byte order change nothing (XORing two big-endian words byte by
// byte is XORing them), and no byte is ever swapped.
//
// An array -> array codec differs from a bytes -> bytes one (snappy.cpp) in
// three places: its constructor also gets the chunk it is applied to (an
// sdk::ChunkSpec: dtype and shape), it says what it encodes that chunk into
// (encoded()), and it is declared with STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN
// (stowage/array_codec.hpp). The host makes one instance per chunk spec;
// encode and decode always get one whole chunk.
#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cstdint>
#include <cstring>
#include <string>

namespace {

namespace sdk = stowage::sdk;

// The loop, for one element width. `encode` picks whether the previous
// element is the input's (encoding) or the output's (decoding).
template <class T>
void xor_delta(bool encode, const void* in, void* out, uint64_t count) {
  const auto* src = static_cast<const unsigned char*>(in);
  auto* dst = static_cast<unsigned char*>(out);
  T previous = 0;
  for (uint64_t k = 0; k < count; ++k) {
    T v;
    std::memcpy(&v, src + k * sizeof(T), sizeof(T));  // no alignment assumed
    const T r = static_cast<T>(v ^ previous);
    std::memcpy(dst + k * sizeof(T), &r, sizeof(T));
    previous = encode ? v : r;
  }
}

// The configuration for chunks of one spec: immutable once made and used by
// many threads at once. It needs no scratch state, so it declares no
// Context (see stowage/plugin.hpp for one that does).
class XorDelta {
 public:
  // Every parameter, declared once: the descriptor's schema and the checks
  // in CodecConfig (unknown keys, wrong types) both come from here.
  static const sdk::Params& params() {
    static const sdk::Params p = {sdk::Param::text("dtype")};
    return p;
  }

  // A bad config or a chunk it cannot take is the caller's error:
  // INVALID_ARGUMENT (sdk::invalid), naming the codec.
  XorDelta(const sdk::Host& host, std::string_view config_json, const sdk::ChunkSpec& chunk) {
    sdk::CodecConfig cfg(config_json, "xordelta", params());
    dtype_ = sdk::element_type(cfg, "dtype", chunk.dtype);  // default: the chunk's
    if (dtype_.size != 1 && dtype_.size != 2 && dtype_.size != 4 && dtype_.size != 8)
      sdk::invalid("xordelta: \"dtype\" \"" + dtype_.typestr() +
                   "\" is not 1, 2, 4 or 8 bytes wide");
    // Like numpy's view(dtype): the chunk must be whole elements of it
    // (else INVALID_ARGUMENT naming the codec).
    count_ = sdk::count_as(chunk, dtype_, "xordelta");
    // What it encodes into: the same bits as unsigned integers of that
    // width and byte order (no longer the chunk's values), in the chunk's
    // shape when the element size is the chunk's, else flat.
    sdk::ElementType bits = dtype_;
    bits.kind = 'u';
    encoded_ = sdk::stored_chunk(chunk, dtype_, bits);
    canonical_ = cfg.canonical();
    // The host of the registry creating this codec (never a global one).
    host.log(STOWAGE_LOG_DEBUG, "xordelta: " + std::to_string(count_) + " elements of " +
                                    std::to_string(dtype_.size) + " bytes");
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  // The encoded chunk's size: the same as the decoded one's.
  uint64_t bound(uint64_t) const { return count_ * dtype_.size; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    // Wrong input to encode is the caller's (INVALID_ARGUMENT), as is too
    // small an output buffer.
    sdk::check_call("xordelta", false, n, count_ * dtype_.size, capacity, count_ * dtype_.size);
    return run(true, in, out);
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    // Wrong input to decode is the stored data's: CORRUPT.
    sdk::check_call("xordelta", true, n, count_ * dtype_.size, capacity, count_ * dtype_.size);
    return run(false, in, out);
  }

 private:
  size_t run(bool encode, const void* in, void* out) const {
    switch (dtype_.size) {
      case 1:
        xor_delta<uint8_t>(encode, in, out, count_);
        break;
      case 2:
        xor_delta<uint16_t>(encode, in, out, count_);
        break;
      case 4:
        xor_delta<uint32_t>(encode, in, out, count_);
        break;
      default:
        xor_delta<uint64_t>(encode, in, out, count_);
    }
    return count_ * dtype_.size;
  }

  sdk::ElementType dtype_;
  uint64_t count_ = 0;
  sdk::ChunkSpec encoded_;
  std::string canonical_;
};

}  // namespace

// The C descriptor (kind "codec.array") and exception-safe trampolines. It
// declares no names(), so Zarr knows it by its id: numcodecs filter
// {"id": "xordelta"} in a .zarray, "xordelta" or "numcodecs.xordelta"
// before "bytes" in a zarr.json.
STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(XorDelta, "xordelta", "1.0.0",
                                  "XOR of each element's bits with the previous element's "
                                  "(array -> array; example third-party codec)",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
