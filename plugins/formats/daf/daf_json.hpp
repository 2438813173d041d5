// The small JSON files of a Daf repository: daf.json, scalars/<name>.json and
// the property descriptors <name>.json of vectors and matrices.
#pragma once

#include "daf_types.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace daf {

using Json = nlohmann::json;

// A repository format version, e.g. {1, 0}.
using Version = std::array<int64_t, 2>;
inline constexpr int64_t kMajor = 1;
inline constexpr int64_t kMaxMinor = 1;

// Parses daf.json; refuses another major or a higher minor, naming the file
// and the version found.
Version parse_daf_json(std::string_view text, const std::string& file);
std::string format_daf_json(Version v);  // {"version":[1,0]}\n

// ---- scalars ----------------------------------------------------------------

struct Scalar {
  ElType type = ElType::Int64;
  Json value;  // normalised: bool, integer, double (Float32 widened) or string
};

// Reads scalars/<name>.json: {"type":T,"value":V} in any key order; Bool may
// be true/false or 0/1 (dafr); integers are exact. Malformed is CORRUPT.
Scalar parse_scalar(std::string_view text, const std::string& file);
// Checks that `value` fits `type` and normalises it; `what` names it in the
// INVALID_ARGUMENT error.
Json normalize_scalar(ElType type, const Json& value, const std::string& what);
// The type a plain JSON value gets when no type is given.
ElType infer_scalar_type(const Json& value, const std::string& what);
// {"type":T,"value":V}\n with Julia's number syntax (3.14, 1.0e20, -0.0).
std::string format_scalar(const Scalar& s);
// Julia's shortest round-trip printing of a Float64 / Float32.
std::string julia_float(double v);
std::string julia_float(float v);

// ---- property descriptors ---------------------------------------------------------

// A packed ("indexed+zipped") component and its layout.
struct Packing {
  std::vector<uint64_t> chunk_shape;
  std::string compression;
  int64_t level = 0;
};

struct Descriptor {
  bool sparse = false;
  ElType eltype = ElType::Float64;
  ElType indtype = ElType::UInt32;    // sparse only
  bool v11_schema = false;            // sparse: per-component descriptors
  bool nzval_in_descriptor = true;    // v1.1: whether an "nzval" component is declared
  std::optional<uint64_t> n_indices;  // v1.1 n_elements of nzind / rowval
  std::optional<uint64_t> n_colptr;   // v1.1 n_elements of colptr
  // Packed data, by component ("" = the dense property itself).
  std::vector<std::pair<std::string, Packing>> packed;
  bool is_packed(const std::string& component) const;
};

// Parses a vector (matrix=false) or matrix descriptor, choosing the v1.0 or
// v1.1 sparse schema from its keys.
Descriptor parse_descriptor(std::string_view text, const std::string& file, bool matrix);
// Writes a flat descriptor in the v1.0 or v1.1 schema; n_indices/n_colptr are
// used by v1.1 and nzval is always declared (we always write .nzval).
std::string format_descriptor(const Descriptor& d, bool matrix, bool v11, uint64_t n_indices,
                              uint64_t n_colptr);

}  // namespace daf
