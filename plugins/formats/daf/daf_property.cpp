#include "daf_property.hpp"

#include "daf_packed.hpp"
#include "daf_text.hpp"

#include <algorithm>
#include <cstring>

namespace daf {

using sdk::corrupt;
using sdk::invalid;

namespace {

constexpr uint64_t kMaxJsonBytes = 1 << 20;

// Calls f(T{}) with the C++ type of an integer index type.
template <class F>
decltype(auto) with_index_type(ElType t, F&& f) {
  switch (t) {
    case ElType::Int8:
      return f(int8_t{});
    case ElType::Int16:
      return f(int16_t{});
    case ElType::Int32:
      return f(int32_t{});
    case ElType::Int64:
      return f(int64_t{});
    case ElType::UInt8:
      return f(uint8_t{});
    case ElType::UInt16:
      return f(uint16_t{});
    case ElType::UInt32:
      return f(uint32_t{});
    default:
      return f(uint64_t{});
  }
}

template <class T>
T load_element(const unsigned char* base, size_t i) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(sdk::load_le<U>(base + i * sizeof(T)));
}

std::string component_file(const std::string& base, const char* suffix) { return base + suffix; }

// Maps a binary component and checks its size against `expected` elements
// (or, when unknown, that it is a whole number of elements).
std::unique_ptr<Mapped> map_component(const sdk::Storage& storage, const std::string& path,
                                      size_t element_size, std::optional<uint64_t> expected) {
  if (!is_file(storage, path)) corrupt(path + ": missing (required by the property's descriptor)");
  auto m = std::make_unique<Mapped>(storage, path);
  if (expected) {
    if (m->size() / element_size != *expected || m->size() % element_size != 0)
      corrupt(path + ": is " + std::to_string(m->size()) + " bytes, expected " +
              std::to_string(*expected) + " elements of " + std::to_string(element_size) +
              " bytes (truncated or wrong length)");
  } else if (m->size() % element_size != 0) {
    corrupt(path + ": size " + std::to_string(m->size()) +
            " is not a multiple of the element size " + std::to_string(element_size));
  }
  return m;
}

[[noreturn]] void refuse(const Property& p) { sdk::unsupported(p.unreadable); }

const Packing* packing_of(const Descriptor& d, const std::string& component) {
  for (const auto& [name, packing] : d.packed)
    if (name == component) return &packing;
  return nullptr;
}

// A binary component of `expected` elements (if known): the flat file
// <base>.<component>, or the decoded <base>.<component>.zip when packed.
std::unique_ptr<Mapped> load_component(const Property& p, const std::string& component,
                                       size_t element_size, std::optional<uint64_t> expected) {
  std::string path = p.base + "." + component;
  const Packing* packing = packing_of(p.desc, component);
  if (!packing) return map_component(p.storage, path, element_size, expected);
  if (!expected)
    corrupt(p.base + ".json: packed component \"" + component + "\" without n_elements");
  sdk::Bytes shard = p.storage.map(path + ".zip");
  return std::make_unique<Mapped>(
      path + ".zip", read_packed_numeric(p.host, path + ".zip", shard.text(), *packing, {*expected},
                                         element_size));
}

// Checks strictly increasing 1-based positions in 1..n (vector .nzind).
void validate_nzind(const Property& p) {
  with_index_type(p.desc.indtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t prev = 0;
    for (uint64_t i = 0; i < p.nnz; ++i) {
      int64_t v = static_cast<int64_t>(load_element<T>(p.indices->data(), i));
      if (v < 1 || static_cast<uint64_t>(v) > p.rows)
        corrupt(p.indices->path() + ": index " + std::to_string(v) + " at position " +
                std::to_string(i) + " is out of range 1.." + std::to_string(p.rows) +
                " (the axis length)");
      if (v <= prev)
        corrupt(p.indices->path() + ": indices are not strictly increasing at position " +
                std::to_string(i));
      prev = v;
    }
  });
}

