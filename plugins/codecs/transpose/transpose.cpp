// Codec "transpose": Zarr v3's transpose codec, an array -> array codec.
//
//   {"type": "transpose", "order": [2, 0, 1]}
//
// Encoding stores the chunk as numpy's transpose(chunk, order): dimension i
// of the stored chunk is dimension order[i] of the array's. Decoding puts it
// back. "order" is a permutation of the chunk's dimensions; "C" (the
// identity) and "F" (the reversal), which drafts of the spec and zarrita
// accept, are read as those lists. The Zarr plugin reads a first transpose
// that is C or F order itself (its chunks' layout, no copy); this codec does
// every other permutation (zarr-specs docs/v3/codecs/transpose).
#include <stowage/array_codec.hpp>
#include <stowage/codec_config.hpp>
#include <stowage/plugin_json.hpp>
#include <stowage/plugin.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace {

namespace sdk = stowage::sdk;
using json = nlohmann::json;

// Copies `in` into `out` in C order over `shape`, the element at out's
// multi-index j taken from in's offset sum(j[d] * stride[d]) elements.
// Not inlined, with the element size fixed where it is common, so the inner
// loop is a strided load and a contiguous store.
template <size_t kSize>
[[gnu::noinline]] void gather(const uint8_t* in, uint8_t* out, const std::vector<uint64_t>& shape,
                              const std::vector<uint64_t>& stride, size_t size) {
  const size_t n = kSize ? kSize : size;
  const size_t nd = shape.size();
  if (nd == 0) return static_cast<void>(std::memcpy(out, in, n));
  for (uint64_t e : shape)
    if (e == 0) return;
  const uint64_t inner = shape[nd - 1], step = stride[nd - 1] * n;
  std::vector<uint64_t> at(nd, 0);
  uint64_t base = 0;  // in's byte offset of at[0..nd-2], at[nd-1] = 0
  for (;;) {
    const uint8_t* src = in + base;
    for (uint64_t k = 0; k < inner; ++k, src += step, out += n) std::memcpy(out, src, n);
    size_t d = nd - 1;
    for (; d-- > 0;) {
      base += stride[d] * n;
      if (++at[d] < shape[d]) break;
      base -= stride[d] * n * at[d];
      at[d] = 0;
    }
    if (d == size_t(-1)) return;
  }
}

// C-order strides (elements) of `shape`.
std::vector<uint64_t> strides(const std::vector<uint64_t>& shape) {
  std::vector<uint64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// "order" as a permutation of `ndim` dimensions; INVALID_ARGUMENT otherwise.
std::vector<uint64_t> permutation(const json& order, size_t ndim) {
  std::vector<uint64_t> p(ndim);
  if (order == "C" || order == "F") {
    for (size_t d = 0; d < ndim; ++d) p[d] = order == "C" ? d : ndim - 1 - d;
    return p;
  }
  const std::string bad = "transpose: \"order\" " + order.dump() +
                          " is no permutation of the chunk's " + std::to_string(ndim) +
                          " dimensions";
  if (!order.is_array() || order.size() != ndim) sdk::invalid(bad);
  std::vector<bool> seen(ndim, false);
  for (size_t d = 0; d < ndim; ++d) {
    if (!order[d].is_number_unsigned() || order[d].get<uint64_t>() >= ndim ||
        seen[order[d].get<uint64_t>()])
      sdk::invalid(bad);
    p[d] = order[d].get<uint64_t>();
    seen[p[d]] = true;
  }
  return p;
}

class Transpose {
 public:
  static const char* names() { return R"({"zarr3": ["transpose"]})"; }
  static const sdk::Params& params() {
    static const sdk::Params p = {};  // "order" is a list: read from the JSON itself
    return p;
  }

  Transpose(const sdk::Host&, std::string_view config_json, const sdk::ChunkSpec& chunk)
      : decoded_(chunk) {
    json config = sdk::parse_json_object<json>(config_json, "transpose: the configuration");
    if (!config.contains("order")) sdk::invalid("transpose: \"order\" is required");
    order_ = permutation(config["order"], chunk.shape.size());
    config["type"] = "transpose";
    config["order"] = order_;
    canonical_ = config.dump();
    encoded_ = chunk;
    for (size_t i = 0; i < order_.size(); ++i) encoded_.shape[i] = chunk.shape[order_[i]];
    // Encoding walks the stored chunk in order, reading the array's chunk
    // with its strides permuted; decoding walks the array's chunk, reading
    // the stored one at the inverse permutation.
    const std::vector<uint64_t> d_stride = strides(chunk.shape), e_stride = strides(encoded_.shape);
    encode_stride_.resize(order_.size());
    decode_stride_.resize(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) {
      encode_stride_[i] = d_stride[order_[i]];
      decode_stride_[order_[i]] = e_stride[i];
    }
  }
  std::string canonical_config() const { return canonical_; }
  sdk::ChunkSpec encoded() const { return encoded_; }
  uint64_t bound(uint64_t) const { return decoded_.bytes(); }

  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    return run(in, n, out, capacity, false);
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    return run(in, n, out, capacity, true);
  }

 private:
  size_t run(const void* in, size_t n, void* out, size_t capacity, bool undo) const {
    const uint64_t bytes = decoded_.bytes();
    sdk::check_call("transpose", undo, n, bytes, capacity, bytes);
    auto* src = static_cast<const uint8_t*>(in);
    auto* dst = static_cast<uint8_t*>(out);
    const std::vector<uint64_t>& shape = undo ? decoded_.shape : encoded_.shape;
    const std::vector<uint64_t>& stride = undo ? decode_stride_ : encode_stride_;
    switch (const size_t size = decoded_.dtype.size) {
      case 1:
        return gather<1>(src, dst, shape, stride, size), bytes;
      case 2:
        return gather<2>(src, dst, shape, stride, size), bytes;
      case 4:
        return gather<4>(src, dst, shape, stride, size), bytes;
      case 8:
        return gather<8>(src, dst, shape, stride, size), bytes;
      default:
        return gather<0>(src, dst, shape, stride, size), bytes;
    }
  }

  sdk::ChunkSpec decoded_, encoded_;
  std::vector<uint64_t> order_, encode_stride_, decode_stride_;
  std::string canonical_;
};

}  // namespace

STOWAGE_DEFINE_ARRAY_CODEC_PLUGIN(Transpose, "transpose", "1.0.0",
                                  "Zarr v3 transpose (array -> array): chunks stored with "
                                  "their dimensions permuted",
                                  STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
