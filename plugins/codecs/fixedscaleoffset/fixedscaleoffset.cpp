// Codec "fixedscaleoffset": numcodecs' FixedScaleOffset filter, an
// array -> array codec.
//
//   {"type": "fixedscaleoffset", "offset": 1000, "scale": 10, "dtype": "<f8", "astype": "|u1"}
//
// Encoding stores round((x - offset) * scale) as astype, decoding gives
// enc / scale + offset as dtype: numcodecs 0.11's numcodecs/fixedscaleoffset.py
// with numpy 1.24's arithmetic, whose types depend on the values of offset
// and scale (value-based casting, ../common/numeric.hpp: uint8 - 1000 is
// computed in uint16, float32 * 70000 in float64, int16 - 0.5 in float64),
// np.around rounding half to even and integers wrapping.
#include "../common/numeric.hpp"

#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <string>

namespace {

namespace sdk = stowage::sdk;
using namespace stowage_codecs;

// The config key `key` of `codec` as a Scalar; INVALID_ARGUMENT naming the
// key when it is absent or no number.
Scalar scalar(const nlohmann::json& config, const char* codec, const char* key) {
  if (!config.contains(key) || !config[key].is_number())
    sdk::invalid(std::string(codec) + ": \"" + key + "\" must be a number, got " +
                 (config.contains(key) ? config[key].dump() : std::string("nothing")));
  const nlohmann::json& j = config[key];
  Scalar s;
  s.is_int = !j.is_number_float();
  if (j.is_number_unsigned()) {
    s.i = j.get<uint64_t>();
    s.f = double(s.i);
  } else if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    s.i = uint64_t(v);
    s.negative = v < 0;
    s.f = double(v);
  } else {
    s.f = j.get<double>();
  }
  return s;
}

// a * b in type `t` (both of it): floats round to t, integers wrap.
Num mul(const Num& a, const Num& b, const sdk::ElementType& t) {
  Num n = a;
  if (t.kind == 'f')
    n.f = t.size == 4 ? double(float(a.f) * float(b.f)) : a.f * b.f;
  else
    n.i = wrap(a.i * b.i, t);
  return n;
}

// a / b in float type `t`.
Num div(const Num& a, const Num& b, const sdk::ElementType& t) {
  Num n = a;
  n.f = t.size == 4 ? double(float(a.f) / float(b.f)) : a.f / b.f;
  return n;
}

class FixedScaleOffset {
 public:
  // Zarr v3 has it as zarr-python 3 writes it: "numcodecs.fixedscaleoffset".
  static const char* names() { return R"({"numcodecs": ["fixedscaleoffset"]})"; }
  static const sdk::Params& params() {
    // offset and scale are numbers (int or float, which changes numpy's
    // arithmetic), read from the JSON as they are: sdk::Param has no number.
    static const sdk::Params p = {sdk::Param::text("dtype"), sdk::Param::text("astype")};
    return p;
  }

  FixedScaleOffset(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk) {
    sdk::CodecConfig cfg(config_json, "fixedscaleoffset", params());
    const nlohmann::json raw = nlohmann::json::parse(config_json);
    offset_ = scalar(raw, "fixedscaleoffset", "offset");
    scale_ = scalar(raw, "fixedscaleoffset", "scale");
    dtype_ = sdk::element_type(cfg, "dtype", chunk.dtype);
    astype_ = sdk::element_type(cfg, "astype", dtype_);
    require_arithmetic("fixedscaleoffset", dtype_, "dtype");
    require_arithmetic("fixedscaleoffset", astype_, "astype");
    count_ = sdk::count_as(chunk, dtype_, "fixedscaleoffset");
    // Encoding: (x - offset) in sub_, times scale in mul_.
    sub_ = result_type(dtype_, offset_);
    mul_ = result_type(sub_, scale_);
    // Decoding: enc / scale (true division: float64 for integers), + offset.
    div_ = result_type(astype_, scale_);
    if (div_.kind != 'f') div_ = element('f', 8);
    add_ = result_type(div_, offset_);
    encoded_ = sdk::stored_chunk(chunk, dtype_, astype_);
    canonical_ = cfg.canonical();
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  uint64_t bound(uint64_t) const { return count_ * astype_.size; }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("fixedscaleoffset", false, n, count_ * dtype_.size, capacity,
                    count_ * astype_.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    const Num offset = cast(offset_, sub_), scale = cast(scale_, mul_);
    for (uint64_t k = 0; k < count_; ++k) {
      const Num x = cast(load(src + k * dtype_.size, dtype_), sub_);
      Num v = mul(cast(add(x, offset, -1, sub_), mul_), scale, mul_);
      if (v.fp) v.f = std::nearbyint(v.f);  // np.around: half to even
      store(dst + k * astype_.size, astype_, cast(v, astype_));
    }
    return count_ * astype_.size;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    sdk::check_call("fixedscaleoffset", true, n, count_ * astype_.size, capacity,
                    count_ * dtype_.size);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    const Num scale = cast(scale_, div_), offset = cast(offset_, add_);
    for (uint64_t k = 0; k < count_; ++k) {
      const Num e = cast(load(src + k * astype_.size, astype_), div_);
      const Num v = add(cast(div(e, scale, div_), add_), offset, 1, add_);
      store(dst + k * dtype_.size, dtype_, cast(v, dtype_));
    }
    return count_ * dtype_.size;
  }

 private:
  Scalar offset_, scale_;
  sdk::ElementType dtype_, astype_, sub_, mul_, div_, add_;
  uint64_t count_ = 0;
  sdk::ChunkSpec encoded_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(FixedScaleOffset, "fixedscaleoffset", "1.0.0",
                                  "numcodecs fixedscaleoffset (array -> array): "
                                  "round((x - offset) * scale) stored as astype",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
