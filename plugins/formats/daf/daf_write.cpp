// DafStore: creating repositories and properties, writing, deleting, and
// committing at close().
#include "daf_store.hpp"

#include "daf_text.hpp"

#include <algorithm>
#include <cstring>
#include <set>

namespace daf {

using sdk::corrupt;
using sdk::invalid;

namespace {

constexpr uint64_t kMaxJsonBytes = 1 << 20;

Json parse_description(std::string_view text, std::string_view node) {
  Json j = Json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) invalid(std::string(node) + ": the description is not a JSON object");
  return j;
}

std::string string_or(const Json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<uint64_t> shape_of(const Json& d, std::string_view node) {
  std::vector<uint64_t> shape;
  auto it = d.find("shape");
  if (it == d.end() || !it->is_array()) invalid(std::string(node) + ": the description has no \"shape\"");
  for (const Json& v : *it) {
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      invalid(std::string(node) + ": bad shape " + it->dump());
    shape.push_back(v.get<uint64_t>());
  }
  return shape;
}

ElType numeric_dtype(const Json& d, std::string_view node) {
  std::string dtype = string_or(d, "dtype", "");
  auto t = parse_dtype(dtype);
  if (!t) invalid(std::string(node) + ": Daf cannot store dtype '" + dtype + "'");
  return *t;
}

// The index type asked for in attributes.daf_indtype, if it can index `size`.
ElType choose_indtype(const Json& d, uint64_t size) {
  ElType t = indtype_for_size(size);
  auto a = d.find("attributes");
  if (a != d.end() && a->is_object()) {
    if (auto asked = parse_julia_name(string_or(*a, "daf_indtype", "")))
      if (is_integer(*asked) && max_index(*asked) >= size) t = *asked;
  }
  return t;
}

bool asks_sparse(const Json& d) {
  auto a = d.find("attributes");
  return a != d.end() && a->is_object() && string_or(*a, "daf_storage", "") == "sparse";
}

void check_vector_name(const NodeRef& ref) {
  check_name(ref.name, "property");
  if (ref.kind == NodeRef::Vector && (ref.name == "name" || ref.name == "index"))
    invalid("vectors/" + ref.rows + "/" + ref.name + ": '" + ref.name + "' is a reserved Daf vector name");
}

// Positions (column-major) and values of the non-zero elements of dense data.
void gather_nonzeros(const unsigned char* data, uint64_t n, size_t es, std::vector<uint64_t>& positions) {
  static const unsigned char zero[8] = {0};
  for (uint64_t i = 0; i < n; ++i)
    if (std::memcmp(data + i * es, zero, es) != 0) positions.push_back(i);
}

// Floating-point -0.0 is a zero too (Julia's iszero).
void gather_nonzeros_float(const unsigned char* data, uint64_t n, ElType t, std::vector<uint64_t>& positions) {
  for (uint64_t i = 0; i < n; ++i) {
    double v;
    if (t == ElType::Float32) {
      float f;
      std::memcpy(&f, data + 4 * i, 4);
      v = f;
    } else {
      std::memcpy(&v, data + 8 * i, 8);
    }
    if (v != 0.0) positions.push_back(i);
  }
}

void write_index_file(const std::string& path, ElType indtype, const std::vector<uint64_t>& values1) {
  std::vector<unsigned char> bytes(values1.size() * element_size(indtype));
  for (size_t i = 0; i < values1.size(); ++i) store_index(bytes.data(), indtype, i, values1[i]);
  sdk::write_file_atomic(path, bytes.data(), bytes.size());
}

}  // namespace

// ---- repository level ----------------------------------------------------------------------

void DafStore::require_writable(std::string_view what) const {
  if (mode_ == STOWAGE_MODE_READ)
    invalid(final_path_ + ": opened read-only (mode r); cannot " + std::string(what));
  if (closed_) invalid(final_path_ + ": the store is closed");
}

void DafStore::create_repository() {
  sdk::make_directories(root_);
  sdk::write_file_atomic(root_ + "/daf.json", format_daf_json(version_));
  for (const char* dir : {"scalars", "axes", "vectors", "matrices"}) sdk::make_directories(root_ + "/" + dir);
  dirty_ = true;  // a [1,1] repository gets its metadata.json at close
}

// Julia lists properties with readdir, so every vectors/<a>/ and the full
// grid matrices/<a>/<o>/, matrices/<o>/<a>/ must exist.
void DafStore::add_axis_directories(const std::string& axis) {
  sdk::make_directories(root_ + "/vectors/" + axis);
  for (const std::string& other : axis_names()) {
    sdk::make_directories(root_ + "/matrices/" + axis + "/" + other);
    sdk::make_directories(root_ + "/matrices/" + other + "/" + axis);
  }
}

uint64_t DafStore::declared_axis_length(const std::string& axis, uint64_t length, const std::string& node) {
  check_name(axis, "axis");
  if (auto n = axis_length(axis)) {
    if (*n != length)
      invalid(node + ": length " + std::to_string(length) + " does not match axis '" + axis + "' with " +
              std::to_string(*n) + " entries");
    return length;
  }
  auto [it, added] = declared_axes_.emplace(axis, length);
  if (!added && it->second != length)
    invalid(node + ": length " + std::to_string(length) + " does not match axis '" + axis + "' declared with " +
            std::to_string(it->second) + " entries");
  return length;
}

void DafStore::write_axis(const NodeRef& ref, const std::vector<std::string_view>& values) {
  const std::string& axis = ref.rows;
  check_name(axis, "axis");
  std::set<std::string_view> seen;
  for (std::string_view v : values) {
    check_line_value(v, "axes/" + axis);
    if (!seen.insert(v).second) invalid("axes/" + axis + ": duplicate entry '" + std::string(v) + "'");
  }
  if (auto existing = axis_entries(axis)) {
    if (std::equal(existing->begin(), existing->end(), values.begin(), values.end())) return;
    invalid("axes/" + axis + ": the axis exists with other entries; remove it first (this deletes its properties)");
  }
  auto declared = declared_axes_.find(axis);
  if (declared != declared_axes_.end() && declared->second != values.size())
    invalid("axes/" + axis + ": " + std::to_string(values.size()) + " entries, but properties created on it have " +
            std::to_string(declared->second));
  sdk::write_file_atomic(axis_file(axis), join_lines(values, "axes/" + axis));
  declared_axes_.erase(axis);
  forget_cached();
  add_axis_directories(axis);
  dirty_ = true;
}

void DafStore::write_descriptor(const std::string& base, const Descriptor& d, bool matrix, uint64_t n_indices,
                                uint64_t n_colptr) {
  sdk::write_file_atomic(base + ".json", format_descriptor(d, matrix, v11(), n_indices, n_colptr));
}

void DafStore::delete_property_files(const std::string& base) {
  for (const std::string& suffix : property_suffixes()) remove_file(base + suffix);
}

void DafStore::delete_axis(const std::string& axis) {
  remove_file(axis_file(axis));
  remove_tree(root_ + "/vectors/" + axis);
  remove_tree(root_ + "/matrices/" + axis);
  for (const std::string& other : axis_names()) remove_tree(root_ + "/matrices/" + other + "/" + axis);
  for (auto* pending : {&pending_arrays_}) {
    for (auto it = pending->begin(); it != pending->end();)
      it = (it->second.ref.rows == axis || it->second.ref.cols == axis) ? pending->erase(it) : std::next(it);
  }
  for (auto it = pending_sparse_.begin(); it != pending_sparse_.end();)
    it = (it->second.ref.rows == axis || it->second.ref.cols == axis) ? pending_sparse_.erase(it) : std::next(it);
}

// ---- create / remove / attributes ---------------------------------------------------------

void DafStore::create(std::string_view node, std::string_view json) {
  require_writable("create " + std::string(node));
  NodeRef ref = parse_node(node);
  Json d = parse_description(json, node);
  std::string kind = string_or(d, "kind", "");
  if (ref.kind == NodeRef::Axis) {
    if (kind != "strings") invalid(std::string(node) + ": an axis is a string array, not '" + kind + "'");
    std::vector<uint64_t> shape = shape_of(d, node);
    if (shape.size() != 1) invalid(std::string(node) + ": an axis is one-dimensional");
    declared_axis_length(ref.rows, shape[0], std::string(node));
    return;
  }
  if (ref.is_group()) {
    if (kind != "group") invalid(std::string(node) + ": this Daf node is a group");
    return;  // groups exist implicitly
  }
  check_vector_name(ref);
  if (kind == "array") return create_array(ref, node, d);
  if (kind == "sparse") return create_sparse(ref, node, d);
  if (kind == "strings") {  // the values come with write_strings
    std::vector<uint64_t> shape = shape_of(d, node);
    if (shape.size() != (ref.kind == NodeRef::Matrix ? 2u : 1u)) invalid(std::string(node) + ": wrong rank");
    declared_axis_length(ref.rows, shape[0], std::string(node));
    if (ref.kind == NodeRef::Matrix) declared_axis_length(ref.cols, shape[1], std::string(node));
    return;
  }
  sdk::unsupported(std::string(node) + ": Daf cannot store a node of kind '" + kind + "'");
}

void DafStore::create_array(const NodeRef& ref, std::string_view node, const Json& d) {
  bool matrix = ref.kind == NodeRef::Matrix;
  std::vector<uint64_t> shape = shape_of(d, node);
  if (shape.size() != (matrix ? 2u : 1u))
    invalid(std::string(node) + ": a Daf " + (matrix ? "matrix has 2" : "vector has 1") + " dimension(s), got " +
            std::to_string(shape.size()));
  ElType eltype = numeric_dtype(d, node);
  uint64_t rows = declared_axis_length(ref.rows, shape[0], std::string(node));
  uint64_t cols = matrix ? declared_axis_length(ref.cols, shape[1], std::string(node)) : 1;
  sdk::make_directories(property_dir(ref));
  PendingArray p = start_pending_array(ref, eltype, rows, cols);
  p.store_sparse = asks_sparse(d);
  pending_sparse_.erase(std::string(node));
  pending_arrays_.insert_or_assign(std::string(node), std::move(p));
  forget_cached();
}

// A zero-filled temp file for the whole column-major data, and no chunk written yet.
PendingArray DafStore::start_pending_array(const NodeRef& ref, ElType eltype, uint64_t rows, uint64_t cols) {
  PendingArray p;
  p.ref = ref;
  p.base = property_base(ref);
  p.eltype = eltype;
  p.tiling = Tiling::for_array(ref.kind == NodeRef::Matrix, rows, cols, element_size(eltype));
  p.data = std::make_unique<TempFile>(p.base + ".data");
  p.data->resize(rows * cols * element_size(eltype));
  p.written.reset(new std::atomic<bool>[std::max<uint64_t>(p.tiling.count(), 1)]());
  return p;
}

void DafStore::create_sparse(const NodeRef& ref, std::string_view node, const Json& d) {
  if (ref.kind != NodeRef::Matrix) sdk::unsupported(std::string(node) + ": a sparse node must be a matrix");
  if (string_or(d, "layout", "csc") != "csc")
    sdk::unsupported(std::string(node) + ": Daf stores sparse matrices as CSC; write the CSR data as the CSC of "
                     "the transpose, matrices/" + ref.cols + "/" + ref.rows + "/" + ref.name);
  std::vector<uint64_t> shape = shape_of(d, node);
  if (shape.size() != 2) invalid(std::string(node) + ": a sparse matrix has 2 dimensions");
  PendingSparse p;
  p.ref = ref;
  p.base = property_base(ref);
  p.eltype = numeric_dtype(d, node);
  p.rows = declared_axis_length(ref.rows, shape[0], std::string(node));
  p.cols = declared_axis_length(ref.cols, shape[1], std::string(node));
  uint64_t nnz = 0;  // optional: sizes the index type
  if (auto it = d.find("nnz"); it != d.end()) {
    if (!it->is_number_unsigned()) invalid(std::string(node) + ": \"nnz\" must be a count, got " + it->dump());
    nnz = it->get<uint64_t>();
  }
  p.indtype = choose_indtype(d, std::max(p.rows, nnz + 1));
  sdk::make_directories(property_dir(ref));
  p.rowval = std::make_unique<TempFile>(p.base + ".rowval");
  p.nzval = std::make_unique<TempFile>(p.base + ".nzval");
  pending_arrays_.erase(std::string(node));
  pending_sparse_.insert_or_assign(std::string(node), std::move(p));
  forget_cached();
}

void DafStore::remove(std::string_view node) {
  require_writable("remove " + std::string(node));
  NodeRef ref = parse_node(node);
  if (ref.kind == NodeRef::Axis) {
    if (!axis_length(ref.rows)) sdk::fail(STOWAGE_NOT_FOUND, root_ + ": no axis '" + ref.rows + "'");
    delete_axis(ref.rows);
  } else if (ref.is_property()) {
    std::string key(node);
    bool pending = pending_arrays_.erase(key) + pending_sparse_.erase(key) > 0;
    if (!pending && !sdk::is_regular_file(property_base(ref) + ".json"))
      sdk::fail(STOWAGE_NOT_FOUND, root_ + ": no property " + key);
    delete_property_files(property_base(ref));
  } else {
    invalid(std::string(node) + ": Daf groups cannot be removed (remove the axes or properties in them)");
  }
  forget_cached();
  dirty_ = true;
}

void DafStore::set_attributes(std::string_view node, std::string_view json) {
  require_writable("set attributes of '" + std::string(node) + "'");
  Json a = parse_description(json, node);
  NodeRef ref = parse_node(node);
  if (ref.kind == NodeRef::Root) return set_scalars(a);
  for (const auto& [key, value] : a.items())
    if (key.compare(0, 4, "daf_") != 0)
      sdk::unsupported(std::string(node) + ": Daf keeps user attributes only on the root (as scalars); got '" + key +
                       "'");
}

// The root's attributes are the scalars; "daf_types" maps a name to its Daf
// type (plain JSON values get Bool, Int64, UInt64, Float64 or String).
void DafStore::set_scalars(const Json& attributes) {
  Json types = attributes.value("daf_types", Json::object());
  if (!types.is_object()) invalid("daf_types must be an object mapping scalar names to Daf types");
  std::set<std::string> keep;
  for (const auto& [name, value] : attributes.items()) {
    if (name == "daf_types") continue;
    check_name(name, "scalar");
    std::string what = "scalar '" + name + "'";
    Scalar s;
    if (types.contains(name)) {
      auto t = types[name].is_string() ? parse_julia_name(types[name].get<std::string>()) : std::nullopt;
      if (!t) invalid(what + ": unknown Daf type " + types[name].dump());
      s.type = *t;
    } else {
      s.type = infer_scalar_type(value, what);
    }
    s.value = normalize_scalar(s.type, value, what);
    std::string file = root_ + "/scalars/" + name + ".json";
    std::string text = format_scalar(s);
    if (!sdk::is_regular_file(file) || sdk::read_file(file, kMaxJsonBytes) != text) sdk::write_file_atomic(file, text);
    keep.insert(name);
  }
  for (const std::string& name : names_with_suffix(root_ + "/scalars", ".json"))
    if (!keep.count(name)) remove_file(root_ + "/scalars/" + name + ".json");
  dirty_ = true;
}

// ---- dense arrays ------------------------------------------------------------------------------

PendingArray& DafStore::pending_array_for_write(const NodeRef& ref, std::string_view node) {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  auto it = pending_arrays_.find(std::string(node));
  if (it != pending_arrays_.end()) return it->second;
  // An existing property changed in place (r+): copy it to a temp file first.
  auto stored = property(ref, node);
  if (stored->is_string() || stored->is_sparse_matrix() || !stored->unreadable.empty())
    invalid(std::string(node) + ": not a writable dense array");
  PendingArray p = start_pending_array(ref, stored->desc.eltype, stored->rows, stored->cols);
  p.store_sparse = stored->desc.sparse;
  size_t es = element_size(p.eltype);
  std::vector<unsigned char> buf(p.tiling.tile_rows * p.tiling.tile_cols * es);
  for (uint64_t i = 0; i < p.tiling.grid_rows(); ++i)
    for (uint64_t j = 0; j < p.tiling.grid_cols(); ++j) {
      uint64_t idx[2] = {i, j}, shape[2];
      stored->read_chunk(idx, buf.data(), buf.size(), shape);
      write_tile(p, p.tiling.tile(idx, p.base), buf.data());
    }
  return pending_arrays_.emplace(std::string(node), std::move(p)).first->second;
}

bool DafStore::read_pending_chunk(const PendingArray& p, const uint64_t* chunk_index, void* out, size_t capacity,
                                  uint64_t* chunk_shape) const {
  Tiling::Tile t = p.tiling.tile(chunk_index, p.base);
  if (!p.written[t.flat]) return false;
  size_t es = element_size(p.eltype);
  if (t.elements() * es > capacity) invalid(p.base + ": output buffer too small for a chunk");
  auto* dst = static_cast<unsigned char*>(out);
  p.tiling.for_each_run(t, [&](uint64_t file_element, uint64_t tile_element, uint64_t n) {
    p.data->read_at(dst + tile_element * es, n * es, file_element * es);
  });
  p.tiling.shape_of(t, chunk_shape);
  return true;
}

// pwrite of each run of a column-major tile into the pending data file.
void DafStore::write_tile(PendingArray& p, const Tiling::Tile& t, const void* in) {
  size_t es = element_size(p.eltype);
  const auto* src = static_cast<const unsigned char*>(in);
  p.tiling.for_each_run(t, [&](uint64_t file_element, uint64_t tile_element, uint64_t n) {
    p.data->write_at(src + tile_element * es, n * es, file_element * es);
  });
  p.written[t.flat] = true;
}

void DafStore::write_chunk(std::string_view node, const uint64_t* chunk_index, const void* in, size_t size,
                           const uint64_t* chunk_shape) {
  require_writable("write " + std::string(node));
  NodeRef ref = parse_node(node);
  if (!ref.is_property()) invalid(std::string(node) + ": not an array");
  PendingArray& p = pending_array_for_write(ref, node);
  Tiling::Tile t = p.tiling.tile(chunk_index, std::string(node));
  if (chunk_shape[0] != t.nrows || (p.tiling.matrix && chunk_shape[1] != t.ncols))
    invalid(std::string(node) + ": chunk shape does not match the chunk grid");
  if (size != t.elements() * element_size(p.eltype))
    invalid(std::string(node) + ": chunk has " + std::to_string(size) + " bytes, expected " +
            std::to_string(t.elements() * element_size(p.eltype)));
  write_tile(p, t, in);
}

// ---- sparse matrices ----------------------------------------------------------------------------

void DafStore::append_sparse(std::string_view node, uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
                             const void* values) {
  require_writable("append to " + std::string(node));
  auto it = pending_sparse_.find(std::string(node));
  if (it == pending_sparse_.end()) invalid(std::string(node) + ": create() the sparse matrix before appending");
  PendingSparse& p = it->second;
  uint64_t done = p.colptr.size() - 1;
  if (n_major > p.cols - done)
    invalid(std::string(node) + ": appending " + std::to_string(n_major) + " columns after " + std::to_string(done) +
            " exceeds the " + std::to_string(p.cols) + " columns");
  if (indptr[0] != 0) invalid(std::string(node) + ": indptr must start at 0");
  size_t es = element_size(p.eltype), is = element_size(p.indtype);
  const auto* vals = static_cast<const unsigned char*>(values);
  std::vector<unsigned char> rowbuf, valbuf;
  rowbuf.reserve(indptr[n_major] * is), valbuf.reserve(indptr[n_major] * es);
  uint64_t nnz = p.colptr.back();
  for (uint64_t c = 0; c < n_major; ++c) {
    if (indptr[c + 1] < indptr[c]) invalid(std::string(node) + ": indptr decreases at column " + std::to_string(done + c));
    int64_t prev = -1;
    for (uint64_t k = indptr[c]; k < indptr[c + 1]; ++k) {
      if (indices[k] >= p.rows || static_cast<int64_t>(indices[k]) <= prev)
        invalid(std::string(node) + ": row index " + std::to_string(indices[k]) + " in column " +
                std::to_string(done + c) + " is out of range or not increasing");
      prev = indices[k];
      // Never store an explicit false in a Bool sparse matrix: Daf readers
      // differ on whether they look at .nzval at all.
      if (p.eltype == ElType::Bool && vals[k] == 0) continue;
      if (nnz + 1 >= max_index(p.indtype))
        invalid(std::string(node) + ": more stored values than index type " + julia_name(p.indtype) +
                " can address; declare \"nnz\" in create()");
      rowbuf.resize(rowbuf.size() + is);
      store_index(rowbuf.data() + rowbuf.size() - is, p.indtype, 0, indices[k] + 1);
      valbuf.insert(valbuf.end(), vals + k * es, vals + (k + 1) * es);
      if (p.eltype == ElType::Bool) valbuf.back() = 1;
      ++nnz;
    }
    p.colptr.push_back(nnz);
  }
  if (!sdk::host_is_little_endian()) sdk::swap_bytes_inplace(valbuf.data(), valbuf.size() / es, es);
  p.rowval->append(rowbuf.data(), rowbuf.size());
  p.nzval->append(valbuf.data(), valbuf.size());
}

// ---- strings -------------------------------------------------------------------------------------

void DafStore::write_strings(std::string_view node, const std::vector<std::string_view>& values) {
  require_writable("write " + std::string(node));
  NodeRef ref = parse_node(node);
  if (ref.kind == NodeRef::Axis) return write_axis(ref, values);
  if (!ref.is_property()) invalid(std::string(node) + ": not a string array");
  check_vector_name(ref);
  write_string_property(ref, node, values);
}

// Strings are always written dense (.txt), the form every Daf reader knows.
void DafStore::write_string_property(const NodeRef& ref, std::string_view node,
                                     const std::vector<std::string_view>& values) {
  bool matrix = ref.kind == NodeRef::Matrix;
  uint64_t rows = required_axis_length(ref.rows, std::string(node));
  uint64_t cols = matrix ? required_axis_length(ref.cols, std::string(node)) : 1;
  if (values.size() != rows * cols)
    invalid(std::string(node) + ": " + std::to_string(values.size()) + " strings, expected " +
            std::to_string(rows * cols) + " (the axis lengths)");
  std::vector<std::string_view> column_major(values.size());
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t c = 0; c < cols; ++c) column_major[r + c * rows] = values[r * cols + c];
  std::string base = property_base(ref);
  sdk::make_directories(property_dir(ref));
  pending_arrays_.erase(std::string(node));
  pending_sparse_.erase(std::string(node));
  for (const std::string& suffix : property_suffixes())
    if (suffix != ".txt" && suffix != ".json") remove_file(base + suffix);
  sdk::write_file_atomic(base + ".txt", join_lines(column_major, std::string(node)));
  Descriptor d;
  d.eltype = ElType::String;
  write_descriptor(base, d, matrix, 0, 0);
  forget_cached();
  dirty_ = true;
  if (relayout_ && matrix && ref.rows != ref.cols) write_relayout(ref);
}

