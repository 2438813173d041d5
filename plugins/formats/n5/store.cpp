#include "store.hpp"

#include <stowage/array_limits.hpp>
#include <stowage/node_listing.hpp>
#include <stowage/plugin_json.hpp>
#include <stowage/plugin_util.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <mutex>

namespace n5 {

namespace sdk = stowage::sdk;
using sdk::corrupt;
using sdk::fail;
using sdk::invalid;
using sdk::unsupported;

namespace {

// attributes.json is metadata: refuse to slurp anything absurdly large.
constexpr uint64_t kMaxAttributesBytes = uint64_t(1) << 28;

// Extents from a create() description: non-empty array of integers in [min, max].
std::vector<uint64_t> description_extents(const json& d, const char* key, uint64_t min,
                                          uint64_t max) {
  if (!d.contains(key) || !d[key].is_array() || d[key].empty())
    invalid(std::string("n5 create: \"") + key + "\" must be a non-empty array of integers");
  std::vector<uint64_t> out;
  for (const json& v : d[key]) {
    bool non_negative = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
    if (!non_negative || v.get<uint64_t>() < min || v.get<uint64_t>() > max)
      invalid(std::string("n5 create: \"") + key + "\" has " + v.dump() +
              "; N5 allows integers in " + std::to_string(min) + ".." + std::to_string(max));
    out.push_back(v.get<uint64_t>());
  }
  return out;
}

// The codec config to store: validated by creating the codec, defaults
// filled in, "type" first as N5 Java writes it.
json canonical_compression(const sdk::Host& host, json codec, size_t element_size) {
  if (codec.is_null()) return json{{"type", "raw"}};
  if (!codec.is_object() || !codec.contains("type") || !codec["type"].is_string())
    invalid("n5 create: \"codec\" must be null or an object with a string \"type\", got " +
            codec.dump());
  // n5-blosc compresses with typesize 1, which makes shuffling a no-op;
  // the element size lets shuffle work, and every blosc decoder reads it
  // from the frame header.
  if (codec["type"] == "blosc" && !codec.contains("typesize")) codec["typesize"] = element_size;
  sdk::HostCodec instance(host, codec.dump());
  json canonical = json::parse(instance.canonical_config(), nullptr, false);
  if (canonical.is_discarded() || !canonical.is_object()) canonical = codec;
  // The canonical type, not the alias given ("zlib" is N5's gzip with useZlib).
  json out = json{{"type", canonical.value("type", codec["type"])}};
  for (auto it = canonical.begin(); it != canonical.end(); ++it)
    if (it.key() != "type") out[it.key()] = it.value();
  return out;
}

// A numeric dataset from a create() description.
Dataset dataset_from_description(const sdk::Host& host, const json& d) {
  Dataset ds;
  if (!d.contains("dtype") || !d["dtype"].is_string())
    invalid("n5 create: an array needs a string \"dtype\"");
  std::string dtype = d["dtype"].get<std::string>();
  std::optional<DataType> type = find_data_type(dtype);
  if (!type || type->kind != ElementKind::numeric)
    unsupported("n5 create: N5 has no numeric dataType \"" + dtype +
                "\" (it has uint8..uint64, int8..int64, float32, float64; its specification "
                "has no float16 or complex types)");
  ds.type = *type;
  ds.shape = description_extents(d, "shape", 0, INT64_MAX);
  ds.chunks = description_extents(d, "chunks", 1, INT32_MAX);
  if (ds.shape.size() != ds.chunks.size() || ds.shape.size() > 0xffff)
    invalid("n5 create: \"shape\" and \"chunks\" must have the same number (1..65535) of entries");
  uint64_t bytes = ds.type.size;
  for (uint64_t c : ds.chunks)
    if ((bytes *= c) > kMaxChunkBytes)
      invalid("n5 create: chunks " + d["chunks"].dump() + " of " + dtype +
              " exceed N5's 2 GiB chunk limit");
  // what the host's open refuses (the block grid too, which block_count counts)
  if (const std::string why = sdk::array_size_problem(ds.shape, ds.chunks, ds.type.size, dtype);
      !why.empty())
    invalid("n5 create: " + why);
  if (d.contains("fill_value") && !d["fill_value"].is_null() &&
      !(d["fill_value"].is_number() && d["fill_value"].get<double>() == 0))
    unsupported("n5 create: N5 has no fill value (missing chunks read as 0), got " +
                d["fill_value"].dump());
  ds.compression = canonical_compression(host, d.value("codec", json()), ds.type.size);
  return ds;
}

// dataset_from_description, its errors naming the dataset.
Dataset described_dataset(const sdk::Host& host, const json& d, const std::string& dir) {
  try {
    return dataset_from_description(host, d);
  } catch (const sdk::Error& e) {
    fail(e.code(), dir + ": " + e.what());
  }
}

// A string or object dataset from a create() description: the "chunks" and
// "codec" given (a copy of an N5 container keeps them), else blocks of up to
// kStringBlock strings or of one record, raw. A string dataset starts empty
// (write_strings sizes it); an object dataset has the "shape" given, else
// "count" records in one dimension.
Dataset variable_dataset(const sdk::Host& host, const json& d, const std::string& kind,
                         const std::string& dir) {
  Dataset ds;
  ds.type = *find_data_type(kind == "strings" ? "string" : "object");
  if (kind == "strings") {
    ds.shape = {0};
    ds.chunks = d.contains("chunks") ? description_extents(d, "chunks", 1, INT32_MAX)
                                     : std::vector<uint64_t>{kStringBlock};
    if (ds.chunks.size() != 1) invalid(dir + ": N5 string datasets here are one-dimensional");
  } else {
    ds.shape = d.contains("shape") ? description_extents(d, "shape", 0, INT64_MAX)
                                   : std::vector<uint64_t>{d.value("count", uint64_t{0})};
    ds.chunks = d.contains("chunks") ? description_extents(d, "chunks", 1, INT32_MAX)
                                     : std::vector<uint64_t>(ds.shape.size(), 1);
    if (ds.chunks.size() != ds.shape.size() || ds.shape.empty())
      invalid(dir + ": an object dataset needs \"shape\" and \"chunks\" of the same rank");
    if (!sdk::countable_grid(ds.shape, ds.chunks))  // its records are counted by block_count
      invalid(dir + ": shape " + sdk::extents_text(ds.shape) + " in chunks " +
              sdk::extents_text(ds.chunks) + " is more than 2^64 blocks");
  }
  ds.compression = canonical_compression(host, d.value("codec", json()), 1);
  return ds;
}

// The root attributes with the "n5" version key first, as N5 Java has it.
json with_version_first(const json& version, const json& attrs) {
  json out = json{{"n5", version}};
  for (auto it = attrs.begin(); it != attrs.end(); ++it) out[it.key()] = it.value();
  return out;
}

json array_description(const Dataset& ds, const json& attributes) {
  json d = json::object();
  d["kind"] = "array";
  d["dtype"] = ds.type.name;
  d["shape"] = ds.shape;
  d["chunks"] = ds.chunks;
  d["byte_order"] = "big";
  d["order"] = "C";
  d["codec"] = ds.compression;
  d["fill_value"] = 0;
  d["attributes"] = attributes;
  return d;
}

}  // namespace

Options parse_options(std::string_view text) {
  Options o;
  if (text.empty()) return o;
  json j = sdk::parse_json_object(text, "n5: the open options");
  auto flag = [&](const char* key, bool& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_boolean())
      invalid(std::string("n5: option \"") + key + "\" must be true or false");
    out = j[key].get<bool>();
  };
  flag("write_empty_chunks", o.write_empty_chunks);
  flag("durable", o.durable);
  return o;
}

