#include "filters.hpp"

#include <stowage/plugin.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::unsupported;

// ---- one element, numpy's casts -----------------------------------------------

namespace {

// An element's value: a float as double, an integer as its 64-bit two's
// complement (sign-extended for signed types, so wrapping is truncation).
struct Num {
  bool fp = false;
  bool is_signed = false;
  double f = 0;
  uint64_t i = 0;
};

uint64_t load_bits(const uint8_t* p, const DataType& t) {
  uint8_t b[8] = {};
  std::memcpy(b, p, t.size);
  if (t.big_endian == sdk::host_is_little_endian()) std::reverse(b, b + t.size);  // to host order
  uint64_t v = 0;
  if (t.size == 1)
    v = b[0];
  else if (t.size == 2) {
    uint16_t x;
    std::memcpy(&x, b, 2);
    v = x;
  } else if (t.size == 4) {
    uint32_t x;
    std::memcpy(&x, b, 4);
    v = x;
  } else
    std::memcpy(&v, b, 8);
  return v;
}

void store_bits(uint8_t* p, const DataType& t, uint64_t v) {
  uint8_t b[8];
  if (t.size == 1)
    b[0] = uint8_t(v);
  else if (t.size == 2) {
    uint16_t x = uint16_t(v);
    std::memcpy(b, &x, 2);
  } else if (t.size == 4) {
    uint32_t x = uint32_t(v);
    std::memcpy(b, &x, 4);
  } else
    std::memcpy(b, &v, 8);
  if (t.big_endian == sdk::host_is_little_endian()) std::reverse(b, b + t.size);
  std::memcpy(p, b, t.size);
}

// Truncates bits to the type's width, sign-extending signed types.
uint64_t wrap(uint64_t v, const DataType& t) {
  if (t.size == 8) return v;
  const int bits = int(8 * t.size);
  v &= (uint64_t(1) << bits) - 1;
  if (t.kind == 'i' && (v >> (bits - 1))) v |= ~uint64_t(0) << bits;
  return v;
}

Num load(const uint8_t* p, const DataType& t) {
  const uint64_t bits = load_bits(p, t);
  Num n;
  if (t.kind == 'f') {
    n.fp = true;
    if (t.size == 4) {
      float x;
      uint32_t b32 = uint32_t(bits);
      std::memcpy(&x, &b32, 4);
      n.f = x;
    } else {
      std::memcpy(&n.f, &bits, 8);
    }
    return n;
  }
  n.is_signed = t.kind == 'i';
  n.i = t.kind == 'b' ? uint64_t(bits != 0) : wrap(bits, t);
  return n;
}

// A float to an integer as x86's conversion (numpy's C cast) gives it: in
// range truncated toward zero, else the "integer indefinite" 2^63.
uint64_t float_to_bits(double f, bool to_unsigned64) {
  if (std::isnan(f)) return uint64_t(1) << 63;
  if (to_unsigned64 && f >= 9223372036854775808.0 && f < 18446744073709551616.0)
    return static_cast<uint64_t>(f);
  if (f < -9223372036854775808.0 || f >= 9223372036854775808.0) return uint64_t(1) << 63;
  return static_cast<uint64_t>(static_cast<int64_t>(f));
}

// `v` cast to type `t`, as numpy's astype does (floats: one rounding from
// the source value; integers: wrapped; bool: non-zero).
Num cast(const Num& v, const DataType& t) {
  Num n;
  if (t.kind == 'f') {
    n.fp = true;
    if (t.size == 4)
      n.f = v.fp          ? static_cast<float>(v.f)
            : v.is_signed ? static_cast<float>(int64_t(v.i))
                          : static_cast<float>(v.i);
    else
      n.f = v.fp ? v.f : v.is_signed ? static_cast<double>(int64_t(v.i)) : static_cast<double>(v.i);
    return n;
  }
  n.is_signed = t.kind == 'i';
  if (t.kind == 'b')
    n.i = v.fp ? v.f != 0 : v.i != 0;
  else
    n.i = wrap(v.fp ? float_to_bits(v.f, t.kind == 'u' && t.size == 8) : v.i, t);
  return n;
}

// Stores `v`, already of type `t`.
void store(uint8_t* p, const DataType& t, const Num& v) {
  if (t.kind != 'f') return store_bits(p, t, v.i);
  if (t.size == 4) {
    const float x = static_cast<float>(v.f);
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return store_bits(p, t, b);
  }
  uint64_t b;
  std::memcpy(&b, &v.f, 8);
  store_bits(p, t, b);
}

// a + sign * b in type `t` (both of it): floats round to t, integers wrap.
Num add(const Num& a, const Num& b, int sign, const DataType& t) {
  Num n = a;
  if (t.kind == 'f')
    n.f = t.size == 4 ? double(float(a.f) + float(sign * b.f)) : a.f + sign * b.f;
  else
    n.i = wrap(sign > 0 ? a.i + b.i : a.i - b.i, t);
  return n;
}

// ---- the three filters ---------------------------------------------------------

// The common case, a delta stored in its own type in the host's byte
// order, as a typed loop: ~10x the element-by-element path (64 MiB of
// uint16: 0.05 s instead of 0.45 s). Integers sum as unsigned: wrapping.
bool native(const DataType& t) {
  return t.size == 1 || t.big_endian != sdk::host_is_little_endian();
}

template <class T>
void delta_typed(bool decode, const uint8_t* in, uint8_t* out, uint64_t count) {
  T previous = 0;
  for (uint64_t k = 0; k < count; ++k) {
    T v;
    std::memcpy(&v, in + k * sizeof(T), sizeof(T));
    const T result = decode ? T(previous + v) : T(v - previous);
    std::memcpy(out + k * sizeof(T), &result, sizeof(T));
    previous = decode ? result : v;
  }
}

bool delta_fast(const Filter& f, bool decode, const uint8_t* in, uint8_t* out, uint64_t bytes) {
  if (f.decoded.typestr != f.encoded.typestr || !native(f.decoded)) return false;
  const uint64_t n = bytes / f.decoded.size;
  if (f.decoded.kind == 'f') {
    if (f.decoded.size == 4)
      delta_typed<float>(decode, in, out, n);
    else
      delta_typed<double>(decode, in, out, n);
    return true;
  }
  switch (f.decoded.size) {
    case 1:
      delta_typed<uint8_t>(decode, in, out, n);
      return true;
    case 2:
      delta_typed<uint16_t>(decode, in, out, n);
      return true;
    case 4:
      delta_typed<uint32_t>(decode, in, out, n);
      return true;
    case 8:
      delta_typed<uint64_t>(decode, in, out, n);
      return true;
  }
  return false;
}

// numcodecs.Delta.decode: np.cumsum(enc.view(astype), out=dec of dtype), so
// the sum runs in dtype, each element first cast to it.
void delta_decode(const Filter& f, const uint8_t* in, uint8_t* out, uint64_t count) {
  Num sum = cast(Num{}, f.decoded);
  for (uint64_t k = 0; k < count; ++k) {
    sum = add(sum, cast(load(in + k * f.encoded.size, f.encoded), f.decoded), 1, f.decoded);
    store(out + k * f.decoded.size, f.decoded, sum);
  }
}

// numcodecs.Delta.encode: enc[0] = x[0], enc[1:] = np.diff(x) (in dtype), cast to astype.
void delta_encode(const Filter& f, const uint8_t* in, uint8_t* out, uint64_t count) {
  Num previous = cast(Num{}, f.decoded);
  for (uint64_t k = 0; k < count; ++k) {
    const Num x = load(in + k * f.decoded.size, f.decoded);
    store(out + k * f.encoded.size, f.encoded, cast(add(x, previous, -1, f.decoded), f.encoded));
    previous = x;
  }
}

void astype_convert(const DataType& from, const DataType& to, const uint8_t* in, uint8_t* out,
                    uint64_t count) {
  for (uint64_t k = 0; k < count; ++k)
    store(out + k * to.size, to, cast(load(in + k * from.size, from), to));
}

// numcodecs' _doShuffle / _doUnshuffle: byte k of element i sits at k*count + i.
void shuffle(const uint8_t* in, uint8_t* out, uint64_t bytes, size_t size, bool undo) {
  if (size <= 1) return static_cast<void>(std::memcpy(out, in, bytes));
  const uint64_t count = bytes / size;
  for (uint64_t i = 0; i < count; ++i)
    for (size_t k = 0; k < size; ++k) {
      if (undo)
        out[i * size + k] = in[k * count + i];
      else
        out[k * count + i] = in[i * size + k];
    }
}

// Filter `f` one way over a chunk: `in_bytes` of its input side.
void apply(const Filter& f, bool decode, const uint8_t* in, uint8_t* out, uint64_t in_bytes) {
  switch (f.id) {
    case Filter::Id::shuffle:
      return shuffle(in, out, in_bytes, f.element_size, decode);
    case Filter::Id::delta:
      if (delta_fast(f, decode, in, out, in_bytes)) return;
      return decode ? delta_decode(f, in, out, in_bytes / f.encoded.size)
                    : delta_encode(f, in, out, in_bytes / f.decoded.size);
    case Filter::Id::astype:
      return decode ? astype_convert(f.encoded, f.decoded, in, out, in_bytes / f.encoded.size)
                    : astype_convert(f.decoded, f.encoded, in, out, in_bytes / f.decoded.size);
  }
}

// ---- parsing -------------------------------------------------------------------

DataType filter_type(const json& config, const char* key, const std::string& where, bool required,
                     const DataType* otherwise) {
  if (!config.contains(key) || config[key].is_null()) {
    if (!required && otherwise) return *otherwise;
    corrupt(where + " has no \"" + key + "\"");
  }
  const DataType t = parse_data_type(config[key], where + " \"" + key + "\"");
  if (t.kind == 'c' || (t.kind == 'f' && t.size == 2))  // the filters' arithmetic has neither
    unsupported(where + " \"" + key + "\": \"dtype\" \"" + t.typestr +
                "\" is not supported (the filters take integers, float32 and float64)");
  return t;
}

Filter parse_filter(const json& config, const std::string& file) {
  if (!config.is_object() || !config.contains("id") || !config["id"].is_string())
    corrupt(file + ": each of \"filters\" must be an object with a string \"id\", got " +
            config.dump());
  const std::string id = config["id"];
  const std::string where = file + ": filter \"" + id + "\"";
  Filter f{};
  if (id == "shuffle") {
    f.id = Filter::Id::shuffle;
    const json size = config.value("elementsize", json(4));  // numcodecs' default
    if (!size.is_number_integer() || size.get<int64_t>() < 0 || size.get<int64_t>() > 1024)
      corrupt(where + ": \"elementsize\" must be an integer in 0..1024, got " + size.dump());
    f.element_size = size.get<size_t>();
  } else if (id == "delta") {
    f.id = Filter::Id::delta;
    f.decoded = filter_type(config, "dtype", where, true, nullptr);
    f.encoded = filter_type(config, "astype", where, false, &f.decoded);
    if (f.decoded.kind == 'b' || f.encoded.kind == 'b')
      unsupported(where + ": a delta of bools is not supported");
  } else if (id == "astype") {
    f.id = Filter::Id::astype;
    f.encoded = filter_type(config, "encode_dtype", where, true, nullptr);
    f.decoded = filter_type(config, "decode_dtype", where, true, nullptr);
  } else {
    unsupported(file + ": filter \"" + id + "\" is not supported (delta, shuffle and astype are)");
  }
  return f;
}

}  // namespace