// ---- commit at close ------------------------------------------------------------------------------

void DafStore::commit_array(PendingArray& p) {
  bool matrix = p.ref.kind == NodeRef::Matrix;
  Descriptor d;
  d.eltype = p.eltype;
  for (const std::string& suffix : property_suffixes())
    if (suffix != ".json") remove_file(p.base + suffix);
  if (!p.store_sparse) {
    p.data->commit();
    return write_descriptor(p.base, d, matrix, 0, 0);
  }
  // Sparse storage asked for: keep only the non-zero elements.
  Mapped dense(p.data->temp_path());
  size_t es = element_size(p.eltype);
  uint64_t rows = p.tiling.rows, cols = p.tiling.cols, n = rows * cols;
  std::vector<uint64_t> positions;
  if (is_float(p.eltype)) gather_nonzeros_float(dense.data(), n, p.eltype, positions);
  else gather_nonzeros(dense.data(), n, es, positions);
  d.sparse = true;
  d.indtype = indtype_for_size(std::max(rows, static_cast<uint64_t>(positions.size()) + 1));
  std::vector<unsigned char> nzval(positions.size() * es);
  for (size_t k = 0; k < positions.size(); ++k) std::memcpy(&nzval[k * es], dense.data() + positions[k] * es, es);
  std::vector<uint64_t> rowval1(positions.size()), colptr1(cols + 1, 1);
  for (size_t k = 0; k < positions.size(); ++k) {
    rowval1[k] = positions[k] % rows + 1;
    colptr1[positions[k] / rows + 1] += 1;
  }
  for (uint64_t c = 0; c < cols; ++c) colptr1[c + 1] += colptr1[c] - 1;
  if (matrix) {
    write_index_file(p.base + ".colptr", d.indtype, colptr1);
    write_index_file(p.base + ".rowval", d.indtype, rowval1);
  } else {
    write_index_file(p.base + ".nzind", d.indtype, rowval1);
  }
  sdk::write_file_atomic(p.base + ".nzval", nzval.data(), nzval.size());
  write_descriptor(p.base, d, matrix, positions.size(), cols + 1);
}

