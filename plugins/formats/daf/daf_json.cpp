#include "daf_json.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace daf {

using stowage::sdk::corrupt;
using stowage::sdk::invalid;
using stowage::sdk::unsupported;

namespace {

Json parse_object(std::string_view text, const std::string& file) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) corrupt(file + ": not a JSON object");
  return j;
}

std::string string_field(const Json& j, const char* key, const std::string& file) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    corrupt(file + ": \"" + key + "\" is missing or not a string");
  return it->get<std::string>();
}

ElType type_field(const Json& j, const char* key, const std::string& file) {
  std::string name = string_field(j, key, file);
  auto t = parse_julia_name(name);
  if (!t) corrupt(file + ": unknown element type \"" + name + "\" in \"" + key + "\"");
  return *t;
}

template <class Int>
Json checked_integer(const Json& v, const std::string& what, bool from_file) {
  auto reject = [&](const std::string& why) -> Json {
    if (from_file) corrupt(what + ": " + why);
    invalid(what + ": " + why);
  };
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<Int>::max()))
      return reject(std::to_string(u) + " does not fit the declared type");
    return Json(static_cast<Int>(u));
  }
  if (v.is_number_integer()) {
    int64_t s = v.get<int64_t>();
    if (s < 0 && !std::numeric_limits<Int>::is_signed)
      return reject(std::to_string(s) + " is negative");
    if constexpr (std::numeric_limits<Int>::is_signed) {
      if (s < std::numeric_limits<Int>::min() || s > std::numeric_limits<Int>::max())
        return reject(std::to_string(s) + " does not fit the declared type");
    } else if (static_cast<uint64_t>(s) > std::numeric_limits<Int>::max()) {
      return reject(std::to_string(s) + " does not fit the declared type");
    }
    return Json(static_cast<Int>(s));
  }
  if (v.is_number_float()) {  // Julia's convert(Int8, 3.0) works for integral floats
    double d = v.get<double>();
    if (std::trunc(d) != d || !(d >= static_cast<double>(std::numeric_limits<Int>::min())) ||
        !(d < 2.0 * (static_cast<double>(std::numeric_limits<Int>::max() / 2 + 1))))
      return reject(v.dump() + " is not an integer of the declared type");
    return Json(static_cast<Int>(d));
  }
  return reject(v.dump() + " is not a number");
}

Json normalize(ElType type, const Json& v, const std::string& what, bool from_file) {
  auto reject = [&](const std::string& why) -> Json {
    if (from_file) corrupt(what + ": " + why);
    invalid(what + ": " + why);
  };
  switch (type) {
    case ElType::Bool:
      if (v.is_boolean()) return v;
      if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
        return Json(v.get<int64_t>() == 1);  // dafr writes Bool scalars as 0/1
      return reject(v.dump() + " is not a Bool");
    case ElType::Int8:
      return checked_integer<int8_t>(v, what, from_file);
    case ElType::Int16:
      return checked_integer<int16_t>(v, what, from_file);
    case ElType::Int32:
      return checked_integer<int32_t>(v, what, from_file);
    case ElType::Int64:
      return checked_integer<int64_t>(v, what, from_file);
    case ElType::UInt8:
      return checked_integer<uint8_t>(v, what, from_file);
    case ElType::UInt16:
      return checked_integer<uint16_t>(v, what, from_file);
    case ElType::UInt32:
      return checked_integer<uint32_t>(v, what, from_file);
    case ElType::UInt64:
      return checked_integer<uint64_t>(v, what, from_file);
    case ElType::Float32:
    case ElType::Float64: {
      if (!v.is_number()) return reject(v.dump() + " is not a number");
      double d = v.get<double>();
      if (!std::isfinite(d)) return reject("NaN and infinities cannot be stored in Daf scalars");
      if (type == ElType::Float32) {
        if (std::fabs(d) > std::numeric_limits<float>::max())
          return reject(v.dump() + " does not fit Float32");
        d = static_cast<double>(static_cast<float>(d));
      }
      return Json(d);
    }
    case ElType::String:
      if (!v.is_string()) return reject(v.dump() + " is not a string");
      return v;
  }
  return reject("unknown type");
}