// ---- opening -------------------------------------------------------------------

namespace {

// 100 for a container root ("n5" in its attributes), 90 for a dataset, else
// 80 for a directory named *.n5, 0 for any other.
int32_t score_directory(const sdk::Storage& storage, const std::string& path, bool has_attributes) {
  try {
    std::optional<sdk::Bytes> text;
    if (has_attributes) text = storage.read_if_exists(path + kAttributesFile);
    if (text && text->size() <= (1 << 20)) {
      json attrs = parse_attributes(std::string(text->text()), path);
      if (attrs.contains("n5")) return 100;
      if (is_dataset(attrs)) return 90;
    }
  } catch (...) {
  }
  const bool n5_name = path.size() > 3 && path.compare(path.size() - 3, 3, ".n5") == 0;
  return n5_name ? 80 : 0;
}

}  // namespace

int32_t N5Store::identify(const sdk::Probe& probe) {
  if (!probe.is_directory()) return 0;
  const std::string path(probe.path());
  const bool has_attributes = probe.has_file(kAttributesFile + 1);  // no read unless it is there
  return score_directory(sdk::Storage::for_location(probe.host(), path), path, has_attributes);
}

std::unique_ptr<sdk::Store> N5Store::open(const sdk::Host& host, std::string_view path_view,
                                          uint32_t mode, std::string_view options_json) {
  std::string root(path_view);
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) invalid("n5: empty container path");
  Options options = parse_options(options_json);
  sdk::Storage storage = sdk::Storage::for_location(host, root);
  int32_t kind = storage.kind(root);
  // An object store's prefix is no object (its HEAD is 404): its attributes.json says it is there.
  if (kind == STOWAGE_ENTRY_ABSENT && storage.is_file(root + kAttributesFile))
    kind = STOWAGE_ENTRY_DIRECTORY;
  bool exists = kind != STOWAGE_ENTRY_ABSENT;
  bool fresh = mode == STOWAGE_MODE_TRUNCATE || (mode == STOWAGE_MODE_CREATE && !exists);
  if (mode > STOWAGE_MODE_TRUNCATE) invalid("n5: unknown open mode " + std::to_string(mode));
  if (exists && kind != STOWAGE_ENTRY_DIRECTORY)
    invalid(root + ": is a file; an N5 container is a directory");
  if (!exists && !fresh) fail(STOWAGE_NOT_FOUND, root + ": no such N5 container");

  if (fresh) {
    if (exists) {
      if (!storage.list(root).empty() && score_directory(storage, root, true) == 0)
        invalid(root + ": refusing to replace a non-empty directory that is not an N5 container");
      storage.remove(root, STOWAGE_REMOVE_RECURSIVE);
    }
    storage.make_directory(root);
    storage.write(root + kAttributesFile, json{{"n5", kWrittenVersion}}.dump());
  }
  auto store = std::make_unique<N5Store>(storage, root, mode != STOWAGE_MODE_READ, options);
  if (std::optional<json> attrs = store->read_attributes(root); attrs && attrs->contains("n5")) {
    std::optional<long> major = version_major((*attrs)["n5"]);
    if (major && *major > kNewestMajor)
      unsupported(root + kAttributesFile + ": N5 version " + (*attrs)["n5"].dump() +
                  " is newer than this plugin reads (major version up to 4)");
  }
  return store;
}