// Checks colptr: ncols+1 entries, starting at 1, non-decreasing, ending at nnz+1.
void validate_colptr(Property& p) {
  const std::string& file = p.colptr->path();
  uint64_t n = p.colptr->size() / element_size(p.desc.indtype);
  if (n != p.cols + 1)
    corrupt(file + ": has " + std::to_string(n) + " entries, expected " +
            std::to_string(p.cols + 1) + " (columns + 1)");
  with_index_type(p.desc.indtype, [&](auto tag) {
    using T = decltype(tag);
    int64_t prev = 1;
    for (uint64_t c = 0; c <= p.cols; ++c) {
      int64_t v = static_cast<int64_t>(load_element<T>(p.colptr->data(), c));
      if ((c == 0 && v != 1) || v < prev)
        corrupt(file + ": entry " + std::to_string(c) + " is " + std::to_string(v) +
                (c == 0 ? ", expected 1" : ", smaller than the one before"));
      prev = v;
    }
    if (static_cast<uint64_t>(prev - 1) != p.nnz)
      corrupt(file + ": last entry " + std::to_string(prev) + " does not match " +
              std::to_string(p.nnz) + " stored values (expected nnz + 1)");
  });
}

void load_sparse_indices(Property& p) {
  size_t isize = element_size(p.desc.indtype);
  if (p.matrix) {
    p.indices = load_component(p, "rowval", isize, p.desc.n_indices);
    p.nnz = p.indices->size() / isize;
    p.colptr = load_component(p, "colptr", isize, p.desc.n_colptr);
    validate_colptr(p);
  } else {
    p.indices = load_component(p, "nzind", isize, p.desc.n_indices);
    p.nnz = p.indices->size() / isize;
    validate_nzind(p);
  }
}

// The values of a numeric sparse property: .nzval, or none (all true) for a
// Bool property without one. v1.0 Bool uses .nzval when the file exists
// (DataAxesFormats 0.2.0 and dafr); v1.1 says so in the descriptor.
void load_sparse_values(Property& p) {
  std::string path = component_file(p.base, ".nzval");
  bool stored = p.desc.v11_schema ? p.desc.nzval_in_descriptor
                                  : (p.desc.eltype != ElType::Bool || is_file(p.storage, path));
  if (stored) p.values = load_component(p, "nzval", element_size(p.desc.eltype), p.nnz);
}

void load_dense_numeric(Property& p) {
  if (const Packing* packing = packing_of(p.desc, "")) {
    std::vector<uint64_t> shape =
        p.matrix ? std::vector<uint64_t>{p.rows, p.cols} : std::vector<uint64_t>{p.rows};
    std::string zip = p.base + ".zip";
    sdk::Bytes shard = p.storage.map(zip);
    p.dense =
        std::make_unique<Mapped>(zip, read_packed_numeric(p.host, zip, shard.text(), *packing,
                                                          shape, element_size(p.desc.eltype)));
    return;
  }
  std::string path = component_file(p.base, ".data");
  if (!is_file(p.storage, path)) corrupt(path + ": missing (required by the dense descriptor)");
  p.dense = std::make_unique<Mapped>(p.storage, path);
  uint64_t expected = p.rows * p.cols * element_size(p.desc.eltype);
  uint64_t size = p.dense->size();
  if (size != expected)
    corrupt(path + ": is " + std::to_string(size) + " bytes, expected " + std::to_string(expected) +
            " (" + std::to_string(p.rows) + " x " + std::to_string(p.cols) + " elements of " +
            std::to_string(element_size(p.desc.eltype)) +
            " bytes; truncated or axis length mismatch)");
}

std::vector<std::string> read_lines(const sdk::Storage& storage, const std::string& path,
                                    uint64_t expected, const char* what) {
  if (!is_file(storage, path)) corrupt(path + ": missing (required by the descriptor)");
  std::vector<std::string> lines = split_lines(storage.read_text(path), path);
  if (lines.size() != expected)
    corrupt(path + ": has " + std::to_string(lines.size()) + " lines, expected " +
            std::to_string(expected) + " (" + what + ")");
  return lines;
}

