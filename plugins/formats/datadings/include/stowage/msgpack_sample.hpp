// stowage/msgpack_sample.hpp -- a datadings sample (msgpack bytes, as
// Records::read returns them) decoded into a value a C++ program can walk.
//
//   stowage::sample::Value s = stowage::sample::decode(records.read(i));
//   std::string key = s["key"].as_string();
//   const stowage::sample::NdArray& img = s["image"].as_ndarray();
//   img.dtype            // "|u1", "<f4", ">i8" ... exactly as stored
//   img.shape            // C order
//   img.values<uint8_t>()  // the elements in host byte order
//
// Decoding follows Python's msgpack (raw=False, strict_map_key=False) with
// msgpack_numpy.decode applied to every map, innermost first:
//   - a map with the bin key "nd" whose value is true -> Type::ndarray
//     (dtype, shape, raw C-order bytes in the stored byte order);
//     any other "nd" value -> Type::numpy_scalar (same struct, shape empty);
//   - a map with the bin key "complex" and a str "data" -> Type::complex,
//     parsed from Python's repr ("(1.5-2.25j)", "2j", "(nan+infj)");
//   - a map lacking one of the fields msgpack-numpy needs stays a map, as in
//     Python; pickled object arrays (kind "O") stay maps too (they are
//     Python-only).
// Map order and non-string map keys are kept. Errors are stowage::sdk::Error
// (stowage/plugin.hpp), code STOWAGE_CORRUPT for bytes that are no sample.
//
// Header-only, on the SDK headers alone (no library of ours to link); needs
// msgpack-cxx (Debian: libmsgpack-cxx-dev).
#ifndef STOWAGE_MSGPACK_SAMPLE_HPP
#define STOWAGE_MSGPACK_SAMPLE_HPP

#include <stowage/plugin.hpp>  // sdk::Error: this header needs no library of ours

#include <msgpack.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace stowage::sample {

enum class Type : uint8_t {
  nil,
  boolean,
  int64,
  uint64,
  float32,
  float64,
  string,
  bytes,
  array,
  map,
  ext,
  ndarray,       // msgpack-numpy array
  numpy_scalar,  // msgpack-numpy scalar (np.float32(1), np.int64(2), ...)
  complex,       // a Python complex
};

inline const char* type_name(Type t) {
  static const char* const names[] = {"nil",     "bool",    "int",          "uint",   "float32",
                                      "float64", "str",     "bytes",        "array",  "map",
                                      "ext",     "ndarray", "numpy scalar", "complex"};
  return names[static_cast<int>(t)];
}

[[noreturn]] inline void decode_error(const std::string& what) {
  throw sdk::Error(STOWAGE_CORRUPT, "msgpack sample: " + what);
}

// One field of a structured dtype (numpy descr entry).
struct Field {
  std::string name;
  std::string dtype;            // type string of one element, e.g. "<i4"
  std::vector<uint64_t> shape;  // sub-array shape, empty for a plain field
  size_t offset = 0;            // byte offset inside a record
  size_t itemsize = 0;          // bytes of the whole field (sub-array included)
};

// A numpy array (or scalar) exactly as msgpack-numpy stored it.
struct NdArray {
  std::string dtype;  // type string as stored ("<f4", ">i8", "|b1", "<U3"); "|V<n>" for structured
  char byte_order = '|';        // '<' little, '>' big, '|' not applicable
  char kind = 0;                // numpy kind: b i u f c S U V
  size_t itemsize = 0;          // bytes per element
  std::vector<uint64_t> shape;  // C order; empty for 0-d arrays and scalars
  std::string data;             // element bytes, C order, in byte_order
  std::vector<Field> fields;    // kind 'V' only

  uint64_t size() const {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    return n;
  }
  bool big_endian() const { return byte_order == '>'; }
  // Whether the stored bytes differ from the host's order (multi-byte only).
  bool needs_swap() const {
    bool host_little = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
    return itemsize > 1 && kind != 'S' && kind != 'V' &&
           ((byte_order == '>' && host_little) || (byte_order == '<' && !host_little));
  }

