#include "metadata.hpp"

#include "strings.hpp"

#include <stowage/plugin.hpp>
#include <stowage/half.hpp>
#include <stowage/plugin_util.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace zarr {

using stowage::sdk::corrupt;
using stowage::sdk::unsupported;

namespace {

struct TypeRow {
  char kind;
  size_t size;
  const char* name;
};
constexpr TypeRow kTypes[] = {
    {'b', 1, "bool"},      {'i', 1, "int8"},        {'i', 2, "int16"},   {'i', 4, "int32"},
    {'i', 8, "int64"},     {'u', 1, "uint8"},       {'u', 2, "uint16"},  {'u', 4, "uint32"},
    {'u', 8, "uint64"},    {'f', 4, "float32"},     {'f', 8, "float64"}, {'f', 2, "float16"},
    {'c', 8, "complex64"}, {'c', 16, "complex128"},
};

}  // namespace

DataType parse_data_type(const json& dtype, const std::string& file) {
  if (dtype.is_array())
    unsupported(file + ": structured data type " + dtype.dump() +
                " is not supported (numeric and bool only)");
  if (!dtype.is_string()) corrupt(file + ": \"dtype\" must be a string, got " + dtype.dump());
  const std::string& s = dtype.get_ref<const std::string&>();
  // numpy's typestr: a byte order, a kind letter, a size in bytes.
  const bool well_formed = s.size() >= 3 && (s[0] == '<' || s[0] == '>' || s[0] == '|') &&
                           s.find_first_not_of("0123456789", 2) == std::string::npos &&
                           s.size() <= 6;
  if (!well_formed)
    corrupt(file + ": \"dtype\" \"" + s + "\" is not a numpy type string such as \"<u2\"");
  const size_t size = std::stoul(s.substr(2));
  for (const TypeRow& t : kTypes) {
    if (t.kind != s[1] || t.size != size) continue;
    if (s[0] == '|' && size > 1)
      corrupt(file + ": \"dtype\" \"" + s + "\" has no byte order ('|') but " +
              std::to_string(size) + " bytes");
    return DataType{s, t.name, t.kind, t.size, s[0] == '>' && size > 1};
  }
  unsupported(file + ": \"dtype\" \"" + s +
              "\" is not supported (bool, int8..int64, uint8..uint64, float16..float64, complex64 "
              "and complex128 are)");
}

std::optional<DataType> data_type_for(std::string_view name, bool big_endian) {
  for (const TypeRow& t : kTypes) {
    if (name != t.name && !(name == "boolean" && t.kind == 'b')) continue;
    std::string typestr = std::string(1, t.size == 1  ? '|'
                                         : big_endian ? '>'
                                                      : '<') +
                          t.kind + std::to_string(t.size);
    return DataType{typestr, t.name, t.kind, t.size, big_endian && t.size > 1};
  }
  return std::nullopt;
}

// ---- fill values -----------------------------------------------------------------

namespace {

template <class T>
std::vector<uint8_t> element_bytes(T v, bool big_endian) {
  std::vector<uint8_t> out(sizeof v);
  std::memcpy(out.data(), &v, sizeof v);
  if (big_endian != !stowage::sdk::host_is_little_endian()) std::reverse(out.begin(), out.end());
  return out;
}

// An integer fill value: a JSON integer, or a float with an integral value
// (z5 writes 0.0 for integer arrays), within the type's range.
FillValue integer_fill(const json& v, const DataType& t, const std::string& file) {
  FillValue f;
  f.in_file = v;
  const auto bad = [&] {
    corrupt(file + ": \"fill_value\" " + v.dump() + " is not a value of \"dtype\" \"" + t.typestr +
            "\"");
  };
  if (!v.is_number()) bad();
  const bool is_signed = t.kind == 'i';
  const int bits = int(8 * t.size);
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d)) bad();
    const double lo = is_signed ? -std::ldexp(1.0, bits - 1) : 0.0,
                 hi = std::ldexp(1.0, is_signed ? bits - 1 : bits);
    if (d < lo || d >= hi) bad();
    f.for_host = d;
    f.in_file = is_signed ? json(static_cast<int64_t>(d))
                          : json(static_cast<uint64_t>(d));  // 0.0 written back as 0
    f.bytes = is_signed ? element_bytes<int64_t>(static_cast<int64_t>(d), false)
                        : element_bytes<uint64_t>(static_cast<uint64_t>(d), false);
  } else if (is_signed) {
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX)) bad();
    const int64_t x = v.get<int64_t>();
    if (bits < 64 && (x < -(int64_t(1) << (bits - 1)) || x >= (int64_t(1) << (bits - 1)))) bad();
    f.for_host = x;
    f.plugin_fills = x > (int64_t(1) << 53) || x < -(int64_t(1) << 53);
    f.bytes = element_bytes<int64_t>(x, false);
  } else {
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) bad();
    const uint64_t x = v.get<uint64_t>();
    if (bits < 64 && x >= (uint64_t(1) << bits)) bad();
    f.for_host = x;
    f.plugin_fills = x > (uint64_t(1) << 53);
    f.bytes = element_bytes<uint64_t>(x, false);
  }
  // The low t.size bytes of the 64-bit little-endian value, in the array's order.
  f.bytes.resize(t.size);
  if (t.big_endian) std::reverse(f.bytes.begin(), f.bytes.end());
  return f;
}

