#include "reader.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

namespace stowage::bpcells {

namespace {
constexpr uint64_t kMaxTextFile = 4096;  // version and storage_order are one short line

// A read running on from where its window ends fetches this many words of a
// packed array at once (128 KiB: index and values together stay in a 1 MiB L2).
constexpr uint64_t kWindowWords = uint64_t(1) << 15;
}  // namespace

// The window (reader.hpp): a column ending inside a chunk leaves it decoded
// for the next column, which would otherwise decode it a second time (one
// chunk in four at ~490 values per column). The words: two small reads per
// column would spend much of a column-by-column read in the kernel
// (docs/performance.md), so once reads run on from where the window ends, one
// ranged read fetches the next kWindowWords, while a random read fetches only
// its own chunks.

// The words of `chunk`, from the window; a miss refills it from the chunk on:
// kWindowWords when the read continues the window (streaming), else just the
// chunks up to `last_chunk` (a random read).
const uint32_t* PackedArray::chunk_words(Window& w, uint64_t chunk, uint64_t last_chunk) const {
  if (mapped_) return mapped_ + offsets_[chunk];
  const uint64_t begin = offsets_[chunk], end = offsets_[chunk + 1];
  if (begin >= w.begin && end <= w.end) return w.words.get() + (begin - w.begin);
  const bool streaming = begin >= w.begin && begin <= w.end && w.end > 0;
  uint64_t want = std::min(offsets_[last_chunk + 1] - begin, kWindowWords);
  if (streaming) want = kWindowWords;
  want = std::max(std::min(want, offsets_.back() - begin), end - begin);
  if (!w.words) w.words.reset(new uint32_t[kWindowWords]);  // uninitialised: the read fills it
  data_.read(begin, want, w.words.get());
  w.begin = begin;
  w.end = begin + want;
  return w.words.get();
}

void PackedArray::decode(const uint32_t* words, uint64_t chunk, uint32_t* out) const {
  unsigned bits = unsigned((offsets_[chunk + 1] - offsets_[chunk]) / 4);  // <= 32, checked on open
  decoders_->by_width[bits](words, starts_.empty() ? 0 : starts_[chunk], out);
}

// ---- PackedArray --------------------------------------------------------------

PackedArray::PackedArray(const sdk::Storage& storage, const std::string& dir,
                         const std::string& name, bp128::Variant variant, uint64_t count,
                         int format_version, bool map)
    : decoders_(&bp128::chunk_decoders(variant)),
      data_(storage, dir + "/" + name + "_data", Element::uint32) {
  uint64_t chunks = (count + bp128::kChunkValues - 1) / bp128::kChunkValues;
  ArrayFile idx_file(storage, dir + "/" + name + "_idx", Element::uint32);
  auto idx = idx_file.read_exactly<uint32_t>(chunks + 1, "one per 128 values, plus one");
  std::vector<uint64_t> idx_offsets;
  std::string what = idx_file.path();
  if (format_version >= 2) {
    ArrayFile off_file(storage, dir + "/" + name + "_idx_offsets", Element::uint64);
    // At most one wrap per 2^32 words, so a valid file is tiny; refuse huge ones before reading.
    uint64_t max_entries = data_.count() / bp128::kOffsetIncrement + 2;
    if (off_file.count() < 2 || off_file.count() > max_entries)
      sdk::corrupt(off_file.path() + ": holds " + std::to_string(off_file.count()) +
                   " entries; expected 2.." + std::to_string(max_entries));
    idx_offsets = off_file.read_exactly<uint64_t>(off_file.count(), "");
    what += " / " + off_file.path();
  }
  offsets_ = bp128::resolve_offsets(idx, idx_offsets, data_.count(),
                                    what + " (against " + data_.path() + ")");
  if (bp128::has_starts(variant))
    starts_ = ArrayFile(storage, dir + "/" + name + "_starts", Element::uint32)
                  .read_exactly<uint32_t>(chunks, "one per 128 values");
  if (map) {
    data_.map();
    mapped_ = static_cast<const uint32_t*>(data_.mapped());
  }
}

// Whole chunks are decoded straight into `out`; the partial ones at either
// end go through the window's `decoded`, which the next read may reuse.
void PackedArray::read(uint64_t first, uint64_t n, uint32_t* out, Window& w) const {
  if (n == 0) return;
  uint64_t chunk = first / bp128::kChunkValues, skip = first % bp128::kChunkValues;
  const uint64_t last_chunk = (first + n - 1) / bp128::kChunkValues;
  for (; n > 0; ++chunk, skip = 0) {
    uint64_t take = std::min<uint64_t>(n, bp128::kChunkValues - skip);
    if (chunk != w.chunk && take == bp128::kChunkValues) {
      decode(chunk_words(w, chunk, last_chunk), chunk, out);
    } else {
      if (chunk != w.chunk) {
        decode(chunk_words(w, chunk, last_chunk), chunk, w.decoded);
        w.chunk = chunk;
      }
      std::copy_n(w.decoded + skip, take, out);
    }
    out += take;
    n -= take;
  }
}

// ---- MatrixReader ------------------------------------------------------------

MatrixReader::MatrixReader(const sdk::Storage& storage, std::string dir, bool map)
    : storage_(storage), dir_(std::move(dir)) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  const int32_t kind = storage_.kind(dir_);
  if (kind == STOWAGE_ENTRY_ABSENT) sdk::fail(STOWAGE_NOT_FOUND, dir_ + ": no such directory");
  if (kind != STOWAGE_ENTRY_DIRECTORY)
    sdk::invalid(dir_ + ": not a directory (a BPCells matrix is a directory of files)");
  // In place only where that is a map: over HTTP it would download every
  // file whole before the first column.
  map = map && storage_.can(STOWAGE_CAP_MAP);
  read_version();
  read_storage_order();
  read_shape();
  read_idxptr();
  const uint64_t nnz = idxptr_.back();
  if (version_.packed) {
    packed_index_.emplace(storage_, dir_, "index", bp128::Variant::d1z, nnz, version_.format, map);
    if (version_.value == Element::uint32)
      packed_val_.emplace(storage_, dir_, "val", bp128::Variant::m1, nnz, version_.format, map);
  } else {
    index_.emplace(storage_, file("index"), Element::uint32);
    index_->require_count(nnz, "the number of stored values, the last idxptr entry");
    if (map) index_->map();
  }
  if (!packed_val_) {
    val_.emplace(storage_, file("val"), version_.value);
    val_->require_count(nnz, "the number of stored values, the last idxptr entry");
    if (map) val_->map();
  }
  row_names_ = read_names("row_names", rows_);
  col_names_ = read_names("col_names", cols_);
}