N5Store::N5Store(sdk::Storage storage, std::string root, bool writable, Options options)
    : storage_(storage), root_(std::move(root)), writable_(writable), options_(options) {}

// ---- paths and attributes ------------------------------------------------------

std::string N5Store::node_dir(const std::vector<std::string>& parts) const {
  std::string dir = root_;
  for (const std::string& p : parts) dir += "/" + p;
  return dir;
}

std::optional<json> N5Store::read_attributes(const std::string& dir) const {
  std::string file = dir + kAttributesFile;
  std::optional<sdk::Bytes> text;
  try {
    // At most one byte more than allowed: an absurd file costs no more than that.
    text = storage_.read(file, 0, kMaxAttributesBytes + 1);
  } catch (const sdk::Error& e) {
    if (e.code() == STOWAGE_NOT_FOUND) return std::nullopt;
    throw;
  }
  if (text->size() > kMaxAttributesBytes)
    corrupt(file + ": too large for attributes (over 256 MiB)");
  return parse_attributes(std::string(text->text()), file);
}

void N5Store::write_attributes(const std::string& dir, const json& attributes) const {
  // Compact, with every non-ASCII character as a \uXXXX escape (surrogate
  // pairs beyond the BMP): zarr-python 2.x decodes attributes.json as ASCII
  // and cannot open raw UTF-8, while N5 Java's Gson reads both.
  std::string text = attributes.dump(-1, ' ', true, json::error_handler_t::strict);
  write_file(dir + kAttributesFile, {{text.data(), text.size()}});
}

void N5Store::require_existing(const std::string& dir, std::string_view node) const {
  // An object store's prefix reads as absent: a node there has its attributes.json.
  if (!storage_.is_directory(dir) && !storage_.is_file(dir + kAttributesFile))
    fail(STOWAGE_NOT_FOUND, dir + ": no group or dataset '" + std::string(node) + "'");
}