std::shared_ptr<const FilterChain> parse_filters(const json& filters, uint64_t chunk_bytes,
                                                 const std::string& file) {
  if (filters.is_null() || (filters.is_array() && filters.empty())) return nullptr;
  if (!filters.is_array())
    corrupt(file + ": \"filters\" must be null or a list, got " + filters.dump());
  auto chain = std::make_shared<FilterChain>();
  uint64_t bytes = chunk_bytes;
  chain->bytes.push_back(bytes);
  for (const json& config : filters) {
    Filter f = parse_filter(config, file);
    // The element size a filter views its input as must divide it, as
    // numpy's view() requires; a filter that grows a chunk (astype to a
    // wider type) must keep it decodable in memory.
    const size_t in_size =
        f.id == Filter::Id::shuffle ? std::max<size_t>(f.element_size, 1) : f.decoded.size;
    if (bytes % in_size)
      corrupt(file + ": filter " + config.dump() + " views a chunk of " + std::to_string(bytes) +
              " bytes as " + std::to_string(in_size) + "-byte elements");
    if (f.id != Filter::Id::shuffle) bytes = bytes / f.decoded.size * f.encoded.size;
    // At most one widening from 1-byte to 8-byte elements: a chain that
    // grows a chunk more would make a small array cost gigabytes to read.
    if (bytes > 8 * chunk_bytes || bytes > kMaxChunkBytes)
      unsupported(file + ": filter " + config.dump() + " makes a chunk of " +
                  std::to_string(chunk_bytes) + " bytes " + std::to_string(bytes) +
                  " bytes long (at most 8 times as long and 2 GiB)");
    chain->filters.push_back(f);
    chain->bytes.push_back(bytes);
  }
  return chain;
}

void decode_filters(const FilterChain& chain, const uint8_t* in, uint8_t* out,
                    sdk::BufferPool& scratch) {
  std::vector<sdk::BufferPool::Lease>
      steps;  // each intermediate result, alive until the next has used it
  const uint8_t* from = in;
  for (size_t i = chain.filters.size(); i-- > 0;) {
    uint8_t* to = out;
    if (i > 0) to = steps.emplace_back(scratch.take(chain.bytes[i])).data();
    apply(chain.filters[i], true, from, to, chain.bytes[i + 1]);
    from = to;
  }
}

sdk::BufferPool::Lease encode_filters(const FilterChain& chain, const uint8_t* in,
                                      sdk::BufferPool& scratch) {
  std::vector<sdk::BufferPool::Lease> steps;
  const uint8_t* from = in;
  for (size_t i = 0; i < chain.filters.size(); ++i) {
    uint8_t* to = steps.emplace_back(scratch.take(chain.bytes[i + 1])).data();
    apply(chain.filters[i], false, from, to, chain.bytes[i]);
    from = to;
  }
  return std::move(steps.back());
}

}  // namespace zarr