void DafStore::commit_sparse(PendingSparse& p) {
  uint64_t done = p.colptr.size() - 1;
  if (done != p.cols)
    invalid(p.base + ": only " + std::to_string(done) + " of " + std::to_string(p.cols) +
            " columns were appended before close");
  for (const std::string& suffix : property_suffixes())
    if (suffix != ".json") remove_file(p.base + suffix);
  std::vector<uint64_t> colptr1(p.colptr.size());
  for (size_t c = 0; c < p.colptr.size(); ++c) colptr1[c] = p.colptr[c] + 1;
  write_index_file(p.base + ".colptr", p.indtype, colptr1);
  p.rowval->commit();
  p.nzval->commit();
  Descriptor d;
  d.sparse = true;
  d.eltype = p.eltype;
  d.indtype = p.indtype;
  write_descriptor(p.base, d, true, p.colptr.back(), p.colptr.size());
}

// ---- relayout: the transposed copy Julia's set_matrix!(relayout=true) writes ----------------

namespace {

// out (cols x rows, column-major) = transpose of in (rows x cols, column-major),
// in 64 x 64 blocks so both sides stay in cache.
void transpose(const unsigned char* in, unsigned char* out, uint64_t rows, uint64_t cols, size_t es) {
  constexpr uint64_t B = 64;
  for (uint64_t c0 = 0; c0 < cols; c0 += B)
    for (uint64_t r0 = 0; r0 < rows; r0 += B)
      for (uint64_t c = c0; c < std::min(cols, c0 + B); ++c)
        for (uint64_t r = r0; r < std::min(rows, r0 + B); ++r)
          std::memcpy(out + (c + r * cols) * es, in + (r + c * rows) * es, es);
}

}  // namespace

