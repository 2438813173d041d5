// Writing a BPCells matrix directory (format v2) the way BPCells 0.3.1 does:
// packed uint = index BP-128 d1z + val BP-128 m1; packed float/double = index
// d1z + plain val; unpacked = plain index and val. Majors are appended in order
// and encoded as they arrive; only idxptr and the BP-128 idx/starts (a few
// bytes per 128 values) stay in memory. Everything goes into a staged
// directory beside the destination (Storage::stage_directory), moved into
// place by commit(); a writer destroyed without commit() removes it, leaving
// nothing behind.
#pragma once

#include "bp128.hpp"
#include "files.hpp"
#include "version.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::bpcells {

struct MatrixSpec {
  MatrixVersion version;  // packed and value type; format is always 2
  bool row_major = false;
  uint64_t rows = 0, cols = 0;
};

class MatrixWriter {
 public:
  MatrixWriter(const sdk::Storage& storage, std::string dest, MatrixSpec spec);
  ~MatrixWriter();
  MatrixWriter(const MatrixWriter&) = delete;
  MatrixWriter& operator=(const MatrixWriter&) = delete;

  const MatrixSpec& spec() const { return spec_; }
  uint64_t majors() const { return spec_.row_major ? spec_.rows : spec_.cols; }
  uint64_t minors() const { return spec_.row_major ? spec_.cols : spec_.rows; }
  uint64_t majors_written() const { return idxptr_.size() - 1; }
  uint64_t nnz() const { return idxptr_.back(); }

  // Appends n_major majors (indptr: n_major+1 entries from 0). Indices within
  // a major are sorted if they are not; a repeated index is INVALID_ARGUMENT.
  void append(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
              const void* values);
  // Row or column names: none, or exactly one per row/column.
  void set_names(bool rows, const std::vector<std::string_view>& names);
  const std::vector<std::string>& names(bool rows) const { return rows ? row_names_ : col_names_; }

  // Writes the remaining files and renames the directory into place.
  void commit();

 private:
  // Runs `step` on the staged directory; its errors name the destination
  // the user gave, never the staged name (".o.bpcells.stowage-tmp.<pid>.0").
  template <class Step>
  void naming_destination(Step&& step) {
    try {
      step();
    } catch (const sdk::Error& e) {
      throw sdk::Error(e.code(), in_destination_words(e.what()));
    }
  }
  std::string in_destination_words(std::string message) const;
  void open_files();
  void append_batch(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
                    const void* values);
  void write_and_publish();
  std::string temp_file(const char* name) const { return temp_ + "/" + name; }
  bool sorted_in_range(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices) const;
  void sort_and_write(const uint32_t* indices, const char* values, uint64_t n,
                      uint64_t major_in_batch);
  void write_pairs(const uint32_t* indices, const char* values, uint64_t n);
  void write_values(const void* values, uint64_t n);
  void finish_packed(bp128::Encoder& enc, const char* name, bool with_starts);
  void publish();

  sdk::Storage storage_;
  std::string dest_, temp_;
  MatrixSpec spec_;
  size_t value_size_;
  std::vector<uint64_t> idxptr_{0};
  std::vector<std::string> row_names_, col_names_;
  // Open outputs: plain files, or BP-128 encoders feeding <name>_data files.
  std::optional<OutputFile> index_file_, val_file_, index_data_, val_data_;
  std::unique_ptr<bp128::Encoder> index_enc_, val_enc_;
  // Scratch for majors whose indices arrive unsorted.
  std::vector<uint32_t> sorted_indices_;
  std::vector<char> sorted_values_;
  std::vector<uint64_t> order_;
  bool committed_ = false;
};

}  // namespace stowage::bpcells
