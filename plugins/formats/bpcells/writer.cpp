#include "writer.hpp"

#include "reader.hpp"  // looks_like_matrix_dir

#include <algorithm>
#include <cctype>
#include <cstring>
#include <numeric>

namespace stowage::bpcells {

MatrixWriter::MatrixWriter(const sdk::Storage& storage, std::string dest, MatrixSpec spec)
    : storage_(storage),
      dest_(std::move(dest)),
      spec_(spec),
      value_size_(element_size(spec.version.value)) {
  while (dest_.size() > 1 && dest_.back() == '/') dest_.pop_back();
  spec_.version.format = 2;
  if (spec_.rows > UINT32_MAX || spec_.cols > UINT32_MAX)
    sdk::invalid(dest_ + ": BPCells stores the shape as uint32; " + std::to_string(spec_.rows) +
                 " x " + std::to_string(spec_.cols) + " is too large");
  if (spec_.version.packed && spec_.version.value == Element::uint64)
    sdk::unsupported(dest_ + ": BPCells has no packed uint64 (ulong) matrices; write it unpacked");
  const int32_t kind = storage_.kind(dest_);
  if (kind == STOWAGE_ENTRY_FILE)
    sdk::invalid(dest_ + ": exists and is not a directory; refusing to replace it");
  if (kind == STOWAGE_ENTRY_DIRECTORY && !storage_.list(dest_).empty() &&
      !looks_like_matrix_dir(storage_, dest_))
    sdk::invalid(dest_ + ": exists and is not a BPCells matrix directory; refusing to replace it");
  naming_destination([&] {
    temp_ = storage_.stage_directory(dest_);  // parent directories are made too
    open_files();
  });
}

// Every mention of the staged directory, or of a backend temporary
// (".<name>.stowage-tmp.<pid>.<n>"), becomes the destination's name.
std::string MatrixWriter::in_destination_words(std::string message) const {
  if (!temp_.empty())
    for (size_t at; (at = message.find(temp_)) != std::string::npos;)
      message.replace(at, temp_.size(), dest_);
  return sdk::without_temporaries(std::move(message));
}

void MatrixWriter::open_files() {
  const bool packed = spec_.version.packed;
  const bool packed_uint = packed && spec_.version.value == Element::uint32;
  if (packed) {
    index_data_.emplace(storage_, temp_file("index_data"), Element::uint32);
    index_enc_ = std::make_unique<bp128::Encoder>(
        bp128::Variant::d1z,
        [this](const uint32_t* w, size_t n) { index_data_->write(w, n * sizeof(uint32_t)); });
  } else {
    index_file_.emplace(storage_, temp_file("index"), Element::uint32);
  }
  if (packed_uint) {
    val_data_.emplace(storage_, temp_file("val_data"), Element::uint32);
    val_enc_ = std::make_unique<bp128::Encoder>(
        bp128::Variant::m1,
        [this](const uint32_t* w, size_t n) { val_data_->write(w, n * sizeof(uint32_t)); });
  } else {
    val_file_.emplace(storage_, temp_file("val"), spec_.version.value);
  }
}

MatrixWriter::~MatrixWriter() {
  if (committed_) return;
  // Abandoned: drop our staged files and remove the staged directory.
  index_file_.reset();
  val_file_.reset();
  index_data_.reset();
  val_data_.reset();
  try {
    storage_.remove_if_exists(temp_);
  } catch (...) {  // a hidden leftover directory, harmless; a throwing destructor is not
  }
}

// ---- appending ---------------------------------------------------------------

void MatrixWriter::append(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
                          const void* values) {
  naming_destination([&] { append_batch(n_major, indptr, indices, values); });
}

void MatrixWriter::append_batch(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
                                const void* values) {
  if (committed_) sdk::invalid(dest_ + ": append after close");
  if (n_major > majors() - majors_written())
    sdk::invalid(dest_ + ": appending " + std::to_string(n_major) + " majors to " +
                 std::to_string(majors_written()) + " already written exceeds the " +
                 std::to_string(majors()) + " of the matrix");
  if (indptr[0] != 0) sdk::invalid(dest_ + ": append: indptr must start at 0");
  for (uint64_t m = 0; m < n_major; ++m)
    if (indptr[m + 1] < indptr[m])
      sdk::invalid(dest_ + ": append: indptr decreases at entry " + std::to_string(m + 1));
  const uint64_t total = indptr[n_major];
  if (total > UINT64_MAX - nnz()) sdk::invalid(dest_ + ": too many stored values");

  const char* vals = static_cast<const char*>(values);
  if (sorted_in_range(n_major, indptr, indices)) {
    write_pairs(indices, vals, total);  // the whole batch at once
  } else {
    for (uint64_t m = 0; m < n_major; ++m)
      sort_and_write(indices + indptr[m], vals + indptr[m] * value_size_, indptr[m + 1] - indptr[m],
                     m);
  }
  for (uint64_t m = 1; m <= n_major; ++m)
    idxptr_.push_back(idxptr_.back() + indptr[m] - indptr[m - 1]);
}

// Whether every major's indices increase strictly and lie in the matrix: the
// usual case, checked by a vectorized pass per major (a per-index loop with
// its error branch is a visible part of a write). Otherwise the slow pass finds an
// index out of range (an error) or says the batch needs sorting.
bool MatrixWriter::sorted_in_range(uint64_t n_major, const uint64_t* indptr,
                                   const uint32_t* indices) const {
  const uint64_t limit = minors();
  bool fast = true;
  for (uint64_t m = 0; m < n_major && fast; ++m) {
    uint64_t b = indptr[m], e = indptr[m + 1];
    fast = b == e || (indices[e - 1] < limit && strictly_increasing(indices + b, e - b));
  }
  if (fast) return true;
  for (uint64_t m = 0; m < n_major; ++m)
    for (uint64_t k = indptr[m]; k < indptr[m + 1]; ++k)
      if (indices[k] >= limit)
        sdk::invalid(dest_ + ": append: index " + std::to_string(indices[k]) + " in major " +
                     std::to_string(majors_written() + m) + " is outside the " +
                     std::to_string(limit) + (spec_.row_major ? " columns" : " rows"));
  return false;
}

// Writes one major's n (index, value) pairs sorted by index (BPCells keeps
// each major sorted); a repeated index is refused.
void MatrixWriter::sort_and_write(const uint32_t* indices, const char* values, uint64_t n,
                                  uint64_t m) {
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), uint64_t(0));
  std::sort(order_.begin(), order_.end(),
            [&](uint64_t a, uint64_t b) { return indices[a] < indices[b]; });
  sorted_indices_.resize(n);
  sorted_values_.resize(n * value_size_);
  for (uint64_t k = 0; k < n; ++k) {
    sorted_indices_[k] = indices[order_[k]];
    std::memcpy(&sorted_values_[k * value_size_], values + order_[k] * value_size_, value_size_);
    if (k > 0 && sorted_indices_[k] == sorted_indices_[k - 1])
      sdk::invalid(dest_ + ": append: index " + std::to_string(sorted_indices_[k]) +
                   " appears twice in major " + std::to_string(majors_written() + m));
  }
  write_pairs(sorted_indices_.data(), sorted_values_.data(), n);
}