  // The elements as T in host byte order. T must match the dtype exactly:
  // bool for b1, intN_t for iN, uintN_t for uN, float/double for f4/f8,
  // std::complex<float/double> for c8/c16.
  template <class T>
  std::vector<T> values() const {
    check_element_type<T>();
    std::vector<T> out(size());
    if constexpr (std::is_same_v<T, bool>) {  // vector<bool> is packed
      for (size_t i = 0; i < out.size(); ++i) out[i] = data[i] != 0;
    } else {
      if (!out.empty()) std::memcpy(out.data(), data.data(), data.size());
      if (needs_swap()) swap_elements(out.data(), out.size() * sizeof(T));
    }
    return out;
  }

  // Any bool, integer or float (f2 included) element converted to double.
  std::vector<double> to_doubles() const {
    std::vector<double> out(size());
    for (size_t i = 0; i < out.size(); ++i) out[i] = element_as_double(i);
    return out;
  }

 private:
  template <class T>
  void check_element_type() const {
    char want;
    if constexpr (std::is_same_v<T, bool>)
      want = 'b';
    else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>)
      want = 'c';
    else if constexpr (std::is_floating_point_v<T>)
      want = 'f';
    else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      want = 'i';
    else if constexpr (std::is_integral_v<T>)
      want = 'u';
    else
      want = '?';
    if (want != kind || sizeof(T) != itemsize)
      throw sdk::Error(STOWAGE_INVALID_ARGUMENT,
                       "msgpack sample: an array of dtype " + dtype + " cannot be read as a " +
                           std::to_string(sizeof(T)) + "-byte '" + std::string(1, want) + "' type");
  }
  // Swaps each scalar of the buffer (complex numbers are two scalars).
  void swap_elements(void* p, size_t bytes) const {
    size_t width = kind == 'c' ? itemsize / 2 : itemsize;
    auto* b = static_cast<unsigned char*>(p);
    for (size_t at = 0; at + width <= bytes; at += width)
      for (size_t i = 0; i < width / 2; ++i) std::swap(b[at + i], b[at + width - 1 - i]);
  }
  template <class T>
  T load(size_t i) const {
    T v;
    unsigned char b[sizeof(T)];
    std::memcpy(b, data.data() + i * sizeof(T), sizeof(T));
    if (needs_swap())
      for (size_t k = 0; k < sizeof(T) / 2; ++k) std::swap(b[k], b[sizeof(T) - 1 - k]);
    std::memcpy(&v, b, sizeof(T));
    return v;
  }
  static double half_to_double(uint16_t h) {
    int exponent = (h >> 10) & 0x1f;
    double mantissa = h & 0x3ff;
    double v = exponent == 0    ? std::ldexp(mantissa, -24)
               : exponent == 31 ? (mantissa ? std::numeric_limits<double>::quiet_NaN()
                                            : std::numeric_limits<double>::infinity())
                                : std::ldexp(mantissa + 1024, exponent - 25);
    return (h & 0x8000) ? -v : v;
  }
  double element_as_double(size_t i) const {
    switch (kind) {
      case 'b':
        return data[i] != 0;
      case 'i':
        switch (itemsize) {
          case 1:
            return load<int8_t>(i);
          case 2:
            return load<int16_t>(i);
          case 4:
            return load<int32_t>(i);
          case 8:
            return static_cast<double>(load<int64_t>(i));
        }
        break;
      case 'u':
        switch (itemsize) {
          case 1:
            return load<uint8_t>(i);
          case 2:
            return load<uint16_t>(i);
          case 4:
            return load<uint32_t>(i);
          case 8:
            return static_cast<double>(load<uint64_t>(i));
        }
        break;
      case 'f':
        switch (itemsize) {
          case 2:
            return half_to_double(load<uint16_t>(i));
          case 4:
            return load<float>(i);
          case 8:
            return load<double>(i);
        }
        break;
    }
    throw sdk::Error(STOWAGE_INVALID_ARGUMENT,
                     "msgpack sample: dtype " + dtype + " has no conversion to double");
  }
};

class Value;
using Array = std::vector<Value>;
using Map = std::vector<std::pair<Value, Value>>;