// Dense .txt, or sparse .nztxt whose values go to the stored positions.
void load_strings(Property& p) {
  if (const Packing* packing = packing_of(p.desc, "")) {
    std::vector<uint64_t> shape =
        p.matrix ? std::vector<uint64_t>{p.rows, p.cols} : std::vector<uint64_t>{p.rows};
    sdk::Bytes shard = p.storage.map(p.base + ".zip");
    p.strings = read_packed_strings(p.host, p.base + ".zip", shard.text(), *packing, shape);
    return;
  }
  if (p.desc.sparse && packing_of(p.desc, "nzval"))
    sdk::unsupported(p.base + ".nzval.zip: packed sparse String values are not supported");
  if (!p.desc.sparse) {
    p.strings =
        read_lines(p.storage, component_file(p.base, ".txt"), p.rows * p.cols, "one per element");
    return;
  }
  load_sparse_indices(p);
  std::vector<std::string> values =
      read_lines(p.storage, component_file(p.base, ".nztxt"), p.nnz, "one per stored index");
  p.strings.assign(p.rows * p.cols, std::string());
  std::vector<uint64_t> indptr(p.cols + 1);
  std::vector<uint32_t> rows(p.nnz);
  if (p.matrix) {
    p.read_sparse(0, p.cols, indptr.data(), rows.data(), nullptr, p.nnz);
  } else {
    with_index_type(p.desc.indtype, [&](auto tag) {
      for (uint64_t i = 0; i < p.nnz; ++i)
        rows[i] = static_cast<uint32_t>(load_element<decltype(tag)>(p.indices->data(), i) - 1);
    });
    indptr = {0, p.nnz};
  }
  for (uint64_t c = 0; c < p.cols; ++c)
    for (uint64_t k = indptr[c]; k < indptr[c + 1]; ++k)
      p.strings[rows[k] + c * p.rows] = std::move(values[k]);
}

}  // namespace

const std::vector<std::string>& property_suffixes() {
  static const std::vector<std::string> s = {
      ".json",   ".data", ".txt",       ".nzind",     ".nzval",      ".nztxt",     ".colptr",
      ".rowval", ".zip",  ".nzind.zip", ".nzval.zip", ".colptr.zip", ".rowval.zip"};
  return s;
}

std::shared_ptr<const Property> load_property(const sdk::Host& host, const sdk::Storage& storage,
                                              const std::string& root, const NodeRef& ref,
                                              const std::string& node, uint64_t rows,
                                              uint64_t cols) {
  auto p = std::make_shared<Property>();
  p->host = host;
  p->storage = storage;
  p->node = node;
  p->matrix = ref.kind == NodeRef::Matrix;
  p->base =
      root +
      (p->matrix ? "/matrices/" + ref.rows + "/" + ref.cols + "/" : "/vectors/" + ref.rows + "/") +
      ref.name;
  p->rows = rows;
  p->cols = p->matrix ? cols : 1;
  std::string json_path = p->base + ".json";
  if (!is_file(storage, json_path)) sdk::fail(STOWAGE_NOT_FOUND, json_path + ": no such property");
  p->desc =
      parse_descriptor(read_small_text(storage, json_path, kMaxJsonBytes), json_path, p->matrix);
  p->tiling = Tiling::for_array(p->matrix, p->rows, p->cols, element_size(p->desc.eltype));
  try {
    if (p->is_string()) {
      load_strings(*p);
    } else if (p->desc.sparse) {
      load_sparse_indices(*p);
      load_sparse_values(*p);
    } else {
      load_dense_numeric(*p);
    }
  } catch (const sdk::Error& e) {
    if (e.code() != STOWAGE_UNSUPPORTED) throw;
    p->unreadable = e.what();  // still described; reads report it
  }
  return p;
}

// ---- reading ----------------------------------------------------------------------

void Property::read_chunk(const uint64_t* chunk_index, void* out, size_t capacity,
                          uint64_t* chunk_shape) const {
  if (!unreadable.empty()) refuse(*this);
  if (is_string() || is_sparse_matrix())
    invalid(node + ": not a dense array (read it as strings or sparse)");
  Tiling::Tile t = tiling.tile(chunk_index, node);
  if (t.elements() * element_size(desc.eltype) > capacity)
    invalid(node + ": output buffer too small for a chunk");
  tiling.shape_of(t, chunk_shape);
  auto* dst = static_cast<unsigned char*>(out);
  if (desc.sparse) return densify_sparse_vector(t.row0, t.nrows, dst);
  read_runs(t, dst);
}

// Copies each contiguous run of the tile into the caller's buffer.
void Property::read_runs(const Tiling::Tile& t, unsigned char* out) const {
  size_t es = element_size(desc.eltype);
  tiling.for_each_run(t, [&](uint64_t file_element, uint64_t tile_element, uint64_t n) {
    std::memcpy(out + tile_element * es, dense->data() + file_element * es, n * es);
  });
}

