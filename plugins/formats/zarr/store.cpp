// The tree of a Zarr v2 store: opening, listing, describing, creating and
// removing groups and arrays. Chunks are in chunk_io.cpp.
#include "store.hpp"

#include <stowage/array_limits.hpp>
#include <stowage/node_listing.hpp>

#include "codec_names.hpp"
#include "filter_chain.hpp"
#include "strings.hpp"

#include <stowage/plugin_json.hpp>

#include <algorithm>

namespace zarr {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;
using sdk::invalid;
using sdk::unsupported;

namespace {

const json kGroupMetadata = json{{"zarr_format", 2}};

// Whether one of Zarr's metadata files is in `dir`, asked by name.
bool holds_metadata(const sdk::Storage& storage, const std::string& dir) {
  for (const char* name : {kV3File, kGroupFile, kArrayFile, kConsolidatedFile})
    if (storage.is_file(dir + "/" + name)) return true;
  return false;
}

// xarray's convention for dimension names in Zarr v2: the attribute
// "_ARRAY_DIMENSIONS", one string per dimension.
json dims_of(const json& attributes, size_t ndim) {
  const auto it = attributes.find("_ARRAY_DIMENSIONS");
  if (it == attributes.end() || !it->is_array() || it->size() != ndim) return nullptr;
  json dims = json::array();
  for (const json& name : *it) {
    if (!name.is_string()) return nullptr;
    dims.push_back(json{{"name", name}, {"labels", nullptr}});
  }
  return dims;
}

json array_description(const ArrayMeta& a, const json& attributes) {
  json d = json::object();
  d["kind"] = "array";
  d["dtype"] = a.type.name;
  d["shape"] = a.shape;
  d["chunks"] = a.chunks;
  d["byte_order"] = a.type.big_endian ? "big" : "little";
  d["order"] = a.fortran ? "F" : "C";
  d["codec"] = a.codec_error.empty() ? a.codec : unreadable_codec(a);
  d["fill_value"] = a.fill.for_host;
  if (json dims = dims_of(attributes, a.ndim()); !dims.is_null()) d["dims"] = dims;
  d["attributes"] = attributes;
  // How the array is stored, which only another Zarr store takes over.
  d["storage"] = json{{"zarr_format", 2},
                      {"dimension_separator", std::string(1, a.separator)},
                      {"compressor", a.compressor},
                      {"filters", a.filters}};
  return d;
}

}  // namespace

// Extents from a create() description: an array of integers >= min.
std::vector<uint64_t> description_extents(const json& d, const char* key, uint64_t min) {
  if (!d.contains(key) || !d[key].is_array())
    invalid(std::string("zarr create: \"") + key + "\" must be an array of integers");
  std::vector<uint64_t> out;
  for (const json& v : d[key]) {
    const bool non_negative =
        v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!non_negative || v.get<uint64_t>() < min || v.get<uint64_t>() > uint64_t(INT64_MAX))
      invalid(std::string("zarr create: \"") + key + "\" has " + v.dump() +
              "; each entry must be an integer >= " + std::to_string(min));
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

// ---- opening -------------------------------------------------------------------

// 100 for a directory holding .zgroup or .zarray (or v3's zarr.json, which
// open() then refuses by name), 80 for a directory named
// *.zarr without them, else 0. Only names are looked at: no file is read.
int32_t ZarrStore::identify(const sdk::Probe& probe) {
  if (!probe.is_directory()) return 0;
  if (probe.has_file(kGroupFile) || probe.has_file(kArrayFile) || probe.has_file(kV3File))
    return 100;
  const std::string_view path = probe.path();
  const bool zarr_name = path.size() > 5 && path.substr(path.size() - 5) == ".zarr";
  return zarr_name ? 80 : 0;
}

std::unique_ptr<sdk::Store> ZarrStore::open(const sdk::Host& host, std::string_view path,
                                            uint32_t mode, std::string_view options_json) {
  std::string root(path);
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) invalid("zarr: empty store path");
  const json options = sdk::parse_json_object(options_json, "zarr: the open options");
  // {"zarr_version": 2 or 3}: the version of a store this open creates (3
  // by default); an existing store keeps its own, also when replaced in
  // place ("w" on storage without rename) unless the option says otherwise.
  const json v = options.value("zarr_version", json(3));
  if (v != 2 && v != 3) invalid("zarr: \"zarr_version\" must be 2 or 3, got " + v.dump());
  int version = v.get<int>();
  const bool asked = options.contains("zarr_version");
  if (mode > STOWAGE_MODE_TRUNCATE) invalid("zarr: unknown open mode " + std::to_string(mode));
  sdk::Storage storage = sdk::Storage::for_location(host, root);
  int32_t kind = storage.kind(root);
  // An object store's prefix is no object (its HEAD is 404): a metadata file says it is there.
  if (kind == STOWAGE_ENTRY_ABSENT && holds_metadata(storage, root)) kind = STOWAGE_ENTRY_DIRECTORY;
  const bool exists = kind != STOWAGE_ENTRY_ABSENT;
  if (exists && kind != STOWAGE_ENTRY_DIRECTORY)
    invalid(root + ": is a file; a Zarr store is a directory");
  const bool fresh = mode == STOWAGE_MODE_TRUNCATE || (mode == STOWAGE_MODE_CREATE && !exists);
  if (!exists && !fresh) fail(STOWAGE_NOT_FOUND, root + ": no such Zarr store");
  if (exists && (mode != STOWAGE_MODE_TRUNCATE || !asked)) {
    if (storage.is_file(root + "/" + kV3File))
      version = 3;
    else if (storage.is_file(root + "/" + kGroupFile) || storage.is_file(root + "/" + kArrayFile))
      version = 2;
  }
  auto store = std::make_unique<ZarrStore>(storage, root, mode != STOWAGE_MODE_READ, version);
  store->open_consolidated(options, exists && mode != STOWAGE_MODE_TRUNCATE);
  const Kind found = exists ? store->kind_of(root) : Kind::none;

  if (fresh || (mode == STOWAGE_MODE_CREATE && found == Kind::none)) {
    if (exists && found == Kind::none && !storage.list(root).empty())
      invalid(root + ": refusing to " + (fresh ? "replace" : "write into") +
              " a non-empty directory that is not a Zarr store");
    if (exists && fresh) storage.remove(root, STOWAGE_REMOVE_RECURSIVE);
    storage.make_directory(root);
    store->write_group(root, json::object());
  } else if (found == Kind::none) {
    fail(STOWAGE_NOT_FOUND, root + ": is not a Zarr store (it has no " + kGroupFile + ", " +
                                kArrayFile + " or " + kV3File + ")");
  }
  return store;
}

ZarrStore::ZarrStore(sdk::Storage storage, std::string root, bool writable, int version)
    : storage_(storage), root_(std::move(root)), writable_(writable), version_(version) {}

void ZarrStore::close() {
  publish_pending_shards();  // v3 shards still incomplete (chunk_io_v3.cpp)
  close_consolidated();      // v2 .zmetadata, when asked (consolidated.cpp)
}

// ---- paths and metadata --------------------------------------------------------

std::string ZarrStore::node_dir(const std::vector<std::string>& parts) const {
  std::string dir = root_;
  for (const std::string& p : parts) dir += "/" + p;
  return dir;
}

ZarrStore::Kind ZarrStore::kind_of(const std::string& dir) const {
  if (consolidated_) {
    const std::string prefix = dir == root_ ? "" : relative(dir) + "/";
    if (consolidated_->text(prefix + kArrayFile)) return Kind::array;
    return consolidated_->text(prefix + kGroupFile) ? Kind::group : Kind::none;
  }
  if (version_ == 3) return kind_of_v3(dir);
  if (storage_.is_file(dir + "/" + kArrayFile)) return Kind::array;
  if (storage_.is_file(dir + "/" + kGroupFile)) return Kind::group;
  return Kind::none;
}

// An array's chunk directories ("/" separator) are directories too: a path
// through an array is not a node.
void ZarrStore::require_outside_arrays(const std::vector<std::string>& parts) const {
  std::string dir = root_;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (kind_of(dir) == Kind::array)
      fail(STOWAGE_NOT_FOUND, node_dir(parts) + ": is inside array '" +
                                  sdk::join_node_path(parts, i) +
                                  "' (its chunk directories are not nodes)");
    dir += "/" + parts[i];
  }
}

