// Codec "astype": numcodecs' AsType filter, an array -> array codec.
//
//   {"type": "astype", "encode_dtype": "<f4", "decode_dtype": "<f8"}
//
// Each element, viewed as decode_dtype (default: the chunk's), is stored
// cast to encode_dtype and cast back on reading, as numpy's astype casts
// (floats truncate to integers, integers wrap): numcodecs 0.11's
// numcodecs/astype.py.
#include "../common/numeric.hpp"

#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <string>

namespace {

namespace sdk = stowage::sdk;
using namespace stowage_codecs;

void require_arithmetic(const sdk::ElementType& t, const char* key) {
  if (t.kind == 'c' || (t.kind == 'f' && t.size == 2))  // numeric.hpp has neither
    sdk::unsupported(std::string("astype: \"") + key + "\" \"" + t.typestr() +
                     "\" is not supported (bool, integers, float32 and float64 are)");
}

class AsType {
 public:
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
    require_arithmetic(decoded_, "decode_dtype");
    require_arithmetic(encoded_, "encode_dtype");
    if (chunk.bytes() % decoded_.size)
      sdk::invalid("astype: a chunk of " + std::to_string(chunk.bytes()) +
                   " bytes is no whole number of \"" + decoded_.typestr() + "\" elements");
    count_ = chunk.bytes() / decoded_.size;
    spec_.dtype = encoded_;
    spec_.shape = decoded_.size == chunk.dtype.size ? chunk.shape : std::vector<uint64_t>{count_};
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
    if (n != count_ * from.size) {
      const std::string why = std::string("astype ") + (decoding ? "decode" : "encode") + ": " +
                              std::to_string(n) + " bytes, a chunk is " +
                              std::to_string(count_ * from.size);
      decoding ? sdk::corrupt(why) : sdk::invalid(why);
    }
    if (capacity < count_ * to.size) sdk::invalid("astype: output buffer too small");
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
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