void DafStore::write_relayout(const NodeRef& ref) {
  std::string node = "matrices/" + ref.rows + "/" + ref.cols + "/" + ref.name;
  auto p = load_property(root_, ref, node, required_axis_length(ref.rows, node), required_axis_length(ref.cols, node));
  NodeRef t = ref;
  std::swap(t.rows, t.cols);
  std::string base = property_base(t);
  sdk::make_directories(property_dir(t));
  delete_property_files(base);
  uint64_t rows = p->rows, cols = p->cols;
  Descriptor d = p->desc;
  d.v11_schema = v11(), d.packed.clear();
  if (p->is_string()) {
    std::vector<std::string_view> values(rows * cols);
    for (uint64_t r = 0; r < rows; ++r)
      for (uint64_t c = 0; c < cols; ++c) values[c + r * cols] = p->strings[r + c * rows];
    sdk::write_file_atomic(base + ".txt", join_lines(values, node));
    d.sparse = false;
    return write_descriptor(base, d, true, 0, 0);
  }
  size_t es = element_size(d.eltype);
  if (!d.sparse) {
    Mapped in(p->base + ".data");
    std::vector<unsigned char> out(in.size());
    if (in.size()) transpose(in.data(), out.data(), rows, cols, es);
    sdk::write_file_atomic(base + ".data", out.data(), out.size());
    return write_descriptor(base, d, true, 0, 0);
  }
  // CSC of the transpose: count values per row, then place them column by column.
  std::vector<uint64_t> indptr(cols + 1);
  std::vector<uint32_t> row_of(p->nnz);
  std::vector<unsigned char> values(p->nnz * es);
  p->read_sparse(0, cols, indptr.data(), row_of.data(), values.data(), p->nnz);
  std::vector<uint64_t> colptr1(rows + 1, 0);
  for (uint32_t r : row_of) ++colptr1[r + 1];
  for (uint64_t r = 0; r < rows; ++r) colptr1[r + 1] += colptr1[r];
  std::vector<uint64_t> next(colptr1.begin(), colptr1.end() - 1), rowval1(p->nnz);
  std::vector<unsigned char> nzval(p->nnz * es);
  for (uint64_t c = 0; c < cols; ++c)
    for (uint64_t k = indptr[c]; k < indptr[c + 1]; ++k) {
      uint64_t at = next[row_of[k]]++;
      rowval1[at] = c + 1;
      std::memcpy(&nzval[at * es], &values[k * es], es);
    }
  for (uint64_t& v : colptr1) v += 1;
  if (max_index(d.indtype) < std::max(cols, p->nnz + 1)) d.indtype = indtype_for_size(std::max(cols, p->nnz + 1));
  write_index_file(base + ".colptr", d.indtype, colptr1);
  write_index_file(base + ".rowval", d.indtype, rowval1);
  sdk::write_file_atomic(base + ".nzval", nzval.data(), nzval.size());
  write_descriptor(base, d, true, p->nnz, rows + 1);
}

