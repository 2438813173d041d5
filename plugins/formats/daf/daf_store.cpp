// DafStore: opening, the node tree, describe() and reads.
#include "daf_store.hpp"

#include "daf_text.hpp"

#include <stowage/plugin_json.hpp>

#include <algorithm>

namespace daf {

using sdk::corrupt;
using sdk::invalid;
using OJson = nlohmann::ordered_json;

namespace {

constexpr uint64_t kMaxJsonBytes = 1 << 20;

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

struct Options {
  Version version{1, 0};  // "version": format of a new repository
  bool version_given = false;
  bool relayout = false;  // "relayout": also write the transpose of each matrix written
};

Options parse_options(std::string_view text) {
  Options o;
  const Json j = sdk::parse_json_object<Json>(text, "daf: the open options");
  if (auto it = j.find("version"); it != j.end()) {
    o.version_given = true;
    if (*it == Json::array({1, 0}))
      o.version = {1, 0};
    else if (*it == Json::array({1, 1}))
      o.version = {1, 1};
    else
      invalid("daf: option \"version\" must be [1,0] or [1,1], got " + it->dump());
  }
  if (auto it = j.find("relayout"); it != j.end()) {
    if (!it->is_boolean())
      invalid("daf: option \"relayout\" must be true or false, got " + it->dump());
    o.relayout = it->get<bool>();
  }
  return o;
}

OJson dims_json(const NodeRef& ref) {
  OJson dims = OJson::array();
  dims.push_back({{"name", ref.rows}, {"labels", "axes/" + ref.rows}});
  if (ref.kind == NodeRef::Matrix)
    dims.push_back({{"name", ref.cols}, {"labels", "axes/" + ref.cols}});
  return dims;
}

OJson shape_json(bool matrix, uint64_t rows, uint64_t cols) {
  return matrix ? OJson::array({rows, cols}) : OJson::array({rows});
}

// The description of a dense (or densified) numeric array.
OJson array_json(const NodeRef& ref, ElType t, const Tiling& tiling) {
  bool matrix = ref.kind == NodeRef::Matrix;
  OJson j;
  j["kind"] = "array";
  j["dtype"] = info(t).dtype;
  j["shape"] = shape_json(matrix, tiling.rows, tiling.cols);
  // Matrices: tiles stored column-major like the .data file (order F).
  j["chunks"] = matrix ? OJson::array({tiling.tile_rows, tiling.tile_cols})
                       : OJson::array({tiling.tile_rows});
  j["byte_order"] = "little";
  j["order"] = matrix ? "F" : "C";
  j["codec"] = nullptr;
  j["fill_value"] = 0;
  return j;
}

OJson property_storage(const Descriptor& d, uint64_t nnz) {
  OJson a;
  a["daf_eltype"] = julia_name(d.eltype);
  a["daf_storage"] = d.sparse ? "sparse" : "dense";
  if (d.sparse) {
    a["daf_indtype"] = julia_name(d.indtype);
    a["daf_nnz"] = nnz;
    a["daf_schema"] = d.v11_schema ? "1.1" : "1.0";
  }
  if (!d.packed.empty()) a["daf_packed"] = true;
  return a;
}

}  // namespace

// ---- opening ------------------------------------------------------------------------

int32_t DafStore::identify(const sdk::Probe& probe) { return probe.has_file("daf.json") ? 100 : 0; }

std::unique_ptr<sdk::Store> DafStore::open(const sdk::Host& host, std::string_view path,
                                           uint32_t mode, std::string_view options) {
  return std::make_unique<DafStore>(host, std::string(path), mode, options);
}

DafStore::DafStore(const sdk::Host& host, std::string path, uint32_t mode, std::string_view options)
    : storage_(sdk::Storage::for_location(host, path)),
      final_path_(strip_trailing_slashes(std::move(path))),
      mode_(mode) {
  if (mode > STOWAGE_MODE_TRUNCATE) invalid("daf: unknown open mode " + std::to_string(mode));
  Options opts = parse_options(options);
  relayout_ = opts.relayout;
  const int32_t kind = storage_.kind(final_path_);
  bool exists = kind != STOWAGE_ENTRY_ABSENT;
  if (exists && kind != STOWAGE_ENTRY_DIRECTORY)
    invalid(final_path_ + ": not a directory (a Daf repository is one)");
  bool is_daf = exists && is_file(storage_, final_path_ + "/daf.json");
  if (mode == STOWAGE_MODE_TRUNCATE && exists && !is_daf && !storage_.list(final_path_).empty())
    invalid(
        final_path_ +
        ": refusing to replace a non-empty directory that is not a Daf repository (no daf.json)");
  if (mode == STOWAGE_MODE_TRUNCATE || (mode == STOWAGE_MODE_CREATE && !exists)) {
    building_ = true;
    version_ = opts.version;
    root_ = storage_.stage_directory(final_path_);  // parent directories are made too
    create_repository();
    return;
  }
  if (!exists) sdk::fail(STOWAGE_NOT_FOUND, final_path_ + ": no such Daf repository");
  if (!is_daf) sdk::fail(STOWAGE_NOT_FOUND, final_path_ + ": not a daf directory (no daf.json)");
  root_ = final_path_;
  std::string daf_json = root_ + "/daf.json";
  version_ = parse_daf_json(read_small_text(storage_, daf_json, kMaxJsonBytes), daf_json);
  if (storage_.is_directory(root_ + "/.reorder.backup"))
    host.log(
        STOWAGE_LOG_WARNING,
        root_ + ": has .reorder.backup/, an interrupted reorder_axes!; data may be inconsistent");
  if (opts.version_given && opts.version != version_)
    host.log(STOWAGE_LOG_WARNING, final_path_ + ": keeping the repository's own format version " +
                                      std::to_string(version_[0]) + "." +
                                      std::to_string(version_[1]));
}

DafStore::~DafStore() {
  pending_arrays_.clear();  // their staged files go first, before the directory they sit in
  if (building_) {          // never published: leave nothing behind
    try {
      storage_.remove_if_exists(root_);
    } catch (...) {  // a hidden leftover directory, harmless; a throwing destructor is not
    }
  }
}

// ---- layout ---------------------------------------------------------------------------

std::string DafStore::property_dir(const NodeRef& ref) const {
  if (ref.kind == NodeRef::Matrix) return root_ + "/matrices/" + ref.rows + "/" + ref.cols;
  return root_ + "/vectors/" + ref.rows;
}

std::string DafStore::property_base(const NodeRef& ref) const {
  return property_dir(ref) + "/" + ref.name;
}

std::vector<std::string> DafStore::axis_names() const { return names_in(root_ + "/axes", ".txt"); }

std::shared_ptr<const std::vector<std::string>> DafStore::axis_entries(const std::string& axis) {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    auto it = axes_.find(axis);
    if (it != axes_.end()) return it->second;
  }
  std::string file = axis_file(axis);
  if (!is_file(storage_, file)) return nullptr;
  auto entries =
      std::make_shared<const std::vector<std::string>>(split_lines(storage_.read_text(file), file));
  std::lock_guard<std::mutex> lock(cache_mutex_);
  return axes_.emplace(axis, entries).first->second;
}