FillValue float_fill(const json& v, const DataType& t, const std::string& file) {
  FillValue f;
  f.in_file = v;
  double d = 0;
  if (v.is_number()) {
    d = v.get<double>();
    f.for_host = v;
  } else if (v == "NaN") {
    d = std::numeric_limits<double>::quiet_NaN();
    f.for_host = v;
  } else if (v == "Infinity" || v == "-Infinity") {
    d = v == "Infinity" ? HUGE_VAL : -HUGE_VAL;
    f.for_host = v;
  } else {
    corrupt(file + ": \"fill_value\" " + v.dump() +
            " is not a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
  }
  f.bytes = t.size == 2   ? element_bytes<uint16_t>(stowage::sdk::half_from_double(d), t.big_endian)
            : t.size == 4 ? element_bytes<float>(static_cast<float>(d), t.big_endian)
                          : element_bytes<double>(d, t.big_endian);
  return f;
}

// A complex fill value: [re, im] as zarr-python writes it, or one number (imaginary part 0).
FillValue complex_fill(const json& v, const DataType& t, const std::string& file) {
  if (v.is_array() && v.size() != 2)
    corrupt(file + ": \"fill_value\" " + v.dump() + " is not a pair [real, imaginary]");
  const DataType part = complex_part_type(t);
  if (!v.is_array())
    return join_complex_fill(float_fill(v, part, file), float_fill(json(0), part, file));
  return join_complex_fill(float_fill(v[0], part, file), float_fill(v[1], part, file));
}

}  // namespace

bool FillValue::is_zero() const {
  for (uint8_t b : bytes)
    if (b) return false;
  return true;
}

FillValue parse_fill_value(const json& value, const DataType& t, const std::string& file) {
  if (value.is_null()) {  // "no fill value": missing chunks are undefined; stowage reads 0
    FillValue f;
    f.for_host = 0;
    f.bytes.assign(t.size, 0);
    return f;
  }
  if (t.kind == 'b') {
    if (!value.is_boolean() && !(value.is_number() && (value == 0 || value == 1)))
      corrupt(file + ": \"fill_value\" " + value.dump() + " is not a bool");
    FillValue f;
    const bool on = value.is_boolean() ? value.get<bool>() : value.get<double>() != 0;
    f.in_file = on;
    f.for_host = on ? 1 : 0;
    f.bytes = {uint8_t(on ? 1 : 0)};
    return f;
  }
  if (t.kind == 'c') return complex_fill(value, t, file);
  return t.kind == 'f' ? float_fill(value, t, file) : integer_fill(value, t, file);
}

DataType complex_part_type(const DataType& t) {
  return *data_type_for(t.size == 8 ? "float32" : "float64", t.big_endian);
}

FillValue join_complex_fill(const FillValue& re, const FillValue& im) {
  FillValue f;
  f.in_file = json::array({re.in_file, im.in_file});
  f.for_host = json::array({re.for_host, im.for_host});
  f.bytes = re.bytes;
  f.bytes.insert(f.bytes.end(), im.bytes.begin(), im.bytes.end());
  return f;
}

// ---- .zarray ---------------------------------------------------------------------

uint64_t ArrayMeta::chunk_elements() const {
  uint64_t n = 1;
  for (uint64_t c : chunks) n *= c;  // bounded by kMaxChunkBytes in parse_array
  return n;
}

