// The version string of a BPCells matrix directory,
// "<packed|unpacked>-<uint|ulong|float|double>-matrix-v<1|2>", which decides
// which files exist and what type each holds.
#pragma once

#include "files.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace stowage::bpcells {

struct MatrixVersion {
  bool packed = true;
  Element value = Element::uint32;
  int format = 2;  // 1: idxptr is UINT32 and no idx_offsets; 2: UINT64 and idx_offsets

  std::string text() const {
    return std::string(packed ? "packed-" : "unpacked-") + value_word(value) + "-matrix-v" +
           std::to_string(format);
  }
  static const char* value_word(Element e) {
    switch (e) {
      case Element::uint32:
        return "uint";
      case Element::uint64:
        return "ulong";
      case Element::float32:
        return "float";
      case Element::float64:
        return "double";
    }
    return "?";
  }
  // The dtype name of the data model.
  static const char* dtype(Element e) {
    switch (e) {
      case Element::uint32:
        return "uint32";
      case Element::uint64:
        return "uint64";
      case Element::float32:
        return "float32";
      case Element::float64:
        return "float64";
    }
    return "?";
  }
};

// Parses a version string; nullopt when it is not one of the strings above.
inline std::optional<MatrixVersion> parse_version(std::string_view s) {
  MatrixVersion v;
  if (s.substr(0, 7) == "packed-") {
    s.remove_prefix(7);
  } else if (s.substr(0, 9) == "unpacked-") {
    v.packed = false;
    s.remove_prefix(9);
  } else {
    return std::nullopt;
  }
  size_t dash = s.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view word = s.substr(0, dash);
  if (word == "uint")
    v.value = Element::uint32;
  else if (word == "ulong")
    v.value = Element::uint64;
  else if (word == "float")
    v.value = Element::float32;
  else if (word == "double")
    v.value = Element::float64;
  else
    return std::nullopt;
  s.remove_prefix(dash);
  if (s == "-matrix-v1")
    v.format = 1;
  else if (s == "-matrix-v2")
    v.format = 2;
  else
    return std::nullopt;
  return v;
}

}  // namespace stowage::bpcells