// metadata.json (0.3.0): one line mapping every axis and property to its
// descriptor, rebuilt from a sorted walk like Julia does after a delete.
void DafStore::rebuild_metadata() {
  std::string file = root_ + "/metadata.json";
  if (!v11() && !sdk::is_regular_file(file)) return;
  std::string out = "{";
  auto add = [&](const std::string& key, const std::string& value) {
    out += (out.size() > 1 ? "," : "") + Json(key).dump() + ":" + value;
  };
  auto add_file = [&](const std::string& key, const std::string& path) {
    std::string text = sdk::read_file(path, kMaxJsonBytes);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    add(key, text);
  };
  std::vector<std::string> axes = axis_names();
  for (const std::string& a : axes)
    add("axes/" + a, "{\"format\":\"axis\",\"n_entries\":" + std::to_string(*axis_length(a)) + "}");
  for (const std::string& s : names_with_suffix(root_ + "/scalars", ".json"))
    add_file("scalars/" + s, root_ + "/scalars/" + s + ".json");
  for (const std::string& a : axes)
    for (const std::string& v : names_with_suffix(root_ + "/vectors/" + a, ".json"))
      add_file("vectors/" + a + "/" + v, root_ + "/vectors/" + a + "/" + v + ".json");
  for (const std::string& r : axes)
    for (const std::string& c : axes)
      for (const std::string& m : names_with_suffix(root_ + "/matrices/" + r + "/" + c, ".json"))
        add_file("matrices/" + r + "/" + c + "/" + m, root_ + "/matrices/" + r + "/" + c + "/" + m + ".json");
  sdk::write_file_atomic(file, out + "}");
}

