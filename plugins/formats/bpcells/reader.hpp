// Reading a BPCells matrix directory. Opening checks every file's header and
// length against idxptr and shape and loads the small arrays (idxptr, the
// BP-128 idx/starts, names); reading a range of majors then touches only the
// index and value words of those majors.
#pragma once

#include "bp128.hpp"
#include "files.hpp"
#include "version.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stowage::bpcells {

// What one read keeps of one packed array for the next: the chunk it
// decoded last and, when the data is not in memory ({"mmap": false}, or a
// storage without maps), a window of its _data words (reader.cpp).
struct Window {
  uint64_t begin = 0, end = 0;  // data words [begin, end) are in `words`
  std::unique_ptr<uint32_t[]> words;
  uint64_t chunk = UINT64_MAX;  // the chunk in `decoded`
  alignas(32) uint32_t decoded[bp128::kChunkValues];
};

// One BP-128 encoded array on disk: <name>_data, <name>_idx, <name>_idx_offsets
// (v2), <name>_starts (d1/d1z).
class PackedArray {
 public:
  // `map`: decode from <name>_data held in memory (a read-only map on local
  // disk), else through ranged reads into a window.
  PackedArray(const sdk::Storage& storage, const std::string& dir, const std::string& name,
              bp128::Variant variant, uint64_t count, int format_version, bool map);
  // Decodes values [first, first+n) into out, chunk by chunk, straight from
  // the map or through the window `w` on the data.
  void read(uint64_t first, uint64_t n, uint32_t* out, Window& w) const;
  const std::string& data_path() const { return data_.path(); }

 private:
  const uint32_t* chunk_words(Window& w, uint64_t chunk, uint64_t last_chunk) const;
  void decode(const uint32_t* words, uint64_t chunk, uint32_t* out) const;

  const bp128::ChunkDecoders* decoders_;
  ArrayFile data_;
  const uint32_t* mapped_ = nullptr;  // the data words, when in memory
  std::vector<uint64_t> offsets_;     // word offset of each chunk, nchunks+1 entries
  std::vector<uint32_t> starts_;
};

// The windows of the reads running at once on one matrix, owned by its
// reader (no thread_local: the state lives and dies with the store). A read
// takes a free slot -- one atomic exchange, the first slot for a single
// thread, so a column-by-column read finds the chunk the previous column
// ended in -- and gives it back at its end; more concurrent reads than slots
// get a fresh pair of windows each.
class WindowPool {
 public:
  struct Pair {
    Window index, val;
  };
  class Lease {
   public:
    Lease(std::atomic<bool>* busy, Pair* pair) : busy_(busy), pair_(pair) {}
    explicit Lease(std::unique_ptr<Pair> own) : own_(std::move(own)), pair_(own_.get()) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (busy_) busy_->store(false, std::memory_order_release);
    }
    Pair& operator*() const { return *pair_; }
    Pair* operator->() const { return pair_; }

   private:
    std::atomic<bool>* busy_ = nullptr;
    std::unique_ptr<Pair> own_;
    Pair* pair_;
  };
  Lease acquire() {
    for (Slot& s : slots_)
      if (!s.busy.load(std::memory_order_relaxed) &&
          !s.busy.exchange(true, std::memory_order_acquire))
        return Lease(&s.busy, &s.pair);
    return Lease(std::make_unique<Pair>());
  }

 private:
  struct alignas(64) Slot {  // one cache line each for the flags of concurrent readers
    std::atomic<bool> busy{false};
    Pair pair;
  };
  Slot slots_[8];
};

class MatrixReader {
 public:
  // `map`: read the data files in place (the "mmap" open option), where the
  // storage maps files (a local disk); else through ranged reads.
  MatrixReader(const sdk::Storage& storage, std::string dir, bool map = true);

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

  sdk::Storage storage_;
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
  mutable WindowPool windows_;
};

// Whether v[0..n) increases strictly (a major's indices as BPCells stores them).
bool strictly_increasing(const uint32_t* v, uint64_t n);

// Whether `path` looks like a BPCells matrix directory (a cheap check of its
// version file).
bool looks_like_matrix_dir(const sdk::Storage& storage, const std::string& path);

}  // namespace stowage::bpcells
