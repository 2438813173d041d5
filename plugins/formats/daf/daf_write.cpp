// DafStore: creating repositories and properties, writing and deleting.
// What close() commits is in daf_commit.cpp.
#include "daf_store.hpp"

#include "daf_text.hpp"

#include <stowage/array_limits.hpp>
#include <stowage/plugin_json.hpp>

#include <algorithm>
#include <cstring>
#include <set>

namespace daf {

using sdk::invalid;

namespace {

constexpr uint64_t kMaxJsonBytes = 1 << 20;

std::string string_or(const Json& j, const char* key, const std::string& fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::vector<uint64_t> shape_of(const Json& d, std::string_view node) {
  std::vector<uint64_t> shape;
  auto it = d.find("shape");
  if (it == d.end() || !it->is_array())
    invalid(std::string(node) + ": the description has no \"shape\"");
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

// A storage hint ("daf_storage", "daf_indtype") from the description's
// "storage" object, as describe() gives it, or from its attributes (where
// descriptions written by older versions of this plugin carry them).
std::string storage_hint(const Json& d, const char* key) {
  for (const char* where : {"storage", "attributes"}) {
    auto a = d.find(where);
    if (a != d.end() && a->is_object() && a->contains(key)) return string_or(*a, key, "");
  }
  return "";
}

// The index type asked for in daf_indtype, if it can index `size`.
ElType choose_indtype(const Json& d, uint64_t size) {
  ElType t = indtype_for_size(size);
  if (auto asked = parse_julia_name(storage_hint(d, "daf_indtype")))
    if (is_integer(*asked) && max_index(*asked) >= size) t = *asked;
  return t;
}

bool asks_sparse(const Json& d) { return storage_hint(d, "daf_storage") == "sparse"; }

// A property has no user attributes (Daf keeps them only on the root, as
// scalars): refused, naming them, rather than dropped.
void refuse_property_attributes(const Json& attributes, std::string_view node) {
  if (!attributes.is_object()) return;
  for (const auto& [key, value] : attributes.items())
    if (key.compare(0, 4, "daf_") != 0)
      sdk::unsupported(std::string(node) +
                       ": Daf keeps user attributes only on the root (as scalars); got '" + key +
                       "'");
}

void check_vector_name(const NodeRef& ref) {
  check_name(ref.name, "property");
  if (ref.kind == NodeRef::Vector && (ref.name == "name" || ref.name == "index"))
    invalid("vectors/" + ref.rows + "/" + ref.name + ": '" + ref.name +
            "' is a reserved Daf vector name");
}

}  // namespace

// ---- repository level ----------------------------------------------------------------------

void DafStore::require_writable(std::string_view what) const {
  if (mode_ == STOWAGE_MODE_READ)
    invalid(final_path_ + ": opened read-only (mode r); cannot " + std::string(what));
  if (closed_) invalid(final_path_ + ": the store is closed");
}

void DafStore::create_repository() {
  storage_.make_directory(root_);
  storage_.write(root_ + "/daf.json", format_daf_json(version_));
  for (const char* dir : {"scalars", "axes", "vectors", "matrices"})
    storage_.make_directory(root_ + "/" + dir);
  dirty_ = true;  // a [1,1] repository gets its metadata.json at close
}

// Julia lists properties with readdir, so every vectors/<a>/ and the full
// grid matrices/<a>/<o>/, matrices/<o>/<a>/ must exist.
void DafStore::add_axis_directories(const std::string& axis) {
  storage_.make_directory(root_ + "/vectors/" + axis);
  for (const std::string& other : axis_names()) {
    storage_.make_directory(root_ + "/matrices/" + axis + "/" + other);
    storage_.make_directory(root_ + "/matrices/" + other + "/" + axis);
  }
}

uint64_t DafStore::declared_axis_length(const std::string& axis, uint64_t length,
                                        const std::string& node) {
  check_name(axis, "axis");
  if (auto n = axis_length(axis)) {
    if (*n != length)
      invalid(node + ": length " + std::to_string(length) + " does not match axis '" + axis +
              "' with " + std::to_string(*n) + " entries");
    return length;
  }
  auto [it, added] = declared_axes_.emplace(axis, length);
  if (!added && it->second != length)
    invalid(node + ": length " + std::to_string(length) + " does not match axis '" + axis +
            "' declared with " + std::to_string(it->second) + " entries");
  return length;
}

void DafStore::write_axis(const NodeRef& ref, const std::vector<std::string_view>& values) {
  const std::string& axis = ref.rows;
  check_name(axis, "axis");
  std::set<std::string_view> seen;
  for (std::string_view v : values) {
    check_line_value(v, "axes/" + axis);
    if (!seen.insert(v).second)
      invalid("axes/" + axis + ": duplicate entry '" + std::string(v) + "'");
  }
  if (auto existing = axis_entries(axis)) {
    if (std::equal(existing->begin(), existing->end(), values.begin(), values.end())) return;
    invalid("axes/" + axis +
            ": the axis exists with other entries; remove it first (this deletes its properties)");
  }
  auto declared = declared_axes_.find(axis);
  if (declared != declared_axes_.end() && declared->second != values.size())
    invalid("axes/" + axis + ": " + std::to_string(values.size()) +
            " entries, but properties created on it have " + std::to_string(declared->second));
  storage_.write(axis_file(axis), join_lines(values, "axes/" + axis));
  declared_axes_.erase(axis);
  forget_cached();
  add_axis_directories(axis);
  dirty_ = true;
}

void DafStore::write_descriptor(const std::string& base, const Descriptor& d, bool matrix,
                                uint64_t n_indices, uint64_t n_colptr) {
  storage_.write(base + ".json", format_descriptor(d, matrix, v11(), n_indices, n_colptr));
}

void DafStore::delete_property_files(const std::string& base) {
  for (const std::string& suffix : property_suffixes()) remove_file(storage_, base + suffix);
}

void DafStore::delete_axis(const std::string& axis) {
  remove_file(storage_, axis_file(axis));
  storage_.remove_if_exists(root_ + "/vectors/" + axis);
  storage_.remove_if_exists(root_ + "/matrices/" + axis);
  for (const std::string& other : axis_names())
    storage_.remove_if_exists(root_ + "/matrices/" + other + "/" + axis);
  for (auto* pending : {&pending_arrays_}) {
    for (auto it = pending->begin(); it != pending->end();)
      it = (it->second.ref.rows == axis || it->second.ref.cols == axis) ? pending->erase(it)
                                                                        : std::next(it);
  }
  for (auto it = pending_sparse_.begin(); it != pending_sparse_.end();)
    it = (it->second.ref.rows == axis || it->second.ref.cols == axis) ? pending_sparse_.erase(it)
                                                                      : std::next(it);
}

// ---- create / remove / attributes ---------------------------------------------------------

void DafStore::create(std::string_view node, std::string_view json) {
  require_writable("create " + std::string(node));
  NodeRef ref = parse_node(node);
  Json d = sdk::parse_json_object<Json>(json, std::string(node) + ": the description");
  std::string kind = string_or(d, "kind", "");
  if (ref.kind == NodeRef::Axis) {
    if (kind != "strings")
      invalid(std::string(node) + ": an axis is a string array, not '" + kind + "'");
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
  if (auto a = d.find("attributes"); a != d.end()) refuse_property_attributes(*a, node);
  if (kind == "array") return create_array(ref, node, d);
  if (kind == "sparse") return create_sparse(ref, node, d);
  if (kind == "strings") {  // the values come with write_strings
    std::vector<uint64_t> shape = shape_of(d, node);
    if (shape.size() != (ref.kind == NodeRef::Matrix ? 2u : 1u))
      invalid(std::string(node) + ": wrong rank");
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
    invalid(std::string(node) + ": a Daf " + (matrix ? "matrix has 2" : "vector has 1") +
            " dimension(s), got " + std::to_string(shape.size()));
  ElType eltype = numeric_dtype(d, node);
  // Its .data file holds every element: refused before an axis is declared or a byte written.
  if (!stowage::sdk::addressable(shape, element_size(eltype)))
    invalid(std::string(node) + ": shape " + stowage::sdk::extents_text(shape) + " of " +
            string_or(d, "dtype", "") + " is more bytes than a 64-bit offset can address");
  uint64_t rows = declared_axis_length(ref.rows, shape[0], std::string(node));
  uint64_t cols = matrix ? declared_axis_length(ref.cols, shape[1], std::string(node)) : 1;
  storage_.make_directory(property_dir(ref));
  PendingArray p = start_pending_array(ref, eltype, rows, cols);
  p.store_sparse = asks_sparse(d);
  pending_sparse_.erase(std::string(node));
  pending_arrays_.insert_or_assign(std::string(node), std::move(p));
  forget_cached();
}

// A staged .data file of the full size (a sparse file: nothing is written
// yet, holes read as zeros), and no chunk written yet.
PendingArray DafStore::start_pending_array(const NodeRef& ref, ElType eltype, uint64_t rows,
                                           uint64_t cols) {
  PendingArray p;
  p.ref = ref;
  p.base = property_base(ref);
  p.eltype = eltype;
  p.tiling = Tiling::for_array(ref.kind == NodeRef::Matrix, rows, cols, element_size(eltype));
  p.data = storage_.stage(p.base + ".data");
  p.data.resize(rows * cols * element_size(eltype));
  p.written.reset(new std::atomic<bool>[std::max<uint64_t>(p.tiling.count(), 1)]());
  return p;
}

void DafStore::create_sparse(const NodeRef& ref, std::string_view node, const Json& d) {
  if (ref.kind != NodeRef::Matrix)
    sdk::unsupported(std::string(node) + ": a sparse node must be a matrix");
  if (string_or(d, "layout", "csc") != "csc")
    sdk::unsupported(std::string(node) +
                     ": Daf stores sparse matrices as CSC; write the CSR data as the CSC of "
                     "the transpose, matrices/" +
                     ref.cols + "/" + ref.rows + "/" + ref.name);
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
    if (!it->is_number_unsigned())
      invalid(std::string(node) + ": \"nnz\" must be a count, got " + it->dump());
    nnz = it->get<uint64_t>();
  }
  p.indtype = choose_indtype(d, std::max(p.rows, nnz + 1));
  storage_.make_directory(property_dir(ref));
  p.rowval = storage_.stage(p.base + ".rowval");
  p.nzval = storage_.stage(p.base + ".nzval");
  pending_arrays_.erase(std::string(node));
  pending_sparse_.insert_or_assign(std::string(node), std::move(p));
  forget_cached();
}

void DafStore::remove(std::string_view node) {
  require_writable("remove " + std::string(node));
  NodeRef ref = parse_node(node);
  if (ref.kind == NodeRef::Axis) {
    if (!axis_length(ref.rows))
      sdk::fail(STOWAGE_NOT_FOUND, root_ + ": no axis '" + ref.rows + "'");
    delete_axis(ref.rows);
  } else if (ref.is_property()) {
    std::string key(node);
    bool pending = pending_arrays_.erase(key) + pending_sparse_.erase(key) > 0;
    if (!pending && !is_file(storage_, property_base(ref) + ".json"))
      sdk::fail(STOWAGE_NOT_FOUND, root_ + ": no property " + key);
    delete_property_files(property_base(ref));
  } else {
    invalid(std::string(node) +
            ": Daf groups cannot be removed (remove the axes or properties in them)");
  }
  forget_cached();
  dirty_ = true;
}

void DafStore::set_attributes(std::string_view node, std::string_view json) {
  require_writable("set attributes of '" + std::string(node) + "'");
  Json a = sdk::parse_json_object<Json>(json, std::string(node) + ": attributes");
  NodeRef ref = parse_node(node);
  if (ref.kind == NodeRef::Root) return set_scalars(a);
  refuse_property_attributes(a, node);
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
      auto t =
          types[name].is_string() ? parse_julia_name(types[name].get<std::string>()) : std::nullopt;
      if (!t) invalid(what + ": unknown Daf type " + types[name].dump());
      s.type = *t;
    } else {
      s.type = infer_scalar_type(value, what);
    }
    s.value = normalize_scalar(s.type, value, what);
    std::string file = root_ + "/scalars/" + name + ".json";
    std::string text = format_scalar(s);
    if (!is_file(storage_, file) || read_small_text(storage_, file, kMaxJsonBytes) != text)
      storage_.write(file, text);
    keep.insert(name);
  }
  for (const std::string& name : names_in(root_ + "/scalars", ".json"))
    if (!keep.count(name)) remove_file(storage_, root_ + "/scalars/" + name + ".json");
  dirty_ = true;
}

// ---- dense arrays ------------------------------------------------------------------------------

PendingArray& DafStore::pending_array_for_write(const NodeRef& ref, std::string_view node) {
  std::lock_guard<std::mutex> lock(pending_mutex_);
  auto it = pending_arrays_.find(std::string(node));
  if (it != pending_arrays_.end()) return it->second;
  // An existing property changed in place (r+): copy it to a staged file first.
  auto stored = load(ref, node);
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

bool DafStore::read_pending_chunk(const PendingArray& p, const uint64_t* chunk_index, void* out,
                                  size_t capacity, uint64_t* chunk_shape) const {
  Tiling::Tile t = p.tiling.tile(chunk_index, p.base);
  if (!p.written[t.flat]) return false;
  size_t es = element_size(p.eltype);
  if (t.elements() * es > capacity) invalid(p.base + ": output buffer too small for a chunk");
  auto* dst = static_cast<unsigned char*>(out);
  p.tiling.for_each_run(t, [&](uint64_t file_element, uint64_t tile_element, uint64_t n) {
    if (p.data.read_at(file_element * es, dst + tile_element * es, n * es) != n * es)
      sdk::fail(STOWAGE_IO, p.base + ".data: the staged file is shorter than the array");
  });
  p.tiling.shape_of(t, chunk_shape);
  return true;
}

// Each run of a column-major tile goes to its place in the staged .data.
void DafStore::write_tile(PendingArray& p, const Tiling::Tile& t, const void* in) {
  size_t es = element_size(p.eltype);
  const auto* src = static_cast<const unsigned char*>(in);
  p.tiling.for_each_run(t, [&](uint64_t file_element, uint64_t tile_element, uint64_t n) {
    p.data.write_at(file_element * es, src + tile_element * es, n * es);
  });
  p.written[t.flat] = true;
}

void DafStore::write_chunk(const std::string& node, const uint64_t* chunk_index, const void* in,
                           size_t size, const uint64_t* chunk_shape) {
  require_writable("write " + node);
  NodeRef ref = parse_node(node);
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

void DafStore::append_sparse(const std::string& node, uint64_t n_major, const uint64_t* indptr,
                             const uint32_t* indices, const void* values) {
  require_writable("append to " + std::string(node));
  auto it = pending_sparse_.find(std::string(node));
  if (it == pending_sparse_.end())
    invalid(std::string(node) + ": create() the sparse matrix before appending");
  PendingSparse& p = it->second;
  uint64_t done = p.colptr.size() - 1;
  if (n_major > p.cols - done)
    invalid(std::string(node) + ": appending " + std::to_string(n_major) + " columns after " +
            std::to_string(done) + " exceeds the " + std::to_string(p.cols) + " columns");
  if (indptr[0] != 0) invalid(std::string(node) + ": indptr must start at 0");
  size_t es = element_size(p.eltype), is = element_size(p.indtype);
  const auto* vals = static_cast<const unsigned char*>(values);
  std::vector<unsigned char> rowbuf, valbuf;
  rowbuf.reserve(indptr[n_major] * is), valbuf.reserve(indptr[n_major] * es);
  uint64_t nnz = p.colptr.back();
  for (uint64_t c = 0; c < n_major; ++c) {
    if (indptr[c + 1] < indptr[c])
      invalid(std::string(node) + ": indptr decreases at column " + std::to_string(done + c));
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
        invalid(std::string(node) + ": more stored values than index type " +
                julia_name(p.indtype) + " can address; declare \"nnz\" in create()");
      rowbuf.resize(rowbuf.size() + is);
      store_index(rowbuf.data() + rowbuf.size() - is, p.indtype, 0, indices[k] + 1);
      valbuf.insert(valbuf.end(), vals + k * es, vals + (k + 1) * es);
      if (p.eltype == ElType::Bool) valbuf.back() = 1;
      ++nnz;
    }
    p.colptr.push_back(nnz);
  }
  if (!sdk::host_is_little_endian()) sdk::swap_bytes_inplace(valbuf.data(), valbuf.size() / es, es);
  p.rowval.append(rowbuf.data(), rowbuf.size());
  p.nzval.append(valbuf.data(), valbuf.size());
}

// ---- strings
// -------------------------------------------------------------------------------------

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
  storage_.make_directory(property_dir(ref));
  pending_arrays_.erase(std::string(node));
  pending_sparse_.erase(std::string(node));
  for (const std::string& suffix : property_suffixes())
    if (suffix != ".txt" && suffix != ".json") remove_file(storage_, base + suffix);
  storage_.write(base + ".txt", join_lines(column_major, std::string(node)));
  Descriptor d;
  d.eltype = ElType::String;
  write_descriptor(base, d, matrix, 0, 0);
  forget_cached();
  dirty_ = true;
  if (relayout_ && matrix && ref.rows != ref.cols) write_relayout(ref);
}

}  // namespace daf
