// Codec "shuffle": numcodecs' Shuffle filter, an array -> array codec.
//
//   {"type": "shuffle", "elementsize": 4}
//
// Byte k of element i goes to k*count + i (blosc's byte shuffle, without
// blosc), so the bytes of equal significance sit together for the
// compressor after it; elementsize <= 1 copies. numcodecs 0.11's semantics
// (numcodecs/shuffle.py, _shuffle.pyx).
#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cstring>
#include <string>

namespace {

namespace sdk = stowage::sdk;

// numcodecs' _doShuffle / _doUnshuffle. Not inlined: inlined into the
// trampoline, whose lambda holds the pointers by reference, every byte
// store may alias them and they are reloaded per byte.
// A size known at compile time (the common 2, 4 and 8) lets the compiler
// unroll the inner loop: ~1.6x.
template <size_t kSize>
[[gnu::noinline]] void shuffle_bytes(const uint8_t* in, uint8_t* out, uint64_t count, size_t size,
                                     bool undo) {
  const size_t n = kSize ? kSize : size;
  if (undo) {
    for (uint64_t i = 0; i < count; ++i)
      for (size_t k = 0; k < n; ++k) out[i * n + k] = in[k * count + i];
  } else {
    for (uint64_t i = 0; i < count; ++i)
      for (size_t k = 0; k < n; ++k) out[k * count + i] = in[i * n + k];
  }
}

class Shuffle {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.shuffle".
  static const char* names() { return R"({"numcodecs": ["shuffle"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {
        sdk::Param::integer("elementsize", 4, 0, 1024)};  // numcodecs' default
    return p;
  }

  Shuffle(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk)
      : chunk_(chunk) {
    sdk::CodecConfig cfg(config_json, "shuffle", params());
    size_ = static_cast<size_t>(cfg.integer("elementsize"));
    bytes_ = chunk.bytes();
    if (size_ > 1 && bytes_ % size_)
      sdk::invalid("shuffle: a chunk of " + std::to_string(bytes_) +
                   " bytes is no whole number of " + std::to_string(size_) + "-byte elements");
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return chunk_; }
  uint64_t bound(uint64_t) const { return bytes_; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    return run(in, n, out, capacity, false);
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    return run(in, n, out, capacity, true);
  }

 private:
  size_t run(const void* in, size_t n, void* out, size_t capacity, bool undo) const {
    sdk::check_call("shuffle", undo, n, bytes_, capacity, bytes_);
    if (size_ <= 1) return std::memcpy(out, in, bytes_), bytes_;
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    const uint64_t count = bytes_ / size_;
    switch (size_) {
      case 2:
        return shuffle_bytes<2>(src, dst, count, size_, undo), bytes_;
      case 4:
        return shuffle_bytes<4>(src, dst, count, size_, undo), bytes_;
      case 8:
        return shuffle_bytes<8>(src, dst, count, size_, undo), bytes_;
    }
    shuffle_bytes<0>(src, dst, count, size_, undo);
    return bytes_;
  }

  sdk::ChunkSpec chunk_;
  size_t size_ = 4;
  uint64_t bytes_ = 0;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(Shuffle, "shuffle", "1.0.0",
                                  "numcodecs shuffle (array -> array): bytes of equal "
                                  "significance together",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