void MatrixReader::read_version() {
  std::vector<std::string> lines = read_lines(storage_, file("version"), kMaxTextFile);
  if (lines.size() != 1)
    sdk::corrupt(file("version") + ": must hold exactly one line, found " +
                 std::to_string(lines.size()));
  version_text_ = lines[0];
  auto v = parse_version(version_text_);
  if (!v) {
    if (version_text_.find("-fragments-v") != std::string::npos)
      sdk::unsupported(file("version") + ": '" + version_text_ +
                       "' is a BPCells fragment directory; only matrix directories are supported");
    if (version_text_.find("-matrix-v") != std::string::npos)
      sdk::unsupported(
          file("version") + ": BPCells matrix version '" + version_text_ +
          "' is not supported (supported: <packed|unpacked>-<uint|float|double>-matrix-v<1|2>, "
          "unpacked-ulong-matrix-v<1|2>)");
    sdk::corrupt(file("version") + ": '" + version_text_ + "' is not a BPCells matrix version");
  }
  if (v->packed && v->value == Element::uint64)
    sdk::unsupported(file("version") + ": '" + version_text_ +
                     "': BPCells has no packed ulong matrices");
  version_ = *v;
}

void MatrixReader::read_storage_order() {
  std::vector<std::string> lines = read_lines(storage_, file("storage_order"), kMaxTextFile);
  std::string order = lines.empty() ? "" : lines[0];  // BPCells looks at the first line only
  if (order != "col" && order != "row")
    sdk::corrupt(file("storage_order") + ": is '" + order + "', expected 'col' or 'row'");
  row_major_ = order == "row";
}

void MatrixReader::read_shape() {
  auto shape =
      ArrayFile(storage_, file("shape"), Element::uint32).read_exactly<uint32_t>(2, "rows, cols");
  rows_ = shape[0];
  cols_ = shape[1];
}

void MatrixReader::read_idxptr() {
  ArrayFile f(storage_, file("idxptr"), version_.format == 1 ? Element::uint32 : Element::uint64);
  uint64_t majors = row_major_ ? rows_ : cols_;
  const char* why = row_major_ ? "rows + 1 (row-major)" : "cols + 1 (column-major)";
  if (version_.format == 1) {
    auto v1 = f.read_exactly<uint32_t>(majors + 1, why);
    idxptr_.assign(v1.begin(), v1.end());
  } else {
    idxptr_ = f.read_exactly<uint64_t>(majors + 1, why);
  }
  if (idxptr_[0] != 0)
    sdk::corrupt(f.path() + ": the first entry is " + std::to_string(idxptr_[0]) + ", not 0");
  for (uint64_t i = 0; i + 1 < idxptr_.size(); ++i)
    if (idxptr_[i + 1] < idxptr_[i])
      sdk::corrupt(f.path() + ": not monotone: entry " + std::to_string(i + 1) + " (" +
                   std::to_string(idxptr_[i + 1]) + ") is below entry " + std::to_string(i) + " (" +
                   std::to_string(idxptr_[i]) + ")");
  // Each major holds at most `minors` distinct indices; more means idxptr is bogus.
  if (minors() > 0 && idxptr_.back() / minors() > majors)
    sdk::corrupt(f.path() + ": claims " + std::to_string(idxptr_.back()) +
                 " stored values, more than the " + std::to_string(rows_) + " x " +
                 std::to_string(cols_) + " matrix has cells");
  if (minors() == 0 && idxptr_.back() != 0)
    sdk::corrupt(f.path() + ": claims stored values in a matrix with no " +
                 (row_major_ ? "columns" : "rows"));
}

