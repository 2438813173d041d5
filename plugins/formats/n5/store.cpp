#include "store.hpp"

#include "chunk.hpp"

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

constexpr const char* kAttributesFile = "/attributes.json";
// attributes.json is metadata: refuse to slurp anything absurdly large.
constexpr uint64_t kMaxAttributesBytes = uint64_t(1) << 28;

// A descriptor that closes itself; fd < 0 means "no such file".
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

int open_if_exists(const std::string& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno != ENOENT && errno != ENOTDIR) sdk::io_fail(path, "cannot open", errno);
  return fd;
}

uint64_t file_size(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) sdk::io_fail(path, "cannot stat", errno);
  return static_cast<uint64_t>(st.st_size);
}

void read_exact(int fd, void* buf, size_t n, uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      sdk::io_fail(path, "read failed", errno);
    }
    if (r == 0) corrupt(path + ": file shrank while being read");
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
}

// Per-thread byte buffers: the host calls read_chunk/write_chunk from its
// pool, and reusing a buffer per thread avoids an allocation per chunk.
std::vector<uint8_t>& scratch(size_t n) {
  thread_local std::vector<uint8_t> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer;
}

bool all_zero(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    if (w) return false;
  }
  for (; i < n; ++i)
    if (p[i]) return false;
  return true;
}

json parse_json_argument(std::string_view text, const char* what) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    invalid(std::string("n5: ") + what + " must be a JSON object, got: " + std::string(text));
  return j;
}

std::string join_node(const std::vector<std::string>& parts, size_t count) {
  std::string node;
  for (size_t i = 0; i < count; ++i) node += (i ? "/" : "") + parts[i];
  return node;
}

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
json canonical_compression(json codec, size_t element_size) {
  if (codec.is_null()) return json{{"type", "raw"}};
  if (!codec.is_object() || !codec.contains("type") || !codec["type"].is_string())
    invalid("n5 create: \"codec\" must be null or an object with a string \"type\", got " +
            codec.dump());
  // n5-blosc compresses with typesize 1, which makes shuffling a no-op;
  // the element size lets shuffle work, and every blosc decoder reads it
  // from the frame header.
  if (codec["type"] == "blosc" && !codec.contains("typesize")) codec["typesize"] = element_size;
  sdk::HostCodec instance(codec.dump());
  json canonical = json::parse(instance.canonical_config(), nullptr, false);
  if (canonical.is_discarded() || !canonical.is_object()) canonical = codec;
  json out = json{{"type", codec["type"]}};
  for (auto it = canonical.begin(); it != canonical.end(); ++it)
    if (it.key() != "type") out[it.key()] = it.value();
  return out;
}

// A numeric dataset from a create() description.
Dataset dataset_from_description(const json& d) {
  Dataset ds;
  if (!d.contains("dtype") || !d["dtype"].is_string())
    invalid("n5 create: an array needs a string \"dtype\"");
  std::string dtype = d["dtype"].get<std::string>();
  std::optional<DataType> type = find_data_type(dtype);
  if (!type || type->kind != ElementKind::numeric)
    unsupported("n5 create: N5 has no numeric dataType \"" + dtype +
                "\" (it has uint8..uint64, int8..int64, float32, float64)");
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
  if (d.contains("fill_value") && !d["fill_value"].is_null() &&
      !(d["fill_value"].is_number() && d["fill_value"].get<double>() == 0))
    unsupported("n5 create: N5 has no fill value (missing chunks read as 0), got " +
                d["fill_value"].dump());
  ds.compression = canonical_compression(d.value("codec", json()), ds.type.size);
  return ds;
}

// The root attributes with the "n5" version key first, as N5 Java has it.
json with_version_first(const json& version, const json& attrs) {
  json out = json{{"n5", version}};
  for (auto it = attrs.begin(); it != attrs.end(); ++it) out[it.key()] = it.value();
  return out;
}

