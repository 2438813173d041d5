// How stowage node paths map onto a Daf repository:
//   ""                         the root group; its attributes are the scalars
//   "axes", "vectors", "matrices", "vectors/<a>", "matrices/<r>", "matrices/<r>/<c>"  groups
//   "axes/<a>"                 the axis entries (strings)
//   "vectors/<a>/<name>"       a vector along axis a
//   "matrices/<r>/<c>/<name>"  a matrix with rows along r and columns along c
#pragma once

#include <stowage/plugin_util.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace daf {

struct NodeRef {
  enum Kind {
    Root,
    AxesGroup,
    VectorsGroup,
    MatricesGroup,
    VectorAxisGroup,
    MatrixRowsGroup,
    MatrixPairGroup,
    Axis,
    Vector,
    Matrix
  };
  Kind kind = Root;
  std::string rows;  // the axis (Axis, Vector, VectorAxisGroup) or rows axis
  std::string cols;  // the columns axis of a matrix
  std::string name;  // the property name
  bool is_property() const { return kind == Vector || kind == Matrix; }
  bool is_group() const { return kind != Axis && !is_property(); }
};

// Parses a node path; unknown shapes are NOT_FOUND.
inline NodeRef parse_node(std::string_view node) {
  std::vector<std::string> p = stowage::sdk::split_node_path(node);
  NodeRef r;
  auto not_found = [&]() -> NodeRef {
    stowage::sdk::fail(STOWAGE_NOT_FOUND,
                       "no node '" + std::string(node) +
                           "' in a Daf repository (nodes are axes/<axis>, "
                           "vectors/<axis>/<name>, matrices/<rows>/<cols>/<name>)");
  };
  if (p.empty()) return r;
  if (p[0] == "axes") {
    if (p.size() == 1) return r.kind = NodeRef::AxesGroup, r;
    if (p.size() == 2) return r.kind = NodeRef::Axis, r.rows = p[1], r;
  } else if (p[0] == "vectors") {
    if (p.size() == 1) return r.kind = NodeRef::VectorsGroup, r;
    r.rows = p[1];
    if (p.size() == 2) return r.kind = NodeRef::VectorAxisGroup, r;
    if (p.size() == 3) return r.kind = NodeRef::Vector, r.name = p[2], r;
  } else if (p[0] == "matrices") {
    if (p.size() == 1) return r.kind = NodeRef::MatricesGroup, r;
    r.rows = p[1];
    if (p.size() == 2) return r.kind = NodeRef::MatrixRowsGroup, r;
    r.cols = p[2];
    if (p.size() == 3) return r.kind = NodeRef::MatrixPairGroup, r;
    if (p.size() == 4) return r.kind = NodeRef::Matrix, r.name = p[3], r;
  }
  return not_found();
}

// Daf uses names as file names without escaping, so a name must be a valid
// file name: no '/', NUL or newline, not "." or "..", and short enough for
// the longest suffix (".rowval.zip") within NAME_MAX.
inline void check_name(const std::string& name, const char* what) {
  using stowage::sdk::invalid;
  if (name.empty() || name == "." || name == "..")
    invalid(std::string("invalid Daf ") + what + " name '" + name + "'");
  for (char c : name)
    if (c == '/' || c == '\0' || c == '\n')
      invalid(std::string("invalid Daf ") + what + " name '" + name +
              "': it is used as a file name and may not contain '/', NUL or a newline");
  if (name.size() > 240)
    invalid(std::string("invalid Daf ") + what + " name '" + name.substr(0, 40) +
            "...': longer than 240 bytes");
}

}  // namespace daf