std::vector<std::string> MatrixReader::read_names(const char* name, uint64_t expected) const {
  std::string path = file(name);
  std::optional<sdk::Bytes> text = storage_.read_if_exists(path);
  if (!text) return {};  // tolerated: BPCells always writes it, possibly empty
  std::vector<std::string> names = split_lines(text->text());
  if (!names.empty() && names.size() != expected)
    sdk::corrupt(path + ": holds " + std::to_string(names.size()) + " names, the matrix has " +
                 std::to_string(expected) + (name[0] == 'r' ? " rows" : " columns"));
  return names;
}

void MatrixReader::check_range(uint64_t begin, uint64_t end) const {
  if (begin > end || end > majors())
    sdk::invalid(dir_ + ": major range [" + std::to_string(begin) + ", " + std::to_string(end) +
                 ") is outside 0.." + std::to_string(majors()));
}

uint64_t MatrixReader::count(uint64_t begin, uint64_t end) const {
  check_range(begin, end);
  return idxptr_[end] - idxptr_[begin];
}

// Branch-free so that it vectorizes, and built for AVX2 too (unsigned
// compares are native there): it is on every column of a column-by-column
// read (docs/performance.md).
__attribute__((target_clones("avx2", "default"))) bool strictly_increasing(const uint32_t* v,
                                                                           uint64_t n) {
  uint32_t bad = 0;
  for (uint64_t k = 1; k < n; ++k) bad |= uint32_t(v[k] <= v[k - 1]);
  return bad == 0;
}

// Indices must lie inside the matrix and increase strictly within each major
// (BPCells sorts them); this also catches an idxptr that runs into the
// padding of the last BP-128 chunk, which repeats the last index.

void MatrixReader::check_indices(const uint64_t* indptr, uint64_t n_majors,
                                 const uint32_t* indices) const {
  for (uint64_t m = 0; m < n_majors; ++m) {
    uint64_t b = indptr[m], e = indptr[m + 1];
    if (b == e) continue;
    if (indices[e - 1] >= minors() || !strictly_increasing(indices + b, e - b))
      index_error(m, indices + b, e - b);
  }
}

void MatrixReader::index_error(uint64_t major, const uint32_t* indices, uint64_t n) const {
  const std::string& path = packed_index_ ? packed_index_->data_path() : index_->path();
  const char* minor_name = row_major_ ? "columns" : "rows";
  for (uint64_t k = 0; k < n; ++k) {
    if (indices[k] >= minors())
      sdk::corrupt(path + ": index " + std::to_string(indices[k]) +
                   " is out of range (the matrix has " + std::to_string(minors()) + " " +
                   minor_name + ")");
    if (k > 0 && indices[k] <= indices[k - 1])
      sdk::corrupt(path + ": indices of " + (row_major_ ? "row " : "column ") +
                   std::to_string(major) + " do not increase (" + std::to_string(indices[k - 1]) +
                   " then " + std::to_string(indices[k]) + "); is idxptr past the stored values?");
  }
  sdk::fail(STOWAGE_INTERNAL, path + ": index check failed without a reason");
}

void MatrixReader::read(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* indices,
                        void* values, uint64_t capacity) const {
  uint64_t first = idxptr_[begin], n = count(begin, end);
  if (n > capacity)
    sdk::invalid(dir_ + ": majors [" + std::to_string(begin) + ", " + std::to_string(end) +
                 ") hold " + std::to_string(n) + " values, more than the " +
                 std::to_string(capacity) + " given");
  for (uint64_t m = begin; m <= end; ++m) indptr[m - begin] = idxptr_[m] - first;
  WindowPool::Lease windows = windows_.acquire();
  if (packed_index_)
    packed_index_->read(first, n, indices, windows->index);
  else
    index_->read(first, n, indices);
  check_indices(indptr, end - begin, indices);
  if (packed_val_)
    packed_val_->read(first, n, static_cast<uint32_t*>(values), windows->val);
  else
    val_->read(first, n, values);
}

bool looks_like_matrix_dir(const sdk::Storage& storage, const std::string& path) {
  try {
    // No stat first: a missing file is NOT_FOUND from the read (one request
    // less over HTTP).
    std::vector<std::string> lines = read_lines(storage, path + "/version", kMaxTextFile);
    // Fragment directories are claimed too, so that opening one says why it fails.
    return !lines.empty() &&
           (lines[0].find("-matrix-v") != std::string::npos ||
            lines[0].find("-fragments-v") != std::string::npos) &&
           (lines[0].rfind("packed-", 0) == 0 || lines[0].rfind("unpacked-", 0) == 0);
  } catch (const sdk::Error&) {
    return false;
  }
}

}  // namespace stowage::bpcells