uint64_t block_count(const Dataset& ds) {
  uint64_t n = 1;
  for (size_t d = 0; d < ds.ndim(); ++d) {
    if (ds.grid(d) != 0 && n > UINT64_MAX / ds.grid(d)) corrupt("n5: too many blocks");
    n *= ds.grid(d);
  }
  return n;
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
  json j = parse_json_argument(text, "the open options");
  auto flag = [&](const char* key, bool& out) {
    if (!j.contains(key)) return;
    if (!j[key].is_boolean()) invalid(std::string("n5: option \"") + key + "\" must be true or false");
    out = j[key].get<bool>();
  };
  flag("write_empty_chunks", o.write_empty_chunks);
  flag("durable", o.durable);
  return o;
}

// ---- opening -------------------------------------------------------------------

int32_t N5Store::identify(std::string_view path_view) {
  std::string path(path_view);
  if (!sdk::is_directory(path)) return 0;
  bool n5_name = path.size() > 3 && path.compare(path.size() - 3, 3, ".n5") == 0;
  try {
    json attrs = parse_attributes(sdk::read_file(path + kAttributesFile, 1 << 20), path);
    if (attrs.contains("n5")) return 100;
    if (is_dataset(attrs)) return 90;
  } catch (...) {
  }
  return n5_name ? 80 : 0;
}

std::unique_ptr<sdk::Store> N5Store::open(std::string_view path_view, uint32_t mode,
                                          std::string_view options_json) {
  std::string root(path_view);
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root.empty()) invalid("n5: empty container path");
  Options options = parse_options(options_json);
  bool exists = sdk::path_exists(root);
  bool fresh = mode == STOWAGE_MODE_TRUNCATE || (mode == STOWAGE_MODE_CREATE && !exists);
  if (mode > STOWAGE_MODE_TRUNCATE) invalid("n5: unknown open mode " + std::to_string(mode));
  if (exists && !sdk::is_directory(root))
    invalid(root + ": is a file; an N5 container is a directory");
  if (!exists && !fresh) fail(STOWAGE_NOT_FOUND, root + ": no such N5 container");

  if (fresh) {
    if (exists) {
      std::error_code ec;
      bool empty = std::filesystem::is_empty(root, ec);
      if (!empty && identify(root) == 0)
        invalid(root + ": refusing to replace a non-empty directory that is not an N5 container");
      std::filesystem::remove_all(root, ec);
      if (ec) sdk::io_fail(root, "cannot remove the old container", ec.value());
    }
    sdk::make_directories(root);
    sdk::write_file_atomic(root + kAttributesFile, json{{"n5", kWrittenVersion}}.dump());
  }
  auto store = std::make_unique<N5Store>(root, mode != STOWAGE_MODE_READ, options);
  if (std::optional<json> attrs = store->read_attributes(root); attrs && attrs->contains("n5")) {
    std::optional<long> major = version_major((*attrs)["n5"]);
    if (major && *major > kNewestMajor)
      unsupported(root + kAttributesFile + ": N5 version " + (*attrs)["n5"].dump() +
                  " is newer than this plugin reads (major version up to 4)");
  }
  return store;
}

N5Store::N5Store(std::string root, bool writable, Options options)
    : root_(std::move(root)), writable_(writable), options_(options) {}

// ---- paths and attributes ------------------------------------------------------

std::string N5Store::node_dir(const std::vector<std::string>& parts) const {
  std::string dir = root_;
  for (const std::string& p : parts) dir += "/" + p;
  return dir;
}

std::optional<json> N5Store::read_attributes(const std::string& dir) const {
  std::string file = dir + kAttributesFile;
  Fd f{open_if_exists(file)};
  if (f.fd < 0) return std::nullopt;
  uint64_t size = file_size(f.fd, file);
  if (size > kMaxAttributesBytes)
    corrupt(file + ": " + std::to_string(size) + " bytes is too large for attributes");
  std::string text(size, '\0');
  read_exact(f.fd, text.data(), size, 0, file);
  return parse_attributes(text, file);
}