// Shortest round-trip digits and decimal exponent of a finite non-zero value:
// value = 0.d1d2d3... * 10^point.
template <class Float>
void shortest_digits(Float v, std::string& digits, int& point) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view s(buf, static_cast<size_t>(res.ptr - buf));  // "d.ddde+XX"
  size_t e = s.find('e');
  digits.clear();
  for (char c : s.substr(0, e))
    if (c >= '0' && c <= '9') digits += c;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  point = std::stoi(std::string(s.substr(e + 1))) + 1;
}

template <class Float>
std::string julia_format(Float v) {
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  std::string sign = v < 0 ? "-" : "";
  std::string digits;
  int point = 0;
  shortest_digits(std::fabs(v), digits, point);
  int n = static_cast<int>(digits.size());
  if (point > -4 && point <= 6) {  // fixed notation, as Julia's print
    if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
    if (point >= n) return sign + digits + std::string(static_cast<size_t>(point - n), '0') + ".0";
    return sign + digits.substr(0, static_cast<size_t>(point)) + "." +
           digits.substr(static_cast<size_t>(point));
  }
  std::string mantissa = digits.substr(0, 1) + "." + (n > 1 ? digits.substr(1) : "0");
  return sign + mantissa + "e" + std::to_string(point - 1);
}

}  // namespace

Version parse_daf_json(std::string_view text, const std::string& file) {
  Json j = parse_object(text, file);
  auto it = j.find("version");
  if (it == j.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number_integer() ||
      !(*it)[1].is_number_integer())
    corrupt(file + ": \"version\" must be an array of two integers");
  Version v{(*it)[0].get<int64_t>(), (*it)[1].get<int64_t>()};
  if (v[0] != kMajor || v[1] < 0 || v[1] > kMaxMinor)
    unsupported(file + ": incompatible format version " + std::to_string(v[0]) + "." +
                std::to_string(v[1]) + " (this plugin reads 1.0 and 1.1)");
  return v;
}

std::string format_daf_json(Version v) {
  return "{\"version\":[" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "]}\n";
}

Scalar parse_scalar(std::string_view text, const std::string& file) {
  Json j = parse_object(text, file);
  Scalar s;
  s.type = type_field(j, "type", file);
  auto it = j.find("value");
  if (it == j.end()) corrupt(file + ": \"value\" is missing");
  s.value = normalize(s.type, *it, file, /*from_file=*/true);
  return s;
}

Json normalize_scalar(ElType type, const Json& value, const std::string& what) {
  return normalize(type, value, what, /*from_file=*/false);
}

ElType infer_scalar_type(const Json& value, const std::string& what) {
  if (value.is_boolean()) return ElType::Bool;
  if (value.is_number_unsigned())
    return value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) ? ElType::UInt64
                                                                    : ElType::Int64;
  if (value.is_number_integer()) return ElType::Int64;
  if (value.is_number_float()) return ElType::Float64;
  if (value.is_string()) return ElType::String;
  invalid(what + ": a Daf scalar is a Bool, integer, float or string, not " +
          std::string(value.type_name()));
}

std::string julia_float(double v) { return julia_format(v); }
std::string julia_float(float v) { return julia_format(v); }

std::string format_scalar(const Scalar& s) {
  std::string value;
  switch (s.type) {
    case ElType::Float32:
      value = julia_float(static_cast<float>(s.value.get<double>()));
      break;
    case ElType::Float64:
      value = julia_float(s.value.get<double>());
      break;
    default:
      value = s.value.dump(-1, ' ', false, Json::error_handler_t::strict);
      break;
  }
  return std::string("{\"type\":\"") + julia_name(s.type) + "\",\"value\":" + value + "}\n";
}

bool Descriptor::is_packed(const std::string& component) const {
  for (const auto& p : packed)
    if (p.first == component) return true;
  return false;
}

namespace {

std::optional<Packing> parse_packing(const Json& j, const std::string& file) {
  auto it = j.find("packed_format");
  if (it == j.end()) return std::nullopt;
  if (!it->is_string() || it->get<std::string>() != "indexed+zipped")
    unsupported(file + ": unknown packed_format " + it->dump());
  Packing p;
  auto cs = j.find("chunk_shape");
  if (cs == j.end() || !cs->is_array() || cs->empty())
    corrupt(file + ": packed data without a chunk_shape");
  for (const Json& d : *cs) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() == 0)
      corrupt(file + ": bad chunk_shape " + cs->dump());
    p.chunk_shape.push_back(d.get<uint64_t>());
  }
  p.compression = string_field(j, "compression", file);
  auto lv = j.find("compression_level");
  if (lv != j.end() && lv->is_number_integer()) p.level = lv->get<int64_t>();
  auto loc = j.find("index_location");
  if (loc != j.end() && (!loc->is_string() || loc->get<std::string>() != "start"))
    unsupported(file + ": packed index_location " + loc->dump() + " (only \"start\" is known)");
  return p;
}

