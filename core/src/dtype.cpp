#include "fill_value.hpp"

#include <cmath>
#include <limits>

namespace stowage {

namespace {
struct DTypeRow {
  DType type;
  const char* name;
  size_t size;
};
constexpr DTypeRow kTypes[] = {
    {DType::boolean, "bool", 1},        {DType::int8, "int8", 1},
    {DType::int16, "int16", 2},         {DType::int32, "int32", 4},
    {DType::int64, "int64", 8},         {DType::uint8, "uint8", 1},
    {DType::uint16, "uint16", 2},       {DType::uint32, "uint32", 4},
    {DType::uint64, "uint64", 8},       {DType::float32, "float32", 4},
    {DType::float64, "float64", 8},     {DType::float16, "float16", 2},
    {DType::complex64, "complex64", 8}, {DType::complex128, "complex128", 16},
};
}  // namespace

size_t dtype_size(DType t) { return kTypes[static_cast<int>(t)].size; }
const char* dtype_name(DType t) { return kTypes[static_cast<int>(t)].name; }
bool dtype_is_float(DType t) {
  return t == DType::float16 || t == DType::float32 || t == DType::float64;
}
bool dtype_is_complex(DType t) { return t == DType::complex64 || t == DType::complex128; }
bool dtype_is_signed(DType t) {
  return t == DType::int8 || t == DType::int16 || t == DType::int32 || t == DType::int64 ||
         dtype_is_float(t) || dtype_is_complex(t);
}

DType parse_dtype(std::string_view name) {
  for (const DTypeRow& row : kTypes)
    if (name == row.name) return row.type;
  if (name == "boolean") return DType::boolean;
  throw Error(ErrorCode::invalid_argument, "unknown dtype '" + std::string(name) + "'");
}

const char* node_kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::group:
      return "group";
    case NodeKind::array:
      return "array";
    case NodeKind::sparse:
      return "sparse";
    case NodeKind::strings:
      return "strings";
    case NodeKind::records:
      return "records";
  }
  return "?";
}

uint64_t NodeInfo::element_count() const {
  uint64_t n = 1;
  for (uint64_t s : shape) n *= s;
  return n;
}

namespace {
std::vector<uint64_t> u64_list(const json& j, const char* key) {
  std::vector<uint64_t> out;
  if (!j.contains(key)) return out;
  const json& a = j.at(key);
  if (!a.is_array())
    throw Error(ErrorCode::corrupt, std::string("node description: \"") + key + "\" is not a list");
  for (const json& v : a) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0)
      throw Error(ErrorCode::corrupt,
                  std::string("node description: \"") + key + "\" has a non-integer entry");
    out.push_back(v.get<uint64_t>());
  }
  return out;
}
// Strides and byte offsets are int64_t: a shape whose bytes could not be
// addressed that way is refused here, once for every format (a zero
// dimension beside huge ones would otherwise overflow the strides).
void check_addressable(const std::vector<uint64_t>& dims, size_t element_size, const char* key) {
  uint64_t bytes = element_size;
  for (uint64_t d : dims) {
    if (d == 0) continue;
    if (d > static_cast<uint64_t>(INT64_MAX) / bytes)
      throw Error(ErrorCode::corrupt,
                  std::string("node description: \"") + key +
                      "\" describes more bytes than a 64-bit offset can address");
    bytes *= d;
  }
}
}  // namespace

// JSON has no NaN or infinities: a description spells them as Zarr does.
// A complex one is [re, im]: this is its real part.
double fill_value_of(const json& j) {
  if (j.is_array() && j.size() == 2) return fill_value_of(j[0]);
  if (j.is_number()) return j.get<double>();
  if (j == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (j == "Infinity") return HUGE_VAL;
  if (j == "-Infinity") return -HUGE_VAL;
  return 0;
}

double fill_value_imag_of(const json& j) {
  return j.is_array() && j.size() == 2 ? fill_value_of(j[1]) : 0;
}

json fill_value_json(double value, double imag, DType dtype) {
  if (!dtype_is_complex(dtype)) return fill_value_json(value);
  return json::array({fill_value_json(value), fill_value_json(imag)});
}

json fill_value_json(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

NodeInfo parse_node_info(const json& j) {
  NodeInfo info;
  info.raw = j;
  std::string kind = j.value("kind", "group");
  if (kind == "group")
    info.kind = NodeKind::group;
  else if (kind == "array")
    info.kind = NodeKind::array;
  else if (kind == "sparse")
    info.kind = NodeKind::sparse;
  else if (kind == "strings")
    info.kind = NodeKind::strings;
  else if (kind == "records")
    info.kind = NodeKind::records;
  else
    throw Error(ErrorCode::corrupt, "node description: unknown kind '" + kind + "'");
  if (j.contains("attributes") && j["attributes"].is_object()) info.attributes = j["attributes"];
  if (j.contains("dtype")) info.dtype = parse_dtype(j["dtype"].get<std::string>());
  info.shape = u64_list(j, "shape");
  info.chunks = u64_list(j, "chunks");
  info.big_endian = j.value("byte_order", "little") == "big";
  info.fortran_order = j.value("order", "C") == "F";
  if (j.contains("codec")) info.codec = j["codec"];
  if (j.contains("fill_value")) {
    info.fill_value = fill_value_of(j["fill_value"]);
    info.fill_value_imag = fill_value_imag_of(j["fill_value"]);
  }
  info.csr = j.value("layout", "csc") == "csr";
  info.nnz = j.value("nnz", uint64_t{0});
  info.count = j.value("count", uint64_t{0});
  if (j.contains("dims") && j["dims"].is_array()) {
    for (const json& d : j["dims"]) {
      Dim dim;
      if (d.contains("name") && d["name"].is_string()) dim.name = d["name"];
      if (d.contains("labels") && d["labels"].is_string()) dim.labels = d["labels"];
      info.dims.push_back(dim);
    }
  }
  if (info.kind == NodeKind::array) {
    if (info.chunks.empty()) info.chunks = info.shape;
    if (info.chunks.size() != info.shape.size())
      throw Error(ErrorCode::corrupt, "node description: chunks and shape differ in rank");
    for (uint64_t& c : info.chunks)
      if (c == 0) c = 1;
    check_addressable(info.shape, dtype_size(info.dtype), "shape");
    check_addressable(info.chunks, dtype_size(info.dtype), "chunks");
  }
  if (info.kind == NodeKind::sparse && info.shape.size() != 2)
    throw Error(ErrorCode::corrupt, "node description: a sparse matrix needs a 2-D shape");
  return info;
}

std::pair<std::string, std::string> split_dataset_spec(const std::string& spec) {
  // A URL's host may hold "::" (http://[::1]:8080/x.n5): search after it.
  size_t from = 0;
  if (size_t scheme = spec.find("://"); scheme != std::string::npos && scheme > 0 &&
                                        spec.find("::") > scheme) {  // "a::b://" is a node "b://"
    from = spec.find('/', scheme + 3);
    if (from == std::string::npos) return {spec, ""};
  }
  size_t pos = spec.find("::", from);
  if (pos == std::string::npos) return {spec, ""};
  return {spec.substr(0, pos), spec.substr(pos + 2)};
}

}  // namespace stowage