class Value {
 public:
  Value() = default;
  static Value nil() { return Value(); }
  static Value boolean(bool b) {
    Value v(Type::boolean);
    v.u_ = b;
    return v;
  }
  static Value integer(int64_t i) {
    Value v(i < 0 ? Type::int64 : Type::uint64);
    v.u_ = static_cast<uint64_t>(i);
    return v;
  }
  static Value unsigned_integer(uint64_t u) {
    Value v(Type::uint64);
    v.u_ = u;
    return v;
  }
  static Value floating(double d, bool single) {
    Value v(single ? Type::float32 : Type::float64);
    v.d_ = d;
    return v;
  }
  static Value text(std::string s, Type t = Type::string) {
    Value v(t);
    v.s_ = std::move(s);
    return v;
  }
  static Value array(Array a) {
    Value v(Type::array);
    v.array_ = std::move(a);
    return v;
  }
  static Value map(Map m) {
    Value v(Type::map);
    v.map_ = std::move(m);
    return v;
  }
  static Value ext(int8_t code, std::string data) {
    Value v = text(std::move(data), Type::ext);
    v.u_ = static_cast<uint8_t>(code);
    return v;
  }
  static Value ndarray(NdArray a, bool scalar) {
    Value v(scalar ? Type::numpy_scalar : Type::ndarray);
    v.nd_ = std::make_shared<NdArray>(std::move(a));
    return v;
  }
  static Value complex(std::complex<double> c) {
    Value v(Type::complex);
    v.d_ = c.real();
    v.im_ = c.imag();
    return v;
  }

  Type type() const { return type_; }
  bool is_nil() const { return type_ == Type::nil; }
  bool is_map() const { return type_ == Type::map; }
  bool is_array() const { return type_ == Type::array; }
  bool is_string() const { return type_ == Type::string; }
  bool is_ndarray() const { return type_ == Type::ndarray || type_ == Type::numpy_scalar; }