// Swaps the repository built in a temp directory into place.
void DafStore::publish_built_repository() {
  std::string old;
  if (sdk::path_exists(final_path_)) {
    old = sdk::temp_path_for(final_path_) + ".old";
    if (::rename(final_path_.c_str(), old.c_str()) != 0) sdk::io_fail(final_path_, "cannot move the old repository aside", errno);
  }
  if (::rename(root_.c_str(), final_path_.c_str()) != 0) {
    int e = errno;
    if (!old.empty()) (void)::rename(old.c_str(), final_path_.c_str());
    sdk::io_fail(final_path_, "cannot move the new repository into place", e);
  }
  building_ = false;
  root_ = final_path_;
  if (!old.empty()) remove_tree(old);
}

void DafStore::close() {
  if (closed_ || mode_ == STOWAGE_MODE_READ) return void(closed_ = true);
  for (const auto& [axis, length] : declared_axes_)
    invalid(final_path_ + ": axis '" + axis + "' (" + std::to_string(length) +
            " entries) was used by a property but its entries were never written (write_strings axes/" + axis + ")");
  std::vector<NodeRef> written;
  for (auto& [node, p] : pending_arrays_) commit_array(p), written.push_back(p.ref), dirty_ = true;
  for (auto& [node, p] : pending_sparse_) commit_sparse(p), written.push_back(p.ref), dirty_ = true;
  forget_cached();
  // Transposed copies, unless the other orientation was itself written now.
  std::set<std::string> explicit_nodes;
  for (const NodeRef& ref : written) explicit_nodes.insert(ref.rows + "/" + ref.cols + "/" + ref.name);
  for (const NodeRef& ref : written)
    if (relayout_ && ref.kind == NodeRef::Matrix && ref.rows != ref.cols &&
        !explicit_nodes.count(ref.cols + "/" + ref.rows + "/" + ref.name))
      write_relayout(ref);
  pending_arrays_.clear();
  pending_sparse_.clear();
  if (dirty_) rebuild_metadata();
  if (building_) publish_built_repository();
  closed_ = true;
}

}  // namespace daf
