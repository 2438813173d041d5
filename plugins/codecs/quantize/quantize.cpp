// Codec "quantize": numcodecs' Quantize filter, an array -> array codec.
//
//   {"type": "quantize", "digits": 2, "dtype": "<f8", "astype": "<f4"}
//
// Encoding keeps about `digits` decimal digits of each float:
// np.around(scale * x) / scale with scale a power of two, stored as astype;
// decoding only casts back to dtype (the loss is not undone). numcodecs
// 0.11's numcodecs/quantize.py, its arithmetic copied step by step (Python's
// math.log(x, b) is log(x) / log(b)); `scale * x` is typed as numpy 1.24
// types a float array times a Python float (../common/numeric.hpp).
#include "../common/numeric.hpp"

#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <cmath>
#include <string>

namespace {

namespace sdk = stowage::sdk;
using namespace stowage_codecs;

void require_float(const sdk::ElementType& t, const char* key) {
  if (t.kind != 'f')  // numcodecs: "only floating point data types are supported"
    sdk::invalid(std::string("quantize: \"") + key + "\" \"" + t.typestr() +
                 "\": only floating point data types are supported");
  if (t.size == 2)  // numeric.hpp has no float16
    sdk::unsupported(std::string("quantize: \"") + key + "\" \"" + t.typestr() +
                     "\" is not supported (float32 and float64 are)");
}

class Quantize {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.quantize".
  static const char* names() { return R"({"numcodecs": ["quantize"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {sdk::Param::integer("digits", 0, -300, 300),
                                  sdk::Param::text("dtype"), sdk::Param::text("astype")};
    return p;
  }

  Quantize(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk) {
    sdk::CodecConfig cfg(config_json, "quantize", params());
    if (!cfg.has("digits")) sdk::invalid("quantize: \"digits\" is required");
    const int64_t digits = cfg.integer("digits");
    dtype_ = sdk::element_type(cfg, "dtype", chunk.dtype);
    astype_ = sdk::element_type(cfg, "astype", dtype_);
    require_float(dtype_, "dtype");
    require_float(astype_, "astype");
    count_ = sdk::count_as(chunk, dtype_, "quantize");

    // numcodecs' Quantize.encode, line by line.
    const double precision = std::pow(10.0, double(-digits));
    double exp = std::log(precision) / std::log(10.0);
    exp = exp < 0 ? std::floor(exp) : std::ceil(exp);
    const double bits = std::ceil(std::log(std::pow(10.0, -exp)) / std::log(2.0));
    scale_.f = std::pow(2.0, bits);
    if (!std::isfinite(scale_.f) || scale_.f == 0)
      sdk::invalid("quantize: \"digits\" " + std::to_string(digits) + " gives no finite scale");
    type_ = result_type(dtype_, scale_);  // of scale * x

    encoded_ = sdk::stored_chunk(chunk, dtype_, astype_);
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  uint64_t bound(uint64_t) const { return count_ * astype_.size; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("quantize", false, n, count_ * dtype_.size, capacity, count_ * astype_.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    const bool single = type_.size == 4;
    const float scale32 = float(scale_.f);
    for (uint64_t k = 0; k < count_; ++k) {
      Num v = cast(load(src + k * dtype_.size, dtype_), type_);
      if (single)
        v.f = double(float(std::nearbyint(double(scale32 * float(v.f)))) / scale32);
      else
        v.f = std::nearbyint(scale_.f * v.f) / scale_.f;
      store(dst + k * astype_.size, astype_, cast(v, astype_));
    }
    return count_ * astype_.size;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("quantize", true, n, count_ * astype_.size, capacity, count_ * dtype_.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    for (uint64_t k = 0; k < count_; ++k)
      store(dst + k * dtype_.size, dtype_, cast(load(src + k * astype_.size, astype_), dtype_));
    return count_ * dtype_.size;
  }

 private:
  Scalar scale_;  // a Python float
  sdk::ElementType dtype_, astype_, type_;
  uint64_t count_ = 0;
  sdk::ChunkSpec encoded_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(Quantize, "quantize", "1.0.0",
                                  "numcodecs quantize (array -> array): floats rounded to a "
                                  "power-of-two step near 10^-digits",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