  bool as_bool() const {
    expect(Type::boolean);
    return u_ != 0;
  }
  // Integers; as_int refuses values above INT64_MAX, as_uint negative ones.
  int64_t as_int() const {
    if (type_ == Type::int64) return static_cast<int64_t>(u_);
    expect(Type::uint64);
    if (u_ > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw sdk::Error(STOWAGE_INVALID_ARGUMENT,
                       "msgpack sample: " + std::to_string(u_) + " does not fit int64");
    return static_cast<int64_t>(u_);
  }
  uint64_t as_uint() const {
    if (type_ == Type::int64)
      throw sdk::Error(STOWAGE_INVALID_ARGUMENT,
                       "msgpack sample: a negative integer is not a uint64");
    expect(Type::uint64);
    return u_;
  }
  // float32, float64 or an integer, as double.
  double as_double() const {
    if (type_ == Type::float32 || type_ == Type::float64) return d_;
    if (type_ == Type::int64) return static_cast<double>(static_cast<int64_t>(u_));
    expect(Type::uint64);
    return static_cast<double>(u_);
  }
  const std::string& as_string() const {
    expect(Type::string);
    return s_;
  }
  const std::string& as_bytes() const {
    expect(Type::bytes);
    return s_;
  }
  const std::string& ext_data() const {
    expect(Type::ext);
    return s_;
  }
  int8_t ext_code() const {
    expect(Type::ext);
    return static_cast<int8_t>(u_);
  }
  const Array& as_array() const {
    expect(Type::array);
    return array_;
  }
  const Map& as_map() const {
    expect(Type::map);
    return map_;
  }
  // An ndarray or a numpy scalar.
  const NdArray& as_ndarray() const {
    if (!is_ndarray()) expect(Type::ndarray);
    return *nd_;
  }
  std::complex<double> as_complex() const {
    expect(Type::complex);
    return {d_, im_};
  }

  // Elements of an array, entries of a map.
  size_t size() const { return type_ == Type::map ? as_map().size() : as_array().size(); }
  const Value& operator[](size_t i) const {
    const Array& a = as_array();
    if (i >= a.size())
      throw sdk::Error(STOWAGE_INVALID_ARGUMENT, "msgpack sample: index " + std::to_string(i) +
                                                     " is past the end of an array of " +
                                                     std::to_string(a.size()));
    return a[i];
  }
  // The value of a str key of a map, or nullptr.
  const Value* find(std::string_view key) const {
    for (const auto& [k, v] : as_map())
      if (k.type_ == Type::string && k.s_ == key) return &v;
    return nullptr;
  }
  const Value& operator[](std::string_view key) const {
    const Value* v = find(key);
    if (!v)
      throw sdk::Error(STOWAGE_NOT_FOUND,
                       "msgpack sample: no key '" + std::string(key) + "' in the map");
    return *v;
  }

 private:
  explicit Value(Type t) : type_(t) {}
  void expect(Type t) const {
    if (type_ != t)
      throw sdk::Error(STOWAGE_INVALID_ARGUMENT, std::string("msgpack sample: the value is a ") +
                                                     type_name(type_) + ", not a " + type_name(t));
  }
  friend class Decoder;

  Type type_ = Type::nil;
  uint64_t u_ = 0;         // bool, integers (two's complement for int64), ext code
  double d_ = 0, im_ = 0;  // floats, complex
  std::string s_;          // str, bin, ext payload
  Array array_;
  Map map_;
  std::shared_ptr<const NdArray> nd_;
};

namespace detail {

// The bin-keyed entry `name` of a map, or nullptr.
inline const Value* bin_entry(const Map& m, std::string_view name) {
  for (const auto& [k, v] : m)
    if (k.type() == Type::bytes && k.as_bytes() == name) return &v;
  return nullptr;
}

// Parses a numpy type string ("<f4", "|S4", "<U3") into order, kind, size.
inline void parse_typestr(const std::string& t, NdArray& a) {
  std::string_view s = t;
  a.byte_order = '|';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
    a.byte_order = s[0] == '=' ? (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? '<' : '>') : s[0];
    s.remove_prefix(1);
  }
  if (s.empty() || std::string_view("biufcSUV").find(s[0]) == std::string_view::npos)
    decode_error("unsupported numpy type string '" + t + "'");
  a.kind = s[0];
  s.remove_prefix(1);
  uint64_t n = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || n > (1u << 30))
    decode_error("bad element size in numpy type string '" + t + "'");
  a.itemsize = a.kind == 'U' ? 4 * n : n;  // U counts UCS-4 characters
  bool ok = (a.kind == 'b' && n == 1) ||
            ((a.kind == 'i' || a.kind == 'u') && (n == 1 || n == 2 || n == 4 || n == 8)) ||
            (a.kind == 'f' && (n == 2 || n == 4 || n == 8)) ||
            (a.kind == 'c' && (n == 8 || n == 16)) || a.kind == 'S' || a.kind == 'U' ||
            a.kind == 'V';
  if (!ok) decode_error("unsupported numpy type string '" + t + "'");
}

inline std::vector<uint64_t> parse_shape(const Value& v) {
  if (v.type() != Type::array) decode_error("an ndarray shape is not an array");
  std::vector<uint64_t> shape;
  for (const Value& d : v.as_array()) {
    if (d.type() != Type::uint64) decode_error("an ndarray shape holds a non-negative non-integer");
    shape.push_back(d.as_uint());
  }
  return shape;
}

inline uint64_t checked_product(const std::vector<uint64_t>& shape, uint64_t itemsize) {
  uint64_t n = itemsize;
  for (uint64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<uint64_t>::max() / d)
      decode_error("an ndarray shape overflows");
    n *= d;
  }
  return n;
}