// Chunk directories are directories too: a path through a dataset is not a node.
void N5Store::require_outside_datasets(const std::vector<std::string>& parts) const {
  std::string dir = root_;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::optional<json> attrs = read_attributes(dir);
    if (attrs && is_dataset(*attrs))
      fail(STOWAGE_NOT_FOUND, node_dir(parts) + ": is inside dataset '" +
                                  sdk::join_node_path(parts, i) +
                                  "' (its chunk directories are not nodes)");
    dir += "/" + parts[i];
  }
}

void N5Store::require_writable(const char* operation) const {
  if (!writable_) invalid(root_ + ": " + operation + " needs the container opened for writing");
}

// zarr-python and Paintera want the root "n5" key; tensorstore omits it.
void N5Store::ensure_root_version() {
  json attrs = read_attributes(root_).value_or(json::object());
  if (!attrs.contains("n5")) write_attributes(root_, with_version_first(kWrittenVersion, attrs));
}

std::shared_ptr<const OpenDataset> N5Store::open_dataset(std::string_view node) const {
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  std::optional<json> attrs = read_attributes(dir);
  if (!attrs || !is_dataset(*attrs)) return nullptr;
  return std::make_shared<const OpenDataset>(host(), dir,
                                             parse_dataset(*attrs, dir + kAttributesFile));
}

// ---- the tree ------------------------------------------------------------------

std::vector<std::string> N5Store::list(std::string_view node) {
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  std::vector<std::string> names;
  std::optional<json> attrs = read_attributes(dir);
  if (attrs && is_dataset(*attrs)) return names;  // children are chunk directories

  for (std::string& name : sdk::list_node_directory(storage_, dir, "N5")) {
    // Groups and datasets are directories (names ending in '/'). A node
    // stowage::copy is still writing (or a killed copy left) is not part of
    // the container until it is moved into place.
    if (name.empty() || name.back() != '/' || name.rfind(stowage::sdk::kStagingPrefix, 0) == 0)
      continue;
    name.pop_back();
    names.push_back(std::move(name));
  }
  return names;
}

// The root also says what the store writes (plugin.h, "store"): its groups
// hold n5-viewer's multiscale keys (scales, resolution, downsamplingFactors).
std::string N5Store::describe(std::string_view node) {
  if (!sdk::split_node_path(node).empty()) return describe_node(node);
  json d = json::parse(describe_node(node));
  d["store"] = {{"multiscales", {{"convention", "n5-viewer"}}}};
  return d.dump();
}

std::string N5Store::describe_node(std::string_view node) {
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  json attrs = read_attributes(dir).value_or(json::object());
  json user = user_attributes(attrs, parts.empty());
  if (!is_dataset(attrs)) return json{{"kind", "group"}, {"attributes", user}}.dump();

  Dataset ds = parse_dataset(attrs, dir + kAttributesFile);
  switch (ds.type.kind) {
    case ElementKind::numeric:
      return array_description(ds, user).dump();
    case ElementKind::string:
      if (ds.ndim() != 1)
        unsupported(dir + ": string datasets with " + std::to_string(ds.ndim()) +
                    " dimensions are not supported (only 1-D)");
      return json{{"kind", "strings"},
                  {"shape", ds.shape},
                  {"chunks", ds.chunks},
                  {"codec", ds.compression},
                  {"attributes", user}}
          .dump();
    case ElementKind::object:  // one record per block
      return json{{"kind", "records"},   {"count", ds.block_count()}, {"shape", ds.shape},
                  {"chunks", ds.chunks}, {"codec", ds.compression},   {"attributes", user}}
          .dump();
  }
  fail(STOWAGE_INTERNAL, dir + ": unhandled element kind");
}