ZarrStore::Kind ZarrStore::require_node(const std::vector<std::string>& parts,
                                        std::string_view node) const {
  require_outside_arrays(parts);
  const Kind kind = kind_of(node_dir(parts));
  if (kind == Kind::none)
    fail(STOWAGE_NOT_FOUND, node_dir(parts) + ": no group or array '" + std::string(node) +
                                "' (no " + kGroupFile + " or " + kArrayFile + ")");
  return kind;
}

void ZarrStore::require_writable(const char* operation) const {
  if (!writable_) invalid(root_ + ": " + operation + " needs the store opened for writing");
}

std::optional<std::string> ZarrStore::read_metadata(const std::string& file) const {
  if (consolidated_) return consolidated_->text(relative(file));
  std::optional<sdk::Bytes> bytes;
  try {
    // At most one byte more than allowed: an absurd file costs no more than that.
    bytes = storage_.read(file, 0, kMaxMetadataBytes + 1);
  } catch (const sdk::Error& e) {
    if (e.code() == STOWAGE_NOT_FOUND) return std::nullopt;
    throw;
  }
  if (bytes->size() > kMaxMetadataBytes) corrupt(file + ": too large for metadata (over 256 MiB)");
  return std::string(bytes->text());
}

json ZarrStore::read_attributes(const std::string& dir) const {
  if (version_ == 3) return read_v3_document(dir)["attributes"];
  const std::string file = dir + "/" + kAttributesFile;
  std::optional<std::string> text = read_metadata(file);
  return text ? parse_object(*text, metadata_name(file)) : json::object();
}