// numpy descr ([[name, typestr(, shape)], ...]) -> fields; returns the record size.
inline size_t parse_descr(const Value& descr, std::vector<Field>& fields) {
  if (descr.type() != Type::array) decode_error("a structured dtype's descr is not an array");
  size_t offset = 0;
  for (const Value& f : descr.as_array()) {
    if (f.type() != Type::array || f.size() < 2 || f.size() > 3 || f[0].type() != Type::string)
      decode_error("a structured dtype field is not [name, type(, shape)]");
    Field field;
    field.name = f[0].as_string();
    NdArray element;
    if (f[1].type() == Type::array) {  // nested structure
      std::vector<Field> inner;
      element.itemsize = parse_descr(f[1], inner);
      field.dtype = "|V" + std::to_string(element.itemsize);
    } else if (f[1].type() == Type::string) {
      field.dtype = f[1].as_string();
      parse_typestr(field.dtype, element);
    } else {
      decode_error("a structured dtype field type is neither a str nor a descr");
    }
    if (f.size() == 3) field.shape = parse_shape(f[2]);
    field.offset = offset;
    field.itemsize = checked_product(field.shape, element.itemsize);
    offset += field.itemsize;
    fields.push_back(std::move(field));
  }
  return offset;
}

// msgpack_numpy.decode for {b"nd": ..., b"type", b"kind", b"shape", b"data"}.
inline Value decode_nd(Value map, const Value& nd) {
  const Map& m = map.as_map();
  const Value* type = bin_entry(m, "type");
  const Value* data = bin_entry(m, "data");
  bool is_array = nd.type() == Type::boolean && nd.as_bool();
  const Value* kind = bin_entry(m, "kind");
  const Value* shape = bin_entry(m, "shape");
  if (!type || !data || (is_array && (!kind || !shape))) return map;  // KeyError: left as is
  if (data->type() != Type::bytes) decode_error("an ndarray's data is not bin");
  NdArray a;
  if (is_array && kind->type() == Type::bytes && kind->as_bytes() == "O") return map;  // pickled
  if (is_array && kind->type() == Type::bytes && kind->as_bytes() == "V") {
    a.itemsize = parse_descr(*type, a.fields);
    a.kind = 'V';
    a.byte_order = '|';
    a.dtype = "|V" + std::to_string(a.itemsize);
  } else {
    if (type->type() != Type::string) decode_error("an ndarray's type is not a str");
    a.dtype = type->as_string();
    parse_typestr(a.dtype, a);
  }
  if (is_array) a.shape = parse_shape(*shape);
  uint64_t want = checked_product(a.shape, a.itemsize);
  if (data->as_bytes().size() != want)
    decode_error("an ndarray of dtype " + a.dtype + " needs " + std::to_string(want) +
                 " data bytes, has " + std::to_string(data->as_bytes().size()));
  // The map is ours (taken by value) and is dropped below: move its bytes.
  a.data = std::move(const_cast<std::string&>(data->as_bytes()));
  return Value::ndarray(std::move(a), !is_array);
}

// One number of a Python complex repr; "" / "+" / "-" before j mean 1 / -1.
inline double parse_number(std::string_view s, bool imaginary, const std::string& whole) {
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  double v = 1;
  if (!(imaginary && s.empty())) {
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size())
      decode_error("'" + whole + "' is not a Python complex number");
  }
  return negative ? -v : v;
}

// Python's complex(str): "(1.5-2.25j)", "2j", "(-0-0j)", "(nan+infj)", "3".
inline std::complex<double> parse_complex(const std::string& text) {
  std::string_view s = text;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  if (s.empty() || (s.back() != 'j' && s.back() != 'J')) return {parse_number(s, false, text), 0.0};
  s.remove_suffix(1);
  // The imaginary part starts at the last sign that is not an exponent's.
  size_t split = std::string_view::npos;
  for (size_t i = s.size(); i-- > 1;)
    if ((s[i] == '+' || s[i] == '-') && s[i - 1] != 'e' && s[i - 1] != 'E') {
      split = i;
      break;
    }
  if (split == std::string_view::npos) return {0.0, parse_number(s, true, text)};
  return {parse_number(s.substr(0, split), false, text), parse_number(s.substr(split), true, text)};
}

// msgpack_numpy.decode, applied to every map as it is completed.
inline Value decode_numpy(Value map) {
  const Map& m = map.as_map();
  if (const Value* nd = bin_entry(m, "nd")) return decode_nd(std::move(map), *nd);
  if (bin_entry(m, "complex")) {
    const Value* data = bin_entry(m, "data");
    if (!data) return map;
    if (data->type() != Type::string) decode_error("a complex number's data is not a str");
    return Value::complex(parse_complex(data->as_string()));
  }
  return map;
}

}  // namespace detail

