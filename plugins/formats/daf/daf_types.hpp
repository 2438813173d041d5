// Daf element types (Julia's type names) and how they map onto stowage dtypes.
#pragma once

#include <stowage/plugin_util.hpp>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace daf {

// Julia's StorageScalar types plus String, in the order of DTYPE_BY_NAME.
enum class ElType {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float32,
  Float64,
  String
};

struct ElTypeInfo {
  const char* julia;  // the name written in descriptors ("Float64")
  const char* dtype;  // stowage's dtype ("float64"), "" for String
  size_t size;        // bytes per element on disk, 0 for String
};

inline const ElTypeInfo& info(ElType t) {
  static const ElTypeInfo table[] = {
      {"Bool", "bool", 1},       {"Int8", "int8", 1},       {"Int16", "int16", 2},
      {"Int32", "int32", 4},     {"Int64", "int64", 8},     {"UInt8", "uint8", 1},
      {"UInt16", "uint16", 2},   {"UInt32", "uint32", 4},   {"UInt64", "uint64", 8},
      {"Float32", "float32", 4}, {"Float64", "float64", 8}, {"String", "", 0},
  };
  return table[static_cast<int>(t)];
}
inline const char* julia_name(ElType t) { return info(t).julia; }
inline size_t element_size(ElType t) { return info(t).size; }
inline bool is_integer(ElType t) { return t >= ElType::Int8 && t <= ElType::UInt64; }
inline bool is_float(ElType t) { return t == ElType::Float32 || t == ElType::Float64; }
inline bool is_signed(ElType t) { return t >= ElType::Int8 && t <= ElType::Int64; }

// Julia accepts "Float64", lower case "float64", and "Int"/"int" for Int64
// (DTYPE_BY_NAME), and "String"/"string".
inline std::optional<ElType> parse_julia_name(std::string_view name) {
  if (name == "Int" || name == "int") return ElType::Int64;
  for (int i = 0; i <= static_cast<int>(ElType::String); ++i) {
    auto t = static_cast<ElType>(i);
    std::string_view j = julia_name(t);
    if (name == j) return t;
    if (name.size() == j.size()) {
      bool lower_match = true;
      for (size_t k = 0; k < name.size() && lower_match; ++k)
        lower_match = name[k] == static_cast<char>(std::tolower(static_cast<unsigned char>(j[k])));
      if (lower_match) return t;
    }
  }
  return std::nullopt;
}

inline std::optional<ElType> parse_dtype(std::string_view dtype) {
  for (int i = 0; i < static_cast<int>(ElType::String); ++i) {
    auto t = static_cast<ElType>(i);
    if (dtype == info(t).dtype) return t;
  }
  return std::nullopt;
}

// Reads element i of a little-endian integer array of type t as a signed
// 64-bit value (UInt64 above INT64_MAX comes back negative, which every
// caller rejects as out of range).
inline int64_t load_index(const unsigned char* base, ElType t, size_t i) {
  using stowage::sdk::load_le;
  switch (t) {
    case ElType::Int8:
      return static_cast<int8_t>(base[i]);
    case ElType::UInt8:
      return base[i];
    case ElType::Int16:
      return static_cast<int16_t>(load_le<uint16_t>(base + 2 * i));
    case ElType::UInt16:
      return load_le<uint16_t>(base + 2 * i);
    case ElType::Int32:
      return static_cast<int32_t>(load_le<uint32_t>(base + 4 * i));
    case ElType::UInt32:
      return load_le<uint32_t>(base + 4 * i);
    case ElType::Int64:
    case ElType::UInt64:
      return static_cast<int64_t>(load_le<uint64_t>(base + 8 * i));
    default:
      stowage::sdk::fail(STOWAGE_INTERNAL, "load_index: not an integer type");
  }
}

// Writes v as element i of a little-endian integer array of type t.
inline void store_index(unsigned char* base, ElType t, size_t i, uint64_t v) {
  using stowage::sdk::store_le;
  switch (element_size(t)) {
    case 1:
      base[i] = static_cast<uint8_t>(v);
      return;
    case 2:
      store_le<uint16_t>(base + 2 * i, static_cast<uint16_t>(v));
      return;
    case 4:
      store_le<uint32_t>(base + 4 * i, static_cast<uint32_t>(v));
      return;
    default:
      store_le<uint64_t>(base + 8 * i, v);
      return;
  }
}

// The largest value an index type holds (as Julia would use it).
inline uint64_t max_index(ElType t) {
  switch (t) {
    case ElType::Int8:
      return INT8_MAX;
    case ElType::UInt8:
      return UINT8_MAX;
    case ElType::Int16:
      return INT16_MAX;
    case ElType::UInt16:
      return UINT16_MAX;
    case ElType::Int32:
      return INT32_MAX;
    case ElType::UInt32:
      return UINT32_MAX;
    case ElType::Int64:
      return INT64_MAX;
    default:
      return UINT64_MAX;
  }
}

// TanayLabUtilities.indtype_for_size: UInt32 unless the size needs more.
inline ElType indtype_for_size(uint64_t size) {
  return size <= UINT32_MAX ? ElType::UInt32 : ElType::UInt64;
}

}  // namespace daf
