// Codec "delta": numcodecs' Delta filter, an array -> array codec.
//
//   {"type": "delta", "dtype": "<i4", "astype": "<i2"}
//
// Encoding views the chunk as `dtype` (default: the chunk's) and stores
// x[0], x[1]-x[0], ... computed in dtype and cast to `astype` (default:
// dtype); decoding is numpy's cumsum in dtype of the elements cast back.
// numcodecs 0.11's semantics (numcodecs/delta.py): integers wrap, floats
// round in their type.
#include "../common/numeric.hpp"

#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cstring>
#include <string>

namespace {

namespace sdk = stowage::sdk;
using namespace stowage_codecs;

// The common case, stored in its own type in the host's byte order, as a
// typed loop (~10x the element-by-element path); integers sum as unsigned.
// Not inlined: inlined into the trampoline, whose lambda holds `in` and
// `out` by reference, every byte store may alias them and they are reloaded
// per element (a third slower).
template <class T>
[[gnu::noinline]] void delta_typed(bool decode, const uint8_t* in, uint8_t* out, uint64_t count) {
  T previous = 0;
  for (uint64_t k = 0; k < count; ++k) {
    T v;
    std::memcpy(&v, in + k * sizeof(T), sizeof(T));
    const T result = decode ? T(previous + v) : T(v - previous);
    std::memcpy(out + k * sizeof(T), &result, sizeof(T));
    previous = decode ? result : v;
  }
}

class Delta {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.delta".
  static const char* names() { return R"({"numcodecs": ["delta"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {sdk::Param::text("dtype"), sdk::Param::text("astype")};
    return p;
  }

  Delta(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk) {
    sdk::CodecConfig cfg(config_json, "delta", params());
    dtype_ = sdk::element_type(cfg, "dtype", chunk.dtype);
    astype_ = sdk::element_type(cfg, "astype", dtype_);
    require_arithmetic("delta", dtype_, "dtype", false);
    require_arithmetic("delta", astype_, "astype", false);
    count_ = sdk::count_as(chunk, dtype_, "delta");
    encoded_ = sdk::stored_chunk(chunk, dtype_, astype_);
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  uint64_t bound(uint64_t) const { return count_ * astype_.size; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("delta", false, n, count_ * dtype_.size, capacity, count_ * astype_.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (!fast(false, src, dst)) {
      Num previous = cast(Num{}, dtype_);
      for (uint64_t k = 0; k < count_; ++k) {
        const Num x = load(src + k * dtype_.size, dtype_);
        store(dst + k * astype_.size, astype_, cast(add(x, previous, -1, dtype_), astype_));
        previous = x;
      }
    }
    return count_ * astype_.size;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("delta", true, n, count_ * astype_.size, capacity, count_ * dtype_.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (!fast(true, src, dst)) {
      Num sum = cast(Num{}, dtype_);
      for (uint64_t k = 0; k < count_; ++k) {
        sum = add(sum, cast(load(src + k * astype_.size, astype_), dtype_), 1, dtype_);
        store(dst + k * dtype_.size, dtype_, sum);
      }
    }
    return count_ * dtype_.size;
  }

 private:
  bool fast(bool decode, const uint8_t* in, uint8_t* out) const {
    if (!(dtype_ == astype_) || !dtype_.native()) return false;
    if (dtype_.kind == 'f') {
      dtype_.size == 4 ? delta_typed<float>(decode, in, out, count_)
                       : delta_typed<double>(decode, in, out, count_);
      return true;
    }
    switch (dtype_.size) {
      case 1:
        return delta_typed<uint8_t>(decode, in, out, count_), true;
      case 2:
        return delta_typed<uint16_t>(decode, in, out, count_), true;
      case 4:
        return delta_typed<uint32_t>(decode, in, out, count_), true;
      default:
        return delta_typed<uint64_t>(decode, in, out, count_), true;
    }
  }

  sdk::ElementType dtype_, astype_;
  uint64_t count_ = 0;
  sdk::ChunkSpec encoded_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(Delta, "delta", "1.0.0",
                                  "numcodecs delta (array -> array): differences of consecutive "
                                  "elements in dtype, stored as astype",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