void N5Store::write_attributes(const std::string& dir, const json& attributes) const {
  // Raw UTF-8, compact, like N5 Java's Gson with disableHtmlEscaping.
  std::string text = attributes.dump(-1, ' ', false, json::error_handler_t::strict);
  write_file(dir + kAttributesFile, {{text.data(), text.size()}});
}

void N5Store::require_existing(const std::string& dir, std::string_view node) const {
  if (!sdk::is_directory(dir))
    fail(STOWAGE_NOT_FOUND, dir + ": no group or dataset '" + std::string(node) + "'");
}

// Chunk directories are directories too: a path through a dataset is not a node.
void N5Store::require_outside_datasets(const std::vector<std::string>& parts) const {
  std::string dir = root_;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::optional<json> attrs = read_attributes(dir);
    if (attrs && is_dataset(*attrs))
      fail(STOWAGE_NOT_FOUND, node_dir(parts) + ": is inside dataset '" + join_node(parts, i) +
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

std::shared_ptr<N5Store::OpenDataset> N5Store::dataset(std::string_view node) {
  {
    std::shared_lock<std::shared_mutex> lock(cache_mutex_);
    auto it = cache_.find(std::string(node));
    if (it != cache_.end()) return it->second;
  }
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  std::optional<json> attrs = read_attributes(dir);
  if (!attrs || !is_dataset(*attrs)) invalid(dir + ": is a group, not a dataset");
  auto ds = std::make_shared<OpenDataset>(dir, parse_dataset(*attrs, dir + kAttributesFile));
  std::unique_lock<std::shared_mutex> lock(cache_mutex_);
  return cache_.emplace(std::string(node), ds).first->second;
}

void N5Store::forget(std::string_view node) {
  std::unique_lock<std::shared_mutex> lock(cache_mutex_);
  std::string prefix = std::string(node) + "/";
  for (auto it = cache_.begin(); it != cache_.end();) {
    bool below = node.empty() || it->first == node || it->first.compare(0, prefix.size(), prefix) == 0;
    it = below ? cache_.erase(it) : std::next(it);
  }
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

  DIR* d = ::opendir(dir.c_str());
  if (!d) sdk::io_fail(dir, "cannot list", errno);
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN || e->d_type == DT_LNK) is_dir = sdk::is_directory(dir + "/" + name);
    if (is_dir) names.push_back(std::move(name));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::string N5Store::describe(std::string_view node) {
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
      return json{{"kind", "strings"}, {"shape", ds.shape}, {"codec", ds.compression},
                  {"attributes", user}}
          .dump();
    case ElementKind::object:
      break;
  }
  return json{{"kind", "records"}, {"count", block_count(ds)}, {"codec", ds.compression},
              {"attributes", user}}
      .dump();
}

void N5Store::create(std::string_view node, std::string_view text) {
  require_writable("create");
  json d = parse_json_argument(text, "a node description");
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_outside_datasets(parts);
  std::optional<json> existing = sdk::is_directory(dir) ? read_attributes(dir) : std::nullopt;
  if (existing && is_dataset(*existing))
    invalid(dir + ": dataset '" + std::string(node) + "' already exists; remove it first");
  json user = d.value("attributes", json::object());
  if (!user.is_object()) invalid("n5 create: \"attributes\" must be an object");
  std::string kind = d.value("kind", "group");

  json attrs = existing.value_or(json::object());
  if (kind == "group") {
    for (auto it = user.begin(); it != user.end(); ++it) attrs[it.key()] = it.value();
    if (is_dataset(attrs)) invalid(dir + ": group attributes would make it a dataset");
  } else if (kind == "array") {
    json version = attrs.contains("n5") ? attrs["n5"] : json();
    attrs = dataset_attributes(dataset_from_description(d), user);
    if (!version.is_null()) attrs = with_version_first(version, attrs);
  } else {
    unsupported("n5 create: cannot create a node of kind \"" + kind + "\" (groups and arrays only)");
  }
  if (parts.empty() && !attrs.contains("n5")) attrs = with_version_first(kWrittenVersion, attrs);

  sdk::make_directories(dir);
  // N5 Java writes no attributes.json for a group without attributes.
  if (!(kind == "group" && attrs.empty() && !existing)) write_attributes(dir, attrs);
  forget(node);
  if (!parts.empty()) ensure_root_version();
}

void N5Store::set_attributes(std::string_view node, std::string_view text) {
  require_writable("set_attributes");
  json user = parse_json_argument(text, "attributes");
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
  if (!dataset && is_dataset(attrs)) invalid(dir + ": these attributes would make the group a dataset");
  write_attributes(dir, attrs);
  forget(node);
}

void N5Store::remove(std::string_view node) {
  require_writable("remove");
  std::vector<std::string> parts = sdk::split_node_path(node);
  if (parts.empty()) invalid(root_ + ": cannot remove the root; open with mode \"w\" to replace it");
  std::string dir = node_dir(parts);
  require_existing(dir, node);
  require_outside_datasets(parts);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) sdk::io_fail(dir, "cannot remove", ec.value());
  forget(node);
}