// Builds a Value from msgpack-cxx's parse events, decoding msgpack-numpy
// maps as each one completes.
class Decoder : public msgpack::null_visitor {
 public:
  static constexpr size_t max_depth = 512;

  explicit Decoder(size_t input_size) : input_size_(input_size) {}

  bool visit_nil() { return add(Value()); }
  bool visit_boolean(bool v) { return add(Value::boolean(v)); }
  bool visit_positive_integer(uint64_t v) { return add(Value::unsigned_integer(v)); }
  bool visit_negative_integer(int64_t v) { return add(Value::integer(v)); }
  bool visit_float32(float v) { return add(Value::floating(v, true)); }
  bool visit_float64(double v) { return add(Value::floating(v, false)); }
  bool visit_str(const char* v, uint32_t n) { return add(Value::text(std::string(v, n))); }
  bool visit_bin(const char* v, uint32_t n) {
    return add(Value::text(std::string(v, n), Type::bytes));
  }
  bool visit_ext(const char* v, uint32_t n) {
    // msgpack-cxx passes the type byte first.
    if (n == 0) return add(Value::ext(0, {}));
    return add(Value::ext(static_cast<int8_t>(v[0]), std::string(v + 1, n - 1)));
  }
  bool start_array(uint32_t n) {
    Value v = Value::array({});
    v.array_.reserve(std::min<size_t>(n, input_size_));  // never trust a count beyond the input
    return open(std::move(v));
  }
  bool start_map(uint32_t n) {
    Value v = Value::map({});
    v.map_.reserve(std::min<size_t>(n, input_size_ / 2));
    return open(std::move(v));
  }
  bool start_map_key() {
    open_.back().key_next = true;
    return true;
  }
  bool start_map_value() {
    open_.back().key_next = false;
    return true;
  }
  bool end_array() { return close(false); }
  bool end_map() { return close(true); }
  void parse_error(size_t, size_t at) {
    error_ = "not valid msgpack (bad byte at offset " + std::to_string(at) + ")";
  }
  void insufficient_bytes(size_t, size_t) {
    error_ = "truncated: the msgpack object is incomplete";
  }

  // Why parsing stopped, or empty.
  const std::string& error() const { return error_; }
  Value result() {
    if (!error_.empty()) decode_error(error_);
    return std::move(result_);
  }

 private:
  struct Open {
    Value container;
    bool key_next = false;
  };
  bool open(Value v) {
    if (open_.size() >= max_depth) {
      error_ = "nested deeper than " + std::to_string(max_depth) + " levels";
      return false;
    }
    open_.push_back({std::move(v), false});
    return true;
  }
  bool close(bool is_map) {
    Value done = std::move(open_.back().container);
    open_.pop_back();
    if (is_map) {
      try {
        done = detail::decode_numpy(std::move(done));
      } catch (const sdk::Error& e) {
        error_ = e.what();
        return false;
      }
    }
    return add(std::move(done));
  }
  bool add(Value v) {
    if (open_.empty()) {
      result_ = std::move(v);
      return true;
    }
    Open& top = open_.back();
    if (top.container.type_ == Type::array) {
      top.container.array_.push_back(std::move(v));
    } else if (top.key_next) {
      top.container.map_.emplace_back(std::move(v), Value());
    } else {
      top.container.map_.back().second = std::move(v);
    }
    return true;
  }

  size_t input_size_;
  std::vector<Open> open_;
  Value result_;
  std::string error_;
};

// Decodes one sample: exactly one msgpack object spanning all the bytes.
inline Value decode(std::string_view bytes) {
  Decoder decoder(bytes.size());
  size_t off = 0;
  bool ok = msgpack::parse(bytes.data(), bytes.size(), off, decoder);
  if (!decoder.error().empty()) decode_error(decoder.error());
  if (!ok) decode_error("not valid msgpack");
  if (off != bytes.size())
    decode_error(std::to_string(bytes.size() - off) + " bytes follow the msgpack object");
  return decoder.result();
}

}  // namespace stowage::sample

#endif  // STOWAGE_MSGPACK_SAMPLE_HPP