namespace {

std::vector<uint64_t> parse_extents(const json& meta, const char* key, uint64_t min,
                                    const std::string& file) {
  if (!meta.contains(key)) corrupt(file + ": has no \"" + key + "\"");
  const json& a = meta[key];
  if (!a.is_array())
    corrupt(file + ": \"" + key + "\" must be an array of integers, got " + a.dump());
  std::vector<uint64_t> out;
  for (const json& v : a) {
    const bool non_negative =
        v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!non_negative || v.get<uint64_t>() < min || v.get<uint64_t>() > uint64_t(INT64_MAX))
      corrupt(file + ": \"" + key + "\" has " + v.dump() +
              "; each entry must be an integer >= " + std::to_string(min));
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

}  // namespace

json parse_object(std::string_view text, const std::string& file) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) corrupt(file + ": not valid JSON");
  if (!j.is_object())
    corrupt(file + ": must hold a JSON object, got " + std::string(j.type_name()));
  return j;
}

ArrayMeta parse_array(std::string_view text, const std::string& file) {
  json meta = parse_object(text, file);
  if (is_object_dtype_v2(meta)) return parse_strings_v2(meta, file);  // strings.cpp
  if (!meta.contains("zarr_format")) corrupt(file + ": has no \"zarr_format\"");
  if (meta["zarr_format"] != 2)
    unsupported(file + ": \"zarr_format\" " + meta["zarr_format"].dump() + " (this reads 2)");
  ArrayMeta a;
  if (!meta.contains("dtype")) corrupt(file + ": has no \"dtype\"");
  a.type = parse_data_type(meta["dtype"], file);
  a.shape = parse_extents(meta, "shape", 0, file);
  a.chunks = parse_extents(meta, "chunks", 1, file);
  if (a.shape.size() != a.chunks.size())
    corrupt(file + ": \"shape\" has " + std::to_string(a.shape.size()) +
            " entries but \"chunks\" has " + std::to_string(a.chunks.size()));
  uint64_t bytes = a.type.size;
  for (uint64_t c : a.chunks)
    if (c > kMaxChunkBytes || (bytes *= c) > kMaxChunkBytes)
      unsupported(file + ": a chunk of " + meta["chunks"].dump() + " " + a.type.typestr +
                  " is over 2 GiB");
  uint64_t grid = 1;  // the number of chunks must be countable
  for (size_t d = 0; d < a.ndim(); ++d)
    if (a.grid(d) && grid > UINT64_MAX / a.grid(d))
      corrupt(file + ": \"shape\" " + meta["shape"].dump() + " in chunks " + meta["chunks"].dump() +
              " has more than 2^64 chunks");
    else if (a.grid(d))
      grid *= a.grid(d);

  const json order = meta.value("order", json("C"));
  if (order != "C" && order != "F")
    corrupt(file + ": \"order\" must be \"C\" or \"F\", got " + order.dump());
  a.fortran = order == "F";
  const json separator = meta.value("dimension_separator", json("."));
  if (separator != "." && separator != "/")
    corrupt(file + ": \"dimension_separator\" must be \".\" or \"/\", got " + separator.dump());
  a.separator = separator.get<std::string>()[0];
  a.fill = parse_fill_value(meta.value("fill_value", json()), a.type, file);

  // The filters are made by resolve_codecs (filter_chain.hpp).
  a.filters = meta.value("filters", json());
  if (!a.filters.is_null() && !a.filters.is_array())
    corrupt(file + ": \"filters\" must be null or a list, got " + a.filters.dump());
  if (a.filters.is_array() && a.filters.empty()) a.filters = nullptr;  // [] as null
  a.compressor = meta.value("compressor", json());
  const json& c = a.compressor;
  if (!c.is_null() && (!c.is_object() || !c.contains("id") || !c["id"].is_string()))
    corrupt(file + ": \"compressor\" must be null or an object with a string \"id\", got " +
            c.dump());
  return a;
}

json array_json(const ArrayMeta& a) {
  json j = json::object();
  j["chunks"] = a.chunks;
  j["compressor"] = a.compressor;
  j["dimension_separator"] = std::string(1, a.separator);
  j["dtype"] = a.type.typestr;
  j["fill_value"] = a.fill.in_file;
  j["filters"] = a.filters;
  j["order"] = a.fortran ? "F" : "C";
  j["shape"] = a.shape;
  j["zarr_format"] = 2;
  return j;
}

std::string to_text(const json& j) { return j.dump(4, ' ', true, json::error_handler_t::strict); }

}  // namespace zarr