// ---- chunks --------------------------------------------------------------------

namespace {

void check_chunk_index(const Dataset& ds, const uint64_t* index, const std::string& dir) {
  for (size_t d = 0; d < ds.ndim(); ++d)
    if (index[d] >= ds.grid(d))
      invalid(dir + ": chunk index " + std::to_string(index[d]) + " along dimension " +
              std::to_string(d) + " is outside the grid of " + std::to_string(ds.grid(d)));
}

}  // namespace

bool N5Store::read_chunk(std::string_view node, const uint64_t* index, void* out,
                         size_t capacity, uint64_t* chunk_shape) {
  std::shared_ptr<OpenDataset> ds = dataset(node);
  if (ds->meta.type.kind != ElementKind::numeric)
    invalid(ds->dir + ": read_chunk on a " + ds->meta.type.name + " dataset");
  check_chunk_index(ds->meta, index, ds->dir);
  return read_numeric(*ds, chunk_path(ds->dir, index, ds->meta.ndim()),
                      static_cast<uint8_t*>(out), capacity, chunk_shape);
}

// Reads one numeric chunk file, decoding straight into `out`. False if missing.
bool N5Store::read_numeric(const OpenDataset& ds, const std::string& path, uint8_t* out,
                           size_t capacity, uint64_t* chunk_shape) {
  Fd f{open_if_exists(path)};
  if (f.fd < 0) return false;
  const size_t ndim = ds.meta.ndim();
  uint64_t size = file_size(f.fd, path);
  if (size > kMaxChunkBytes + max_header_size(ndim))
    corrupt(path + ": chunk file is " + std::to_string(size) + " bytes, over N5's 2 GiB limit");

  // Raw payloads go straight from the file to `out`; others are decoded from scratch.
  size_t head_bytes = ds.raw ? std::min<uint64_t>(size, max_header_size(ndim)) : size;
  std::vector<uint8_t>& buf = scratch(head_bytes);
  read_exact(f.fd, buf.data(), head_bytes, 0, path);
  ChunkHeader h = parse_chunk_header(buf.data(), head_bytes, ndim, ds.meta.chunks.data(),
                                     chunk_shape, path);
  if (h.elements != h.dims_product)
    unsupported(path + ": varlength chunk holds " + std::to_string(h.elements) +
                " elements for a block of " + std::to_string(h.dims_product) +
                "; it cannot be read as a dense array");
  uint64_t bytes = h.elements * ds.meta.type.size;
  if (bytes > capacity)
    invalid(path + ": chunk of " + std::to_string(bytes) + " bytes does not fit the " +
            std::to_string(capacity) + "-byte buffer");
  uint64_t payload = size - h.size;
  if (ds.raw) {
    if (payload < bytes)
      corrupt(path + ": truncated payload: " + std::to_string(payload) +
              " bytes, the header needs " + std::to_string(bytes));
    read_exact(f.fd, out, bytes, h.size, path);
    return true;
  }
  decode(ds, path, buf.data() + h.size, payload, out, bytes);
  return true;
}

