// A stored vector or matrix property, validated and opened for reading.
//
// Numeric dense data is mapped (Storage::map: a memory map of a local file) and copied into the
// caller's buffer (files are replaced by rename, never rewritten in place, so a map stays valid);
// sparse components are memory-mapped too and converted (1-based Julia indices of any integer type
// to 0-based uint64 indptr / uint32 indices); String data is loaded once, densified, and kept
// column-major.
#pragma once

#include "daf_files.hpp"
#include "daf_json.hpp"
#include "daf_node.hpp"
#include "daf_tiling.hpp"

#include <stowage/plugin.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace daf {

struct Property {
  sdk::Host host;        // of the store: packed components decode through its codecs
  sdk::Storage storage;  // where the files are (reads of packed components, relayout)
  std::string node;      // "vectors/cell/x"
  std::string base;      // file path without suffix: <root>/vectors/cell/x
  bool matrix = false;
  uint64_t rows = 0, cols = 1;  // vectors: cols == 1
  Descriptor desc;
  Tiling tiling;  // the chunk grid of numeric arrays
  // Numeric dense: the .data file mapped, or the decoded packed .zip.
  std::unique_ptr<Mapped> dense;
  // Numeric sparse.
  uint64_t nnz = 0;
  std::unique_ptr<Mapped> indices;  // .nzind or .rowval
  std::unique_ptr<Mapped> colptr;   // matrices
  std::unique_ptr<Mapped> values;   // .nzval, null when all values are true
  // String data, dense, column-major (rows * cols entries).
  std::vector<std::string> strings;
  // Set when the data cannot be read (e.g. an unsupported packed codec);
  // describe() still works, reads fail with this UNSUPPORTED message.
  std::string unreadable;

  bool is_string() const { return desc.eltype == ElType::String; }
  bool is_sparse_matrix() const { return matrix && desc.sparse && !is_string(); }
  bool all_true() const { return desc.sparse && !is_string() && !values; }

  // Kind "array" (dense, or sparse vector densified per chunk).
  void read_chunk(const uint64_t* chunk_index, void* out, size_t capacity,
                  uint64_t* chunk_shape) const;
  // Kind "sparse" (CSC matrices).
  uint64_t sparse_count(uint64_t begin, uint64_t end) const;
  void read_sparse(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* out_indices,
                   void* out_values, uint64_t capacity) const;
  // Kind "strings": elements [begin, end) of the C-order (row-major) array.
  void read_strings(uint64_t begin, uint64_t end, const sdk::ItemFn& item) const;

 private:
  uint64_t colptr_at(uint64_t column) const;  // 1-based Julia value
  void densify_sparse_vector(uint64_t begin, uint64_t count, unsigned char* out) const;
  void read_runs(const Tiling::Tile& t, unsigned char* out) const;
};

// Opens and validates the property `ref` stored under `root` in `storage`,
// whose axes have `rows` and `cols` entries (cols = 1 for vectors).
std::shared_ptr<const Property> load_property(const sdk::Host& host, const sdk::Storage& storage,
                                              const std::string& root, const NodeRef& ref,
                                              const std::string& node, uint64_t rows,
                                              uint64_t cols);

// Every file suffix a property may use (for deletes).
const std::vector<std::string>& property_suffixes();

}  // namespace daf