void ZarrStore::write_text(const std::string& file, const json& j) const {
  storage_.write(file, to_text(j));
}

void ZarrStore::write_group(const std::string& dir, const json& attributes) const {
  if (version_ == 3) return write_text(dir + "/" + kV3File, group_json_v3(attributes));
  write_text(dir + "/" + kGroupFile, kGroupMetadata);
}

std::shared_ptr<OpenArray> ZarrStore::open_array(const std::string& dir) const {
  if (version_ == 3) {
    const std::string file = dir + "/" + kV3File;
    ArrayMeta meta = parse_array_v3(read_v3_document(dir), file);
    resolve_codecs(host(), meta, file);
    auto a = std::make_shared<OpenArray>(host(), dir, std::move(meta));
    a->v3 = std::make_shared<V3State>(host(), *a->meta.v3, file);
    return a;
  }
  const std::string file = dir + "/" + kArrayFile;
  std::optional<std::string> text = read_metadata(file);
  if (!text) fail(STOWAGE_NOT_FOUND, file + ": no such file");
  ArrayMeta meta = parse_array(*text, metadata_name(file));
  resolve_codecs(host(), meta, metadata_name(file));
  return std::make_shared<OpenArray>(host(), dir, std::move(meta));
}

// ---- the tree ------------------------------------------------------------------