void N5Store::decode(const OpenDataset& ds, const std::string& path, const uint8_t* payload,
                     size_t payload_size, uint8_t* out, size_t bytes) {
  size_t written = 0;
  try {
    written = ds.codec.acquire()->decode(payload, payload_size, out, bytes);
  } catch (const sdk::Error& e) {
    fail(e.code(), path + ": " + e.what());
  }
  if (written != bytes)
    corrupt(path + ": payload decodes to " + std::to_string(written) +
            " bytes, the header needs " + std::to_string(bytes));
}

// Reads a string (mode 1) or object (mode 2) chunk: its decoded payload, of
// numElements bytes, and for strings the number of strings in *count.
std::optional<std::string> N5Store::read_variable(const OpenDataset& ds, const std::string& path,
                                                  uint64_t* count) {
  Fd f{open_if_exists(path)};
  if (f.fd < 0) return std::nullopt;
  uint64_t size = file_size(f.fd, path);
  if (size > kMaxChunkBytes + max_header_size(ds.meta.ndim()))
    corrupt(path + ": chunk file is " + std::to_string(size) + " bytes, over N5's 2 GiB limit");
  std::vector<uint8_t>& buf = scratch(size);
  read_exact(f.fd, buf.data(), size, 0, path);
  ChunkHeader h;
  std::vector<uint64_t> dims(ds.meta.ndim());
  if (ds.meta.type.kind == ElementKind::object) {
    h = parse_object_header(buf.data(), size, path);
  } else {
    h = parse_chunk_header(buf.data(), size, ds.meta.ndim(), ds.meta.chunks.data(), dims.data(), path);
    if (h.mode != kModeVarlength)
      corrupt(path + ": a string chunk must be varlength (mode 1), found mode " + std::to_string(h.mode));
    *count = h.dims_product;
  }
  // numElements is the payload's decoded byte length for both types. Unlike
  // a numeric block it is not bounded by blockSize, so bound it by what the
  // stored payload can plausibly expand to before allocating.
  uint64_t stored = size - h.size;
  uint64_t plausible = ds.raw ? stored : std::max<uint64_t>(stored * 65536, 1 << 20);
  if (h.elements > kMaxChunkBytes || h.elements > plausible)
    corrupt(path + ": declares " + std::to_string(h.elements) + " payload bytes for " +
            std::to_string(stored) + " stored bytes");
  std::string out(h.elements, '\0');
  decode(ds, path, buf.data() + h.size, size - h.size, reinterpret_cast<uint8_t*>(out.data()),
         out.size());
  return out;
}