void MatrixWriter::write_pairs(const uint32_t* indices, const char* values, uint64_t n) {
  if (index_enc_)
    index_enc_->push(indices, n);
  else
    index_file_->write(indices, n * sizeof(uint32_t));
  write_values(values, n);
}

void MatrixWriter::write_values(const void* values, uint64_t n) {
  if (val_enc_)
    val_enc_->push(static_cast<const uint32_t*>(values), n);
  else
    val_file_->write(values, n * value_size_);
}

void MatrixWriter::set_names(bool rows, const std::vector<std::string_view>& names) {
  uint64_t expected = rows ? spec_.rows : spec_.cols;
  const char* what = rows ? "row_names" : "col_names";
  if (!names.empty() && names.size() != expected)
    sdk::invalid(dest_ + ": " + what + " needs 0 or " + std::to_string(expected) + " names, got " +
                 std::to_string(names.size()));
  std::vector<std::string> copy;
  copy.reserve(names.size());
  for (std::string_view name : names) {
    // One name per line: a newline cannot be stored, a trailing CR would be dropped on reading.
    if (name.find('\n') != std::string_view::npos || (!name.empty() && name.back() == '\r'))
      sdk::invalid(dest_ + ": " + what + ": name '" + std::string(name) +
                   "' contains a line break, which BPCells cannot store");
    copy.emplace_back(name);
  }
  (rows ? row_names_ : col_names_) = std::move(copy);
}

// ---- committing --------------------------------------------------------------

void MatrixWriter::finish_packed(bp128::Encoder& enc, const char* name, bool with_starts) {
  enc.finish();
  std::string base = temp_ + "/" + name;
  write_array_file(storage_, base + "_idx", Element::uint32, enc.idx());
  write_array_file(storage_, base + "_idx_offsets", Element::uint64, enc.idx_offsets());
  if (with_starts) write_array_file(storage_, base + "_starts", Element::uint32, enc.starts());
}

void MatrixWriter::commit() {
  if (committed_) return;
  if (majors_written() != majors())
    sdk::invalid(dest_ + ": the matrix is incomplete: " + std::to_string(majors_written()) +
                 " of " + std::to_string(majors()) + (spec_.row_major ? " rows" : " columns") +
                 " appended");
  naming_destination([&] { write_and_publish(); });
}

// The files not yet written, then the directory moved over the destination.
void MatrixWriter::write_and_publish() {
  if (index_enc_) {
    finish_packed(*index_enc_, "index", true);
    index_data_->close();
  } else {
    index_file_->close();
  }
  if (val_enc_) {
    finish_packed(*val_enc_, "val", false);
    val_data_->close();
  } else {
    val_file_->close();
  }
  write_array_file(storage_, temp_file("idxptr"), Element::uint64, idxptr_);
  write_array_file(storage_, temp_file("shape"), Element::uint32,
                   std::vector<uint32_t>{uint32_t(spec_.rows), uint32_t(spec_.cols)});
  write_lines_file(storage_, temp_file("storage_order"), {spec_.row_major ? "row" : "col"});
  write_lines_file(storage_, temp_file("version"), {spec_.version.text()});
  write_lines_file(storage_, temp_file("row_names"), row_names_);
  write_lines_file(storage_, temp_file("col_names"), col_names_);
  publish();
}

// Moves the finished directory over the destination: a crash leaves the
// old matrix or the new one under that name, never none (the file backend
// swaps directories with RENAME_EXCHANGE), and the old one is removed after.
void MatrixWriter::publish() {
  storage_.move(temp_, dest_, STOWAGE_PUBLISH_REPLACE);
  committed_ = true;
}

}  // namespace stowage::bpcells