std::vector<std::string> ZarrStore::list(std::string_view node) {
  std::vector<std::string> parts = sdk::split_node_path(node);
  if (require_node(parts, node) == Kind::array) return {};
  const std::string dir = node_dir(parts);
  if (consolidated_) return consolidated_->children(relative(dir));
  std::vector<std::string> names;
  for (std::string& name : sdk::list_node_directory(storage_, dir, "Zarr")) {
    // Nodes are directories with metadata; a node stowage::copy is still
    // writing (or a killed copy left) joins the store when moved into place.
    if (name.empty() || name.back() != '/' || name.rfind(sdk::kStagingPrefix, 0) == 0) continue;
    name.pop_back();
    if (kind_of(dir + "/" + name) != Kind::none) names.push_back(std::move(name));
  }
  return names;
}

std::string ZarrStore::describe(std::string_view node) {
  std::vector<std::string> parts = sdk::split_node_path(node);
  const Kind kind = require_node(parts, node);
  const std::string dir = node_dir(parts);
  json attributes = read_attributes(dir);
  std::shared_ptr<OpenArray> a = kind == Kind::array ? open_array(dir) : nullptr;
  json d = kind == Kind::group ? json{{"kind", "group"}, {"attributes", attributes}}
           : a->meta.strings   ? describe_strings(*a, attributes)  // strings_io.cpp
           : version_ == 3     ? json::parse(describe_array_v3(*a, attributes))
                               : array_description(a->meta, attributes);
  if (parts.empty()) d["store"] = store_facts();
  return d.dump();
}

// What this store writes (plugin.h, "store"): v2 has no shards; its groups
// hold OME-NGFF 0.4 multiscales, v3's 0.5 (under "ome").
json ZarrStore::store_facts() const {
  const json shards =
      version_ == 3
          ? json(true)
          : json("Zarr v2 has no shards (sharding_indexed is v3's; open with zarr_version=3)");
  return {
      {"shards", shards},
      {"multiscales", {{"convention", "ome-ngff"}, {"version", version_ == 3 ? "0.5" : "0.4"}}}};
}

void ZarrStore::create(std::string_view node, std::string_view text) {
  require_writable("create");
  metadata_changing();
  const json d = sdk::parse_json_object(text, "zarr: a node description");
  std::vector<std::string> parts = sdk::split_node_path(node);
  const std::string dir = node_dir(parts);
  require_outside_arrays(parts);
  const Kind existing = kind_of(dir);
  if (existing == Kind::array)
    invalid(dir + ": array '" + std::string(node) + "' already exists; remove it first");
  json attributes = d.value("attributes", json::object());
  if (!attributes.is_object()) invalid("zarr create: \"attributes\" must be an object");
  const std::string kind = d.value("kind", "group");
  if (kind != "group" && kind != "array" && kind != "strings")
    unsupported("zarr create: cannot create a node of kind \"" + kind +
                "\" (Zarr holds groups, arrays and string arrays)");
  if (kind == "array" || kind == "strings")
    check_array_description(dir, d);  // before any byte: no group left of a refused array

  // Every ancestor is a group, as zarr-python makes them.
  std::string ancestor = root_;
  for (size_t i = 0; i + 1 <= parts.size(); ++i) {
    if (kind_of(ancestor) == Kind::none) write_group(ancestor, json::object());
    ancestor += "/" + parts[i];
  }
  if (kind == "group") {
    storage_.make_directory(dir);
    json merged = existing == Kind::none ? json::object() : read_attributes(dir);
    for (auto it = attributes.begin(); it != attributes.end(); ++it) merged[it.key()] = it.value();
    if (version_ == 3) return write_group(dir, merged);
    if (existing == Kind::none) write_group(dir, json::object());
    if (!merged.empty()) write_text(dir + "/" + kAttributesFile, merged);
    return;
  }
  if (existing == Kind::group) {  // an empty group becomes the array
    if (!list(node).empty())
      invalid(dir + ": group '" + std::string(node) + "' has nodes; it cannot become an array");
    storage_.remove_if_exists(dir + "/" + kGroupFile, 0);
    storage_.remove_if_exists(dir + "/" + kAttributesFile, 0);
  }
  if (kind == "strings") return create_strings(dir, d, std::move(attributes));  // strings_io.cpp
  if (version_ == 3) return create_array_v3(dir, d, std::move(attributes));
  create_array(dir, d, std::move(attributes));
}