void N5Store::write_chunk(std::string_view node, const uint64_t* index, const void* in,
                          size_t size, const uint64_t* chunk_shape) {
  require_writable("write_chunk");
  std::shared_ptr<OpenDataset> ds = dataset(node);
  const Dataset& meta = ds->meta;
  if (meta.type.kind != ElementKind::numeric)
    invalid(ds->dir + ": write_chunk on a " + meta.type.name + " dataset");
  check_chunk_index(meta, index, ds->dir);
  uint64_t elements = 1;
  for (size_t d = 0; d < meta.ndim(); ++d) {
    if (chunk_shape[d] == 0 || chunk_shape[d] > meta.chunks[d])
      invalid(ds->dir + ": chunk shape " + std::to_string(chunk_shape[d]) + " along dimension " +
              std::to_string(d) + " is not in 1.." + std::to_string(meta.chunks[d]));
    elements *= chunk_shape[d];
  }
  if (size != elements * meta.type.size)
    invalid(ds->dir + ": write_chunk got " + std::to_string(size) + " bytes for " +
            std::to_string(elements) + " elements of " + meta.type.name);

  std::string path = chunk_path(ds->dir, index, meta.ndim());
  if (!options_.write_empty_chunks && all_zero(in, size)) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) sdk::io_fail(path, "cannot delete", errno);
    return;
  }
  size_t header = default_header_size(meta.ndim());
  if (header + size > kMaxChunkBytes && ds->raw)
    invalid(path + ": the chunk is " + std::to_string(header + size) + " bytes, over N5's 2 GiB limit");
  if (ds->raw) {  // the payload is the input: no copy
    std::vector<uint8_t>& head = scratch(header);
    write_default_header(head.data(), chunk_shape, meta.ndim());
    write_file(path, {{head.data(), header}, {in, size}});
    return;
  }
  CodecPool::Lease codec = ds->codec.acquire();
  std::vector<uint8_t>& buf = scratch(header + codec->bound(size));
  write_default_header(buf.data(), chunk_shape, meta.ndim());
  size_t encoded;
  try {
    encoded = codec->encode(in, size, buf.data() + header, buf.size() - header);
  } catch (const sdk::Error& e) {
    fail(e.code(), path + ": " + e.what());
  }
  if (header + encoded > kMaxChunkBytes)
    invalid(path + ": the encoded chunk is " + std::to_string(header + encoded) +
            " bytes, over N5's 2 GiB limit");
  write_file(path, {{buf.data(), header + encoded}});
}

// Temp file + rename, so a reader never sees half a chunk and a killed
// writer leaves the old chunk; parent directories are made on first use.
void N5Store::write_file(const std::string& path, std::initializer_list<Piece> pieces) const {
  for (int attempt = 0;; ++attempt) {
    try {
      sdk::AtomicFile file(path, options_.durable);
      for (const Piece& p : pieces) file.write(p.first, p.second);
      file.commit();
      return;
    } catch (const sdk::Error& e) {
      if (e.code() != STOWAGE_NOT_FOUND || attempt > 0) throw;
    }
    sdk::make_directories(path.substr(0, path.rfind('/')));
  }
}

// ---- string datasets (N5 Java's "string" dataType, 1-D) -------------------------

namespace {
// Strings per block of a string dataset we write.
constexpr uint64_t kStringBlock = 4096;
}  // namespace

// Writes a whole 1-D string dataset the way N5 Java does: varlength (mode 1)
// blocks whose numElements is the payload's byte length, each string
// followed by a NUL. An existing string dataset at `node` is replaced.
void N5Store::write_strings(std::string_view node, const std::vector<std::string_view>& values) {
  require_writable("write_strings");
  std::vector<std::string> parts = sdk::split_node_path(node);
  std::string dir = node_dir(parts);
  require_outside_datasets(parts);
  if (std::optional<json> old = sdk::is_directory(dir) ? read_attributes(dir) : std::nullopt;
      old && is_dataset(*old)) {
    if ((*old)["dataType"] != "string") invalid(dir + ": is a numeric dataset, not a string dataset");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (ec) sdk::io_fail(dir, "cannot replace", ec.value());
  }
  for (std::string_view v : values)
    if (v.find('\0') != std::string_view::npos) invalid(dir + ": N5 strings cannot contain NUL");
  Dataset meta;
  meta.type = *find_data_type("string");
  meta.shape = {values.size()};
  meta.chunks = {std::max<uint64_t>(1, std::min<uint64_t>(values.size(), kStringBlock))};
  meta.compression = json{{"type", "raw"}};
  sdk::make_directories(dir);
  write_attributes(dir, dataset_attributes(meta, json::object()));
  forget(node);
  if (!parts.empty()) ensure_root_version();

  std::string payload;
  for (uint64_t first = 0; first < values.size(); first += meta.chunks[0]) {
    uint64_t count = std::min<uint64_t>(meta.chunks[0], values.size() - first);
    payload.clear();
    for (uint64_t i = first; i < first + count; ++i) (payload += values[i]) += '\0';
    if (payload.size() > kMaxChunkBytes) invalid(dir + ": a block of strings exceeds N5's 2 GiB limit");
    uint8_t header[max_header_size(1)];
    size_t header_size = write_varlength_header(header, &count, 1, static_cast<uint32_t>(payload.size()));
    uint64_t chunk = first / meta.chunks[0];
    write_file(chunk_path(dir, &chunk, 1), {{header, header_size}, {payload.data(), payload.size()}});
  }
}