void Property::densify_sparse_vector(uint64_t begin, uint64_t count, unsigned char* out) const {
  size_t es = element_size(desc.eltype);
  std::memset(out, 0, count * es);
  with_index_type(desc.indtype, [&](auto tag) {
    using T = decltype(tag);
    const unsigned char* ind = indices->data();
    // First stored position >= begin (positions are 1-based and increasing).
    uint64_t lo = 0, hi = nnz;
    while (lo < hi) {
      uint64_t mid = lo + (hi - lo) / 2;
      if (static_cast<uint64_t>(load_element<T>(ind, mid)) < begin + 1)
        lo = mid + 1;
      else
        hi = mid;
    }
    for (uint64_t k = lo; k < nnz; ++k) {
      uint64_t pos = static_cast<uint64_t>(load_element<T>(ind, k)) - 1;
      if (pos >= begin + count) break;
      unsigned char* dst = out + (pos - begin) * es;
      if (values)
        std::memcpy(dst, values->data() + k * es, es);
      else
        *dst = 1;  // Bool without .nzval: all true
    }
  });
}

uint64_t Property::colptr_at(uint64_t column) const {
  return static_cast<uint64_t>(load_index(colptr->data(), desc.indtype, column));
}

uint64_t Property::sparse_count(uint64_t begin, uint64_t end) const {
  if (!unreadable.empty()) refuse(*this);
  if (!is_sparse_matrix()) invalid(node + ": not a sparse matrix");
  if (begin > end || end > cols) invalid(node + ": column range out of bounds");
  return colptr_at(end) - colptr_at(begin);
}

void Property::read_sparse(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* out_indices,
                           void* out_values, uint64_t capacity) const {
  if (!unreadable.empty()) refuse(*this);
  if (begin > end || end > cols) invalid(node + ": column range out of bounds");
  if (rows > uint64_t(UINT32_MAX) + 1)
    sdk::unsupported(node + ": " + std::to_string(rows) + " rows do not fit 32-bit sparse indices");
  uint64_t first = colptr_at(begin) - 1;
  uint64_t n = colptr_at(end) - 1 - first;
  if (n > capacity) invalid(node + ": " + std::to_string(n) + " values do not fit the buffer");
  with_index_type(desc.indtype, [&](auto tag) {
    using T = decltype(tag);
    const unsigned char* rowval = indices->data();
    const unsigned char* cp = colptr->data();
    for (uint64_t c = begin; c < end; ++c) {
      uint64_t from = static_cast<uint64_t>(load_element<T>(cp, c)) - 1;
      uint64_t to = static_cast<uint64_t>(load_element<T>(cp, c + 1)) - 1;
      indptr[c - begin] = from - first;
      int64_t prev = 0;
      for (uint64_t k = from; k < to; ++k) {
        int64_t r = static_cast<int64_t>(load_element<T>(rowval, k));
        if (r <= prev || static_cast<uint64_t>(r) > rows)
          corrupt(indices->path() + ": row index " + std::to_string(r) + " at position " +
                  std::to_string(k) +
                  (r <= prev ? " is not increasing within its column"
                             : " is out of range 1.." + std::to_string(rows)));
        out_indices[k - first] = static_cast<uint32_t>(r - 1);
        prev = r;
      }
    }
    indptr[end - begin] = n;
  });
  if (!out_values) return;
  size_t es = element_size(desc.eltype);
  if (values) {
    std::memcpy(out_values, values->data() + first * es, n * es);
    if (!sdk::host_is_little_endian()) sdk::swap_bytes_inplace(out_values, n, es);
  } else {
    std::memset(out_values, 1, n);  // Bool without .nzval: all true
  }
}

void Property::read_strings(uint64_t begin, uint64_t end, const sdk::ItemFn& item) const {
  if (!unreadable.empty()) refuse(*this);
  if (!is_string()) invalid(node + ": not a string array");
  uint64_t n = rows * cols;
  end = std::min(end, n);
  if (begin > end) invalid(node + ": string range out of bounds");
  for (uint64_t k = begin; k < end; ++k) {
    // k indexes the C-order (row-major) array; storage is column-major.
    const std::string& s = strings[(k / cols) + (k % cols) * rows];
    item(s.data(), s.size());
  }
}

}  // namespace daf