// What v2 and v3 read alike from a create() description: dtype and byte
// order, shape, chunks (at most 2 GiB each), C or F order, fill value.
ArrayMeta description_meta(const json& d, int version) {
  ArrayMeta a;
  if (!d.contains("dtype") || !d["dtype"].is_string())
    invalid("zarr create: an array needs a string \"dtype\"");
  const std::string byte_order = d.value("byte_order", "little");
  if (byte_order != "little" && byte_order != "big")
    invalid("zarr create: \"byte_order\" must be \"little\" or \"big\", got \"" + byte_order +
            "\"");
  std::optional<DataType> type = data_type_for(d["dtype"].get<std::string>(), byte_order == "big");
  if (!type)
    unsupported("zarr create: no Zarr data type for \"" + d["dtype"].get<std::string>() +
                "\" (bool, int8..int64, uint8..uint64, float16..float64, complex64, complex128)");
  a.type = *type;
  if (version == 3) a.type.typestr = a.type.name;  // v3's data_type ("uint16"), also in errors
  a.shape = description_extents(d, "shape", 0);
  a.chunks = d.contains("chunks") ? description_extents(d, "chunks", 1)
                                  : sdk::c_order_chunks(a.shape, a.type.size, uint64_t(4) << 20);
  if (a.chunks.size() != a.shape.size())
    invalid("zarr create: \"shape\" and \"chunks\" differ in rank");
  uint64_t bytes = a.type.size;
  for (uint64_t c : a.chunks)
    if (c > kMaxChunkBytes || (bytes *= c) > kMaxChunkBytes)
      invalid("zarr create: chunks " + json(a.chunks).dump() + " of " + a.type.name +
              " are over 2 GiB");
  // what parse_array and the host's open refuse (a chunk grid over 2^64)
  if (const std::string why = sdk::array_size_problem(a.shape, a.chunks, a.type.size, a.type.name);
      !why.empty())
    invalid("zarr create: " + why);
  const std::string order = d.value("order", "C");
  if (order != "C" && order != "F")
    invalid("zarr create: \"order\" must be \"C\" or \"F\", got \"" + order + "\"");
  a.fortran = order == "F";
  a.fill = parse_fill_value(d.value("fill_value", json(0)), a.type, "zarr create");
  return a;
}

// Refuses, naming the array, a description create_array(_v3) would refuse
// after the ancestor groups are written.
void ZarrStore::check_array_description(const std::string& dir, const json& d) const {
  try {
    if (d.value("kind", "") == "strings")
      return static_cast<void>(strings_description_meta(d, version_));  // strings.cpp
    const ArrayMeta a = description_meta(d, version_);
    if (version_ == 3) {
      V3Layout layout;
      apply_shards(layout, d, a);
    }
  } catch (const sdk::Error& e) {
    fail(e.code(), dir + ": " + e.what());
  }
}

// The codec plugin's canonical config of a create() description's "codec"
// ({"type": ...} or the type alone; defaults filled in), as v2 and v3 both
// write it; null stays null. Errors name the array `dir`.
json ZarrStore::canonical_codec(json codec, const std::string& dir) const {
  if (codec.is_null()) return nullptr;
  if (codec.is_string()) codec = json{{"type", codec}};
  if (!codec.is_object() || !codec.contains("type") || !codec["type"].is_string())
    invalid("zarr create: \"codec\" must be null or an object with a string \"type\", got " +
            codec.dump());
  if (codec["type"] == "raw") return nullptr;
  try {
    return json::parse(sdk::HostCodec(host(), codec.dump()).canonical_config());
  } catch (const sdk::Error& e) {
    fail(e.code(), dir + ": codec " + codec.dump() + ": " + e.what());
  }
}

