// Codec "astype": numcodecs' AsType filter, an array -> array codec.
//
//   {"type": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}
//
// Each element, viewed as decode_dtype (default: the chunk's), is stored
// cast to encode_dtype and cast back on reading, as numpy's astype casts
// (floats truncate to integers, integers wrap): numcodecs 0.11's
// numcodecs/astype.py. A typed loop when both types are in this machine's
// byte order.
#include "../common/numeric.hpp"

#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <string>

namespace {

namespace sdk = stowage::sdk;
using namespace stowage_codecs;

class AsType {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.astype".
  static const char* names() { return R"({"numcodecs": ["astype"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {sdk::Param::text("encode_dtype"),
                                  sdk::Param::text("decode_dtype")};
    return p;
  }

  AsType(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk) {
    sdk::CodecConfig cfg(config_json, "astype", params());
    if (!cfg.has("encode_dtype")) sdk::invalid("astype: \"encode_dtype\" is required");
    decoded_ = sdk::element_type(cfg, "decode_dtype", chunk.dtype);
    encoded_ = sdk::element_type(cfg, "encode_dtype", decoded_);
    require_arithmetic("astype", decoded_, "decode_dtype");
    require_arithmetic("astype", encoded_, "encode_dtype");
    count_ = sdk::count_as(chunk, decoded_, "astype");
    spec_ = sdk::stored_chunk(chunk, decoded_, encoded_);
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return spec_; }
  uint64_t bound(uint64_t) const { return count_ * encoded_.size; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    return convert(decoded_, encoded_, in, n, out, capacity, false);
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    return convert(encoded_, decoded_, in, n, out, capacity, true);
  }

 private:
  size_t convert(const sdk::ElementType& from, const sdk::ElementType& to, const void* in, size_t n,
                 void* out, size_t capacity, bool decoding) const {
    sdk::check_call("astype", decoding, n, count_ * from.size, capacity, count_ * to.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    if (!cast_native(from, to, src, dst, count_))  // else element by element, any byte order
      for (uint64_t k = 0; k < count_; ++k)
        store(dst + k * to.size, to, cast(load(src + k * from.size, from), to));
    return count_ * to.size;
  }

  sdk::ElementType decoded_, encoded_;
  uint64_t count_ = 0;
  sdk::ChunkSpec spec_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(AsType, "astype", "1.0.0",
                                  "numcodecs astype (array -> array): elements stored cast to "
                                  "encode_dtype",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
