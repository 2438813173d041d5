// Reading a BPCells matrix directory. Opening checks every file's header and
// length against idxptr and shape and loads the small arrays (idxptr, the
// BP-128 idx/starts, names); reading a range of majors then touches only the
// index and value words of those majors.
#pragma once

#include "bp128.hpp"
#include "files.hpp"
#include "version.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stowage::bpcells {

// One BP-128 encoded array on disk: <name>_data, <name>_idx, <name>_idx_offsets
// (v2), <name>_starts (d1/d1z).
class PackedArray {
 public:
  // `map`: decode from a read-only map of <name>_data (else through pread).
  PackedArray(const std::string& dir, const std::string& name, bp128::Variant variant,
              uint64_t count, int format_version, bool map);
  // Decodes values [first, first+n) into out, chunk by chunk, straight from
  // the map or through the calling thread's window on the data (reader.cpp).
  void read(uint64_t first, uint64_t n, uint32_t* out) const;
  const std::string& data_path() const { return data_.path(); }

 private:
  struct Window;
  Window& window() const;
  const uint32_t* chunk_words(Window& w, uint64_t chunk, uint64_t last_chunk) const;
  void decode(const uint32_t* words, uint64_t chunk, uint32_t* out) const;

  uint64_t id_;  // names this array in the threads' windows; never reused
  const bp128::ChunkDecoders* decoders_;
  ArrayFile data_;
  std::shared_ptr<const void> mapping_;  // keeps mapped_ valid
  const uint32_t* mapped_ = nullptr;     // the data words, when mapped
  std::vector<uint64_t> offsets_;  // word offset of each chunk, nchunks+1 entries
  std::vector<uint32_t> starts_;
};

class MatrixReader {
 public:
  // `map`: decode packed data from read-only maps (the "mmap" open option).
  explicit MatrixReader(std::string dir, bool map = true);

  const std::string& dir() const { return dir_; }
  const MatrixVersion& version() const { return version_; }
  const std::string& version_text() const { return version_text_; }
  bool row_major() const { return row_major_; }
  uint64_t rows() const { return rows_; }
  uint64_t cols() const { return cols_; }
  uint64_t majors() const { return idxptr_.size() - 1; }
  uint64_t minors() const { return row_major_ ? cols_ : rows_; }
  uint64_t nnz() const { return idxptr_.back(); }
  const std::vector<std::string>& row_names() const { return row_names_; }
  const std::vector<std::string>& col_names() const { return col_names_; }

  uint64_t count(uint64_t begin, uint64_t end) const;
  // indptr: end-begin+1 entries from 0; values of the matrix's element type.
  void read(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* indices, void* values,
            uint64_t capacity) const;

 private:
  std::string file(const char* name) const { return dir_ + "/" + name; }
  void read_version();
  void read_storage_order();
  void read_shape();
  void read_idxptr();
  std::vector<std::string> read_names(const char* name, uint64_t expected) const;
  void check_range(uint64_t begin, uint64_t end) const;
  void check_indices(const uint64_t* indptr, uint64_t n_majors, const uint32_t* indices) const;
  [[noreturn]] void index_error(uint64_t major, const uint32_t* indices, uint64_t n) const;

  std::string dir_;
  MatrixVersion version_;
  std::string version_text_;
  bool row_major_ = false;
  uint64_t rows_ = 0, cols_ = 0;
  std::vector<uint64_t> idxptr_;
  std::vector<std::string> row_names_, col_names_;
  // Unpacked: plain files. Packed: BP-128 index, and BP-128 val for uint.
  std::optional<ArrayFile> index_, val_;
  std::optional<PackedArray> packed_index_, packed_val_;
};

// Whether v[0..n) increases strictly (a major's indices as BPCells stores them).
bool strictly_increasing(const uint32_t* v, uint64_t n);

// Whether `path` looks like a BPCells matrix directory (a cheap check of its
// version file).
bool looks_like_matrix_dir(const std::string& path);

}  // namespace stowage::bpcells