// The array of a create() description: stowage's dtype and byte order, the
// shape and chunks, C or F order, the fill value, the codec (translated to
// numcodecs) and, in "storage", the dimension separator.
void ZarrStore::create_array(const std::string& dir, const json& d, json attributes) {
  ArrayMeta a = description_meta(d, 2);

  if (d.contains("shards") && !d["shards"].is_null())
    invalid(
        dir +
        ": \"shards\" needs a Zarr v3 store; this one is v2 (open a new store with {\"zarr_version\": 3})");
  const json storage = d.value("storage", json::object());
  const json separator = storage.value("dimension_separator", json("."));
  if (separator != "." && separator != "/")
    invalid("zarr create: \"dimension_separator\" must be \".\" or \"/\", got " + separator.dump());
  a.separator = separator.get<std::string>()[0];
  // numcodecs' filters, as in a .zarray (filter_chain.hpp): written on request.
  a.filters = filters_as(host(), storage.value("filters", json()), "numcodecs", a.type.size, dir);
  std::string missing;
  if (!make_filters(host(), "numcodecs", a.filters, a.type, a.chunks, dir, missing, true, nullptr))
    a.filters = nullptr;
  if (!missing.empty()) sdk::fail(STOWAGE_NOT_FOUND, missing);

  // The codec as numcodecs names it (codec_names.hpp).
  a.codec = canonical_codec(d.value("codec", json()), dir);
  a.compressor = export_codec(host(), a.codec, "numcodecs", a.type.size, dir);

  if (json dims = d.value("dims", json());
      dims.is_array() && dims.size() == a.ndim() && !attributes.contains("_ARRAY_DIMENSIONS")) {
    json names = json::array();
    for (const json& dim : dims)
      if (dim.is_object() && dim.contains("name") && dim["name"].is_string() && dim["name"] != "")
        names.push_back(dim["name"]);
    if (names.size() == a.ndim() && a.ndim() > 0) attributes["_ARRAY_DIMENSIONS"] = names;
  }
  storage_.make_directory(dir);
  if (!attributes.empty()) write_text(dir + "/" + kAttributesFile, attributes);
  write_text(dir + "/" + kArrayFile, array_json(a));  // last: the array exists once it is complete
}

void ZarrStore::set_attributes(std::string_view node, std::string_view text) {
  require_writable("set_attributes");
  metadata_changing();
  const json attributes = sdk::parse_json_object(text, "zarr: attributes");
  std::vector<std::string> parts = sdk::split_node_path(node);
  require_node(parts, node);
  if (version_ == 3) return set_attributes_v3(node_dir(parts), attributes);
  write_text(node_dir(parts) + "/" + kAttributesFile, attributes);
}

void ZarrStore::remove(std::string_view node) {
  require_writable("remove");
  metadata_changing();
  std::vector<std::string> parts = sdk::split_node_path(node);
  if (parts.empty())
    invalid(root_ + ": cannot remove the root; open with mode \"w\" to replace it");
  require_node(parts, node);
  storage_.remove(node_dir(parts), STOWAGE_REMOVE_RECURSIVE);
}

// A node is a directory, so one rename publishes it whole (see N5's
// move_node: the same scheme).
void ZarrStore::move_node(std::string_view from, std::string_view to, bool replace) {
  require_writable("move");
  metadata_changing();
  std::vector<std::string> from_parts = sdk::split_node_path(from),
                           to_parts = sdk::split_node_path(to);
  if (from_parts.empty() || to_parts.empty()) invalid(root_ + ": cannot move the root");
  require_node(from_parts, from);
  require_outside_arrays(to_parts);
  std::vector<std::string> to_parent(to_parts.begin(), to_parts.end() - 1);
  require_node(to_parent, sdk::join_node_path(to_parent, to_parent.size()));
  storage_.move(node_dir(from_parts), node_dir(to_parts), replace ? STOWAGE_PUBLISH_REPLACE : 0);
}

}  // namespace zarr