std::optional<uint64_t> DafStore::axis_length(const std::string& axis) {
  auto entries = axis_entries(axis);
  if (!entries) return std::nullopt;
  return entries->size();
}

uint64_t DafStore::required_axis_length(const std::string& axis, const std::string& node) {
  if (auto n = axis_length(axis)) return *n;
  auto declared = declared_axes_.find(axis);
  if (declared != declared_axes_.end()) return declared->second;
  sdk::fail(STOWAGE_NOT_FOUND, root_ + ": " + node + " refers to axis '" + axis +
                                   "', which does not exist (no axes/" + axis + ".txt)");
}

std::shared_ptr<const Property> DafStore::load(const NodeRef& ref, std::string_view node) {
  std::string key(node);
  uint64_t rows = required_axis_length(ref.rows, key);
  uint64_t cols = ref.kind == NodeRef::Matrix ? required_axis_length(ref.cols, key) : 1;
  return load_property(host(), storage_, root_, ref, key, rows, cols);
}

void DafStore::forget_cached() {
  std::lock_guard<std::mutex> lock(cache_mutex_);
  axes_.clear();
}

// ---- the tree -----------------------------------------------------------------------------

std::vector<std::string> DafStore::list(std::string_view node) {
  NodeRef ref = parse_node(node);
  auto need_axis = [&](const std::string& a) {
    if (!axis_length(a))
      sdk::fail(STOWAGE_NOT_FOUND,
                root_ + ": no axis '" + a + "' (node '" + std::string(node) + "')");
  };
  auto with_pending = [&](std::vector<std::string> names, const std::string& prefix) {
    for (const auto& [path, p] : pending_arrays_)
      if (path.compare(0, prefix.size(), prefix) == 0) names.push_back(p.ref.name);
    for (const auto& [path, p] : pending_sparse_)
      if (path.compare(0, prefix.size(), prefix) == 0) names.push_back(p.ref.name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  };
  switch (ref.kind) {
    case NodeRef::Root:
      return {"axes", "vectors", "matrices"};
    case NodeRef::AxesGroup:
    case NodeRef::VectorsGroup:
    case NodeRef::MatricesGroup:
      return axis_names();
    case NodeRef::MatrixRowsGroup:
      need_axis(ref.rows);
      return axis_names();
    case NodeRef::VectorAxisGroup:
      need_axis(ref.rows);
      return with_pending(names_in(root_ + "/vectors/" + ref.rows, ".json"),
                          "vectors/" + ref.rows + "/");
    case NodeRef::MatrixPairGroup:
      need_axis(ref.rows), need_axis(ref.cols);
      return with_pending(names_in(root_ + "/matrices/" + ref.rows + "/" + ref.cols, ".json"),
                          "matrices/" + ref.rows + "/" + ref.cols + "/");
    default:
      return {};
  }
}

std::string DafStore::describe(std::string_view node) {
  NodeRef ref = parse_node(node);
  if (ref.kind == NodeRef::Root) return describe_root();
  if (ref.kind == NodeRef::Axis) {
    auto n = axis_length(ref.rows);
    if (!n) sdk::fail(STOWAGE_NOT_FOUND, root_ + ": no axis '" + ref.rows + "'");
    return OJson{{"kind", "strings"}, {"attributes", OJson::object()}, {"shape", {*n}}}.dump();
  }
  if (ref.is_property()) return describe_property(ref, node);
  list(node);  // NOT_FOUND for groups of missing axes
  return R"({"kind":"group","attributes":{}})";
}

std::string DafStore::describe_root() {
  OJson attributes = OJson::object(), types = OJson::object();
  for (const std::string& name : names_in(root_ + "/scalars", ".json")) {
    std::string file = root_ + "/scalars/" + name + ".json";
    Scalar s = parse_scalar(read_small_text(storage_, file, kMaxJsonBytes), file);
    attributes[name] = OJson::parse(s.value.dump());
    types[name] = julia_name(s.type);
  }
  attributes["daf_types"] = types;
  OJson j;
  j["kind"] = "group";
  j["attributes"] = attributes;
  j["daf_version"] = {version_[0], version_[1]};
  return j.dump();
}

std::string DafStore::describe_property(const NodeRef& ref, std::string_view node) {
  std::string key(node);
  bool matrix = ref.kind == NodeRef::Matrix;
  if (auto it = pending_arrays_.find(key); it != pending_arrays_.end()) {
    const PendingArray& p = it->second;
    OJson j = array_json(ref, p.eltype, p.tiling);
    j["dims"] = dims_json(ref);
    j["attributes"] = OJson::object();
    j["storage"] = {{"daf_eltype", julia_name(p.eltype)},
                    {"daf_storage", p.store_sparse ? "sparse" : "dense"}};
    return j.dump();
  }
  if (auto it = pending_sparse_.find(key); it != pending_sparse_.end()) {
    const PendingSparse& p = it->second;
    OJson j{{"kind", "sparse"},
            {"dtype", info(p.eltype).dtype},
            {"shape", {p.rows, p.cols}},
            {"layout", "csc"},
            {"nnz", p.colptr.back()}};
    j["dims"] = dims_json(ref);
    j["attributes"] = OJson::object();
    j["storage"] = {{"daf_eltype", julia_name(p.eltype)},
                    {"daf_storage", "sparse"},
                    {"daf_indtype", julia_name(p.indtype)}};
    return j.dump();
  }
  auto p = load(ref, node);
  OJson j;
  if (p->is_string()) {
    j = {{"kind", "strings"}, {"shape", shape_json(matrix, p->rows, p->cols)}};
  } else if (p->is_sparse_matrix()) {
    j = {{"kind", "sparse"},
         {"dtype", info(p->desc.eltype).dtype},
         {"shape", {p->rows, p->cols}},
         {"layout", "csc"},
         {"nnz", p->nnz}};
  } else {
    j = array_json(ref, p->desc.eltype, p->tiling);
  }
  j["dims"] = dims_json(ref);
  // How the property is stored, not what it means: "storage" goes only to
  // another Daf repository (stowage::copy), never into another format.
  j["attributes"] = OJson::object();
  j["storage"] = property_storage(p->desc, p->nnz);
  return j.dump();
}

// ---- reads ------------------------------------------------------------------------------------

bool DafStore::read_chunk(const std::string& node, const Property* stored,
                          const uint64_t* chunk_index, void* out, size_t capacity,
                          uint64_t* chunk_shape) {
  {
    std::unique_lock<std::mutex> lock(pending_mutex_);
    auto it = pending_arrays_.find(node);
    if (it != pending_arrays_.end()) {
      PendingArray& p = it->second;
      lock.unlock();
      return read_pending_chunk(p, chunk_index, out, capacity, chunk_shape);
    }
  }
  if (!stored) sdk::fail(STOWAGE_NOT_FOUND, root_ + ": " + node + " was removed");
  stored->read_chunk(chunk_index, out, capacity, chunk_shape);
  return true;
}

// A stored dense property holds every chunk; one being written, those written.
bool DafStore::chunk_exists(const std::string& node, const Property* stored,
                            const uint64_t* chunk_index) {
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    auto it = pending_arrays_.find(node);
    if (it != pending_arrays_.end()) {
      const PendingArray& p = it->second;
      return p.written[p.tiling.tile(chunk_index, p.base).flat];
    }
  }
  if (!stored) sdk::fail(STOWAGE_NOT_FOUND, root_ + ": " + node + " was removed");
  stored->tiling.tile(chunk_index, node);  // checks the index
  return true;
}

}  // namespace daf