// One component of a v1.1 sparse descriptor: {"format":"dense","eltype":T,"n_elements":N}.
ElType parse_component(const Json& j, const char* name, const std::string& file,
                       std::optional<uint64_t>* n_elements, Descriptor& d) {
  if (!j.is_object()) corrupt(file + ": component \"" + name + "\" is not an object");
  if (string_field(j, "format", file) != "dense")
    unsupported(file + ": component \"" + name + "\" has a format other than \"dense\"");
  ElType t = type_field(j, "eltype", file);
  auto n = j.find("n_elements");
  if (n_elements && n != j.end()) {
    if (!n->is_number_unsigned())
      corrupt(file + ": \"" + std::string(name) + ".n_elements\" is not a count");
    *n_elements = n->get<uint64_t>();
  }
  if (auto p = parse_packing(j, file)) d.packed.emplace_back(name, *p);
  return t;
}

}  // namespace

Descriptor parse_descriptor(std::string_view text, const std::string& file, bool matrix) {
  Json j = parse_object(text, file);
  Descriptor d;
  std::string format = string_field(j, "format", file);
  if (format == "dense") {
    d.eltype = type_field(j, "eltype", file);
    if (auto p = parse_packing(j, file)) d.packed.emplace_back("", *p);
    return d;
  }
  if (format != "sparse") corrupt(file + ": unknown format \"" + format + "\"");
  d.sparse = true;
  const char* index_key = matrix ? "rowval" : "nzind";
  if (j.contains("eltype")) {  // v1.0 schema: {"format","eltype","indtype"}
    d.eltype = type_field(j, "eltype", file);
    d.indtype = type_field(j, "indtype", file);
  } else {  // v1.1 schema: one dense descriptor per component
    d.v11_schema = true;
    if (!j.contains(index_key))
      corrupt(file + ": sparse descriptor without \"eltype\" or \"" + index_key + "\"");
    d.indtype = parse_component(j[index_key], index_key, file, &d.n_indices, d);
    if (matrix) {
      if (!j.contains("colptr")) corrupt(file + ": sparse matrix descriptor without \"colptr\"");
      ElType colptr_type = parse_component(j["colptr"], "colptr", file, &d.n_colptr, d);
      if (colptr_type != d.indtype)
        corrupt(file + ": colptr and rowval have different element types");
    }
    d.nzval_in_descriptor = j.contains("nzval");
    d.eltype = d.nzval_in_descriptor ? parse_component(j["nzval"], "nzval", file, nullptr, d)
                                     : ElType::Bool;
  }
  if (!is_integer(d.indtype))
    corrupt(file + ": index type " + julia_name(d.indtype) + " is not an integer type");
  return d;
}

std::string format_descriptor(const Descriptor& d, bool matrix, bool v11, uint64_t n_indices,
                              uint64_t n_colptr) {
  std::string el = julia_name(d.eltype), ind = julia_name(d.indtype);
  if (!d.sparse) return "{\"format\":\"dense\",\"eltype\":\"" + el + "\"}\n";
  if (!v11)
    return "{\"format\":\"sparse\",\"eltype\":\"" + el + "\",\"indtype\":\"" + ind + "\"}\n";
  auto component = [](const std::string& type, uint64_t n) {
    return "{\"format\":\"dense\",\"eltype\":\"" + type + "\",\"n_elements\":" + std::to_string(n) +
           "}";
  };
  std::string out = "{\"format\":\"sparse\",";
  if (matrix) {
    out += "\"colptr\":" + component(ind, n_colptr) + ",\"rowval\":" + component(ind, n_indices);
  } else {
    out += "\"nzind\":" + component(ind, n_indices);
  }
  out += ",\"nzval\":" + component(el, n_indices) + "}\n";
  return out;
}

}  // namespace daf