void N5Store::create(std::string_view node, std::string_view text) {
  require_writable("create");
  json d = sdk::parse_json_object(text, "n5: a node description");
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_outside_datasets(parts);
  std::optional<json> existing = storage_.is_directory(dir) ? read_attributes(dir) : std::nullopt;
  if (existing && is_dataset(*existing))
    invalid(dir + ": dataset '" + std::string(node) + "' already exists; remove it first");
  json user = d.value("attributes", json::object());
  if (!user.is_object()) invalid("n5 create: \"attributes\" must be an object");
  std::string kind = d.value("kind", "group");

  json attrs = existing.value_or(json::object());
  if (kind != "group" && storage_.is_directory(dir)) {
    // A group becomes a dataset only while it has no nodes: its directory
    // would hold the chunks, and the children would be out of reach.
    std::vector<std::string> children = list(node);
    if (!children.empty()) {
      std::string names;
      for (size_t i = 0; i < children.size() && i < 3; ++i)
        names += (i ? ", '" : "'") + children[i] + "'";
      if (children.size() > 3) names += ", ...";
      invalid(dir + ": group '" + std::string(node) + "' has nodes (" + names +
              "); it cannot become a " + kind + ": remove them first");
    }
    // Its attributes stay, under the description's (as a group's do when created again).
    json kept = user_attributes(attrs, parts.empty());
    for (auto it = user.begin(); it != user.end(); ++it) kept[it.key()] = it.value();
    user = std::move(kept);
  }
  if (kind == "group") {
    for (auto it = user.begin(); it != user.end(); ++it) attrs[it.key()] = it.value();
    if (is_dataset(attrs)) invalid(dir + ": group attributes would make it a dataset");
  } else if (kind == "array") {
    json version = attrs.contains("n5") ? attrs["n5"] : json();
    attrs = dataset_attributes(described_dataset(host(), d, dir), user);
    if (!version.is_null()) attrs = with_version_first(version, attrs);
  } else if (kind == "strings" || kind == "records") {
    // An empty string dataset (write_strings fills it) or an object dataset
    // (append_records fills it), with the blocks and codec asked for.
    json version = attrs.contains("n5") ? attrs["n5"] : json();
    attrs = dataset_attributes(variable_dataset(host(), d, kind, dir), user);
    if (!version.is_null()) attrs = with_version_first(version, attrs);
    std::lock_guard<std::mutex> lock(appended_mutex_);
    records_appended_.erase(dir);
  } else {
    unsupported("n5 create: cannot create a node of kind \"" + kind +
                "\" (groups, arrays, strings and records only)");
  }
  if (parts.empty() && !attrs.contains("n5")) attrs = with_version_first(kWrittenVersion, attrs);

  storage_.make_directory(dir);
  // N5 Java writes no attributes.json for a group without attributes.
  if (!(kind == "group" && attrs.empty() && !existing)) write_attributes(dir, attrs);
  if (!parts.empty()) ensure_root_version();
}

void N5Store::set_attributes(std::string_view node, std::string_view text) {
  require_writable("set_attributes");
  json user = sdk::parse_json_object(text, "n5: attributes");
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  json old = read_attributes(dir).value_or(json::object());
  bool dataset = is_dataset(old);
  json attrs = json::object();
  for (auto it = old.begin(); it != old.end(); ++it)
    if ((dataset && is_dataset_key(it.key())) || (parts.empty() && it.key() == "n5"))
      attrs[it.key()] = it.value();
  for (auto it = user.begin(); it != user.end(); ++it) {
    if (dataset && is_dataset_key(it.key()))
      invalid(dir + ": \"" + it.key() + "\" is an N5 dataset key, not a user attribute");
    if (!(parts.empty() && it.key() == "n5")) attrs[it.key()] = it.value();
  }
  if (!dataset && is_dataset(attrs))
    invalid(dir + ": these attributes would make the group a dataset");
  write_attributes(dir, attrs);
}

void N5Store::remove(std::string_view node) {
  require_writable("remove");
  std::vector<std::string> parts = sdk::split_node_path(node);
  if (parts.empty())
    invalid(root_ + ": cannot remove the root; open with mode \"w\" to replace it");
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  storage_.remove(dir, STOWAGE_REMOVE_RECURSIVE);
}

// A node is a directory, so one rename publishes it whole: the staged node
// takes the final name, or (replace) trades places with the old one, which
// is then deleted under the staged name. Two writers replacing one node both
// succeed and the last rename wins, whole.
void N5Store::move_node(std::string_view from, std::string_view to, bool replace) {
  require_writable("move");
  std::vector<std::string> from_parts = sdk::split_node_path(from),
                           to_parts = sdk::split_node_path(to);
  if (from_parts.empty() || to_parts.empty()) invalid(root_ + ": cannot move the root");
  std::string from_dir = node_dir(from_parts), to_dir = node_dir(to_parts);
  require_existing(from_dir, from);
  require_outside_datasets(from_parts);
  require_outside_datasets(to_parts);
  std::vector<std::string> to_parent(to_parts.begin(), to_parts.end() - 1);
  require_existing(node_dir(to_parent), sdk::join_node_path(to_parent, to_parent.size()));
  storage_.move(from_dir, to_dir, replace ? STOWAGE_PUBLISH_REPLACE : 0);
}

}  // namespace n5