void N5Store::read_strings(std::string_view node, uint64_t begin, uint64_t end,
                           const sdk::ItemFn& item) {
  std::shared_ptr<OpenDataset> ds = dataset(node);
  const Dataset& meta = ds->meta;
  if (meta.type.kind != ElementKind::string || meta.ndim() != 1)
    invalid(ds->dir + ": read_strings needs a 1-D string dataset");
  end = std::min(end, meta.shape[0]);
  for (uint64_t chunk = begin / meta.chunks[0]; begin < end; ++chunk) {
    uint64_t first = chunk * meta.chunks[0];
    uint64_t count = 0;
    std::vector<std::string_view> values;
    std::string path = chunk_path(ds->dir, &chunk, 1);
    std::optional<std::string> payload = read_variable(*ds, path, &count);
    if (payload) {
      // Each string is followed by a NUL; unlike Java's String.split we keep
      // trailing empty strings, which are part of what was written.
      size_t pos = 0;
      while (pos < payload->size()) {
        size_t nul = payload->find('\0', pos);
        if (nul == std::string::npos) corrupt(path + ": string payload does not end with NUL");
        values.emplace_back(payload->data() + pos, nul - pos);
        pos = nul + 1;
      }
      if (values.size() != count)
        corrupt(path + ": header says " + std::to_string(count) + " strings, payload holds " +
                std::to_string(values.size()));
    }
    for (; begin < end && begin < first + meta.chunks[0]; ++begin) {
      uint64_t k = begin - first;
      std::string_view v = k < values.size() ? values[k] : std::string_view();
      item(v.data(), v.size());
    }
  }
}

}  // namespace n5

namespace n5 {

// ---- object datasets (N5's "object" dataType): one record per block -------------

std::string N5Store::object_path(const OpenDataset& ds, uint64_t index) const {
  std::vector<uint64_t> grid_index(ds.meta.ndim());
  for (size_t d = ds.meta.ndim(); d-- > 0;) {
    grid_index[d] = index % ds.meta.grid(d);
    index /= ds.meta.grid(d);
  }
  return chunk_path(ds.dir, grid_index.data(), grid_index.size());
}

uint64_t N5Store::record_count(std::string_view node) {
  std::shared_ptr<OpenDataset> ds = dataset(node);
  if (ds->meta.type.kind != ElementKind::object)
    invalid(ds->dir + ": records are the blocks of an \"object\" dataset");
  return block_count(ds->meta);
}

void N5Store::read_records(std::string_view node, uint64_t begin, uint64_t end,
                           const sdk::ItemFn& item) {
  std::shared_ptr<OpenDataset> ds = dataset(node);
  end = std::min(end, record_count(node));
  for (uint64_t i = begin; i < end; ++i) {
    std::optional<std::string> bytes = read_variable(*ds, object_path(*ds, i), nullptr);
    item(bytes ? bytes->data() : "", bytes ? bytes->size() : 0);  // a missing block is empty
  }
}

// The key of a record is its block's path inside the dataset ("0/1", N5 order).
std::string N5Store::record_key(std::string_view node, uint64_t index) {
  std::shared_ptr<OpenDataset> ds = dataset(node);
  if (index >= record_count(node)) invalid(ds->dir + ": record " + std::to_string(index) + " is out of range");
  return object_path(*ds, index).substr(ds->dir.size() + 1);
}

}  // namespace n5
