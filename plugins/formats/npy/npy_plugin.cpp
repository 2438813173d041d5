// Format plugin "npy": a NumPy .npy file holds one dense array, exposed as
// the root node "". All I/O goes through the storage layer (a path, mem://,
// http://). Reads are one ranged read per slab-shaped chunk, straight into
// the host's buffer (an open and a preadv for a local file; see
// npy_slabs.hpp); writes
// go to a staged file, sized up front so that the host's threads write
// distinct slabs at once, and published whole by close() (readers see the
// old file or the new, never a mix).
#include "npy_header.hpp"
#include "npy_resize.hpp"
#include "npy_slabs.hpp"

#include <stowage/codec_config.hpp>
#include <stowage/plugin_json.hpp>
#include <stowage/plugin_util.hpp>
#include <stowage/resize.hpp>
#include <stowage/storage.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

namespace {

using namespace stowage;
using nlohmann::json;

constexpr uint64_t kDefaultChunkBytes = 4 << 20;

// Copies the first `size` bytes of `from` into `to`, a few MiB at a time.
void copy_into(const sdk::Storage& storage, const std::string& from, sdk::Staged& to,
               uint64_t size) {
  constexpr uint64_t kPiece = 8 << 20;
  std::vector<uint8_t> buffer(static_cast<size_t>(std::min(size, kPiece)));
  for (uint64_t at = 0; at < size; at += kPiece) {
    const uint64_t n = std::min(kPiece, size - at);
    storage.read_exact(from, at, buffer.data(), n);
    to.write_at(at, buffer.data(), static_cast<size_t>(n));
  }
}

// The path the user named, where the host opened this store in its staging
// directory ("d/.x.npy.stowage-tmp.<pid>.<n>/x.npy" is "d/x.npy"), for a log
// line (the host puts the errors in the user's words itself).
std::string as_named(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return path;
  const std::string name = path.substr(slash + 1);
  const size_t up = path.rfind('/', slash - 1);
  const size_t begin = up == std::string::npos ? 0 : up + 1;
  const std::string staging = path.substr(begin, slash - begin);
  if (staging.rfind("." + name + ".stowage-tmp.", 0) != 0) return path;
  return path.substr(0, begin) + name;
}

class NpyStore final : public sdk::Store {
 public:
  NpyStore(const sdk::Host& host, std::string path, uint32_t mode, uint64_t chunk_bytes)
      : storage_(sdk::Storage::for_location(host, path)),
        path_(std::move(path)),
        mode_(mode),
        chunk_bytes_(chunk_bytes) {
    const bool exists = storage_.exists(path_);
    if (mode_ == STOWAGE_MODE_READ || mode_ == STOWAGE_MODE_UPDATE) {
      if (!exists) sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no such file");
      load();
    } else if (mode_ == STOWAGE_MODE_CREATE && exists) {
      load();
    } else if (mode_ > STOWAGE_MODE_TRUNCATE) {
      sdk::invalid(path_ + ": unknown open mode " + std::to_string(mode_));
    }
  }

  std::vector<std::string> list(std::string_view node) override {
    check_node(node);
    return {};
  }

  std::string describe(std::string_view node) override {
    check_node(node);
    json d = {{"kind", "array"},
              {"attributes", json::object()},
              {"dtype", header_.dtype},
              {"shape", header_.shape},
              {"chunks", layout_.chunks()},
              {"byte_order", header_.big_endian ? "big" : "little"},
              {"order", header_.fortran_order ? "F" : "C"},
              {"codec", nullptr},
              {"fill_value", 0}};
    return d.dump();
  }

  void create(std::string_view node, std::string_view description) override {
    if (!node.empty())
      sdk::unsupported(path_ + ": an .npy file holds one array, at the root node \"\", not '" +
                       std::string(node) + "'");
    require_writable();
    npy::Header h = header_from_description(description);
    writing_.store(false);
    temp_ = storage_.stage(path_);  // drops an earlier one
    std::string header = npy::format_header(h.dtype, h.shape, path_);
    h.data_offset = header.size();
    temp_.write_at(0, header.data(), header.size());
    temp_.resize(h.data_offset + h.data_size);
    set_array(std::move(h));
    writing_.store(true);
  }

  void set_attributes(std::string_view node, std::string_view attributes) override {
    check_node(node);
    json a = sdk::parse_json_object<json>(attributes, path_ + ": attributes");
    if (!a.empty()) refuse_attributes(a);
  }

  // "resize" {"shape": [...]} (resize below); anything else is UNSUPPORTED.
  std::string command(std::string_view node, std::string_view name,
                      std::string_view args_json) override {
    check_node(node);
    sdk::require_resize_command(name, path_, "npy");
    require_writable();
    resize(sdk::resize_shape(args_json, header_.shape.size(), path_));
    return "{}";
  }

  // The one array, at the root (NpyArray below).
  std::unique_ptr<sdk::Node> open_node(std::string_view node) override;
  void check_slab(const uint64_t* index) const { layout_.slab(index, path_); }

  bool read_chunk(std::string_view node, const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) {
    check_node(node);
    npy::SlabLayout::Slab s = layout_.slab(index, path_);
    if (s.size > capacity)
      sdk::invalid(path_ + ": chunk of " + std::to_string(s.size) +
                   " bytes does not fit a buffer of " + std::to_string(capacity));
    const uint64_t offset = header_.data_offset + s.offset;
    if (writing_.load())
      read_back(offset, out, s.size);
    else
      storage_.read_exact(path_, offset, out, s.size);
    std::copy(s.shape.begin(), s.shape.end(), chunk_shape);
    return true;
  }

  void write_chunk(std::string_view node, const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) {
    check_node(node);
    require_writable();
    npy::SlabLayout::Slab s = layout_.slab(index, path_);
    for (size_t d = 0; d < s.shape.size(); ++d)
      if (chunk_shape[d] != s.shape[d])
        sdk::invalid(path_ + ": chunk shape along dimension " + std::to_string(d) + " is " +
                     std::to_string(chunk_shape[d]) + ", the slab has " +
                     std::to_string(s.shape[d]));
    if (size != s.size)
      sdk::invalid(path_ + ": chunk of " + std::to_string(size) + " bytes, the slab has " +
                   std::to_string(s.size));
    start_rewriting_existing();
    temp_.write_at(header_.data_offset + s.offset, in, size);
  }

  void close() override {
    if (!writing_.load()) {
      if (mode_ == STOWAGE_MODE_TRUNCATE && !has_array_)
        log(STOWAGE_LOG_WARNING,
            as_named(path_) + ": closed without an array; no .npy file written");
      return;
    }
    writing_.store(false);
    storage_.publish(temp_);  // consumes it, published or not
  }

 private:
  // Reads and checks the header of the existing file.
  void load() {
    const uint64_t file_size = storage_.size(path_);
    const sdk::Bytes prefix = storage_.read(path_, 0, npy::kPreambleSize);
    uint64_t header_size = npy::parse_preamble(prefix.text(), path_);
    if (header_size > file_size)
      sdk::corrupt(path_ + ": file is truncated: the .npy header declares " +
                   std::to_string(header_size) + " bytes, the file has " +
                   std::to_string(file_size));
    if (header_size > npy::kMaxHeaderSize)
      sdk::unsupported(path_ + ": .npy header of " + std::to_string(header_size) +
                       " bytes (limit " + std::to_string(npy::kMaxHeaderSize) + ")");
    const sdk::Bytes bytes = storage_.read(path_, 0, header_size);
    if (bytes.size() != header_size)
      sdk::corrupt(path_ + ": file shrank while its header was read");
    npy::Header h = npy::parse_header(bytes.text(), path_);
    if (h.data_size > file_size - h.data_offset)
      sdk::corrupt(path_ + ": file is truncated: the .npy header declares " +
                   std::to_string(h.data_size) + " bytes of data after byte " +
                   std::to_string(h.data_offset) + ", the file has " +
                   std::to_string(file_size - h.data_offset));
    set_array(std::move(h));
  }

  void set_array(npy::Header h) {
    header_ = std::move(h);
    layout_ =
        npy::SlabLayout(header_.shape, header_.element_size, header_.fortran_order, chunk_bytes_);
    has_array_ = true;
  }

  // Names the keys only: their values (a label list) can be megabytes.
  [[noreturn]] void refuse_attributes(const json& attributes) const {
    std::string keys;
    if (attributes.is_object())
      for (auto& [key, value] : attributes.items())
        keys += (keys.empty() ? "'" : ", '") + key + "'";
    sdk::unsupported(path_ + ": .npy files hold no attributes (given " +
                     (keys.empty() ? attributes.dump() : keys) + ")");
  }

  npy::Header header_from_description(std::string_view description) const {
    json d = sdk::parse_json_object<json>(description, path_ + ": the description");
    std::string kind = d.value("kind", "");
    if (kind != "array")
      sdk::unsupported(path_ + ": .npy holds a dense array, not a '" + kind + "' node");
    if (!d.contains("dtype") || !d["dtype"].is_string())
      sdk::invalid(path_ + ": the description lacks a dtype");
    if (!d.contains("shape") || !d["shape"].is_array())
      sdk::invalid(path_ + ": the description lacks a shape");
    if (d.contains("attributes") && !d["attributes"].is_null() && !d["attributes"].empty())
      refuse_attributes(d["attributes"]);
    npy::Header h;
    h.dtype = d["dtype"].get<std::string>();
    npy::descr_for(h.dtype, path_);  // refuses dtypes .npy cannot hold
    static const std::pair<const char*, size_t> kSizes[] = {
        {"bool", 1},    {"int8", 1},    {"uint8", 1},     {"int16", 2},      {"uint16", 2},
        {"int32", 4},   {"uint32", 4},  {"float32", 4},   {"int64", 8},      {"uint64", 8},
        {"float64", 8}, {"float16", 2}, {"complex64", 8}, {"complex128", 16}};
    for (const auto& [name, size] : kSizes)
      if (h.dtype == name) h.element_size = size;
    if (d["shape"].size() > npy::kMaxDims)
      sdk::unsupported(path_ + ": .npy holds at most " + std::to_string(npy::kMaxDims) +
                       " dimensions");
    uint64_t bytes = h.element_size;
    bool empty = false;
    for (const json& e : d["shape"]) {
      if (!e.is_number_unsigned())
        sdk::invalid(path_ + ": shape entries must be non-negative integers");
      uint64_t extent = e.get<uint64_t>();
      h.shape.push_back(extent);
      empty = empty || extent == 0;
      if (extent == 0)
        continue;  // the others still multiply (strides): the reader refuses them too
      if (bytes > (uint64_t{1} << 62) / extent)
        sdk::invalid(path_ + ": array of shape " + d["shape"].dump() + " is too large");
      bytes *= extent;
    }
    h.data_size = empty ? 0 : bytes;
    return h;
  }

  void check_node(std::string_view node) const {
    if (!node.empty())
      sdk::fail(STOWAGE_NOT_FOUND, path_ + ": an .npy file has only the root node \"\", not '" +
                                       std::string(node) + "'");
    if (!has_array_) sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no array has been created yet");
  }

  void require_writable() const {
    if (mode_ == STOWAGE_MODE_READ) sdk::invalid(path_ + ": opened read-only");
  }

  // The array with the new shape in a staged file, published by close() like
  // any write: the elements inside both shapes keep their place, the rest is
  // zeros (numpy's and this plugin's fill value). C order only.
  void resize(const std::vector<uint64_t>& shape) {
    if (header_.big_endian || header_.fortran_order)
      sdk::unsupported(path_ + ": resize rewrites little-endian C-order files only (this one is " +
                       (header_.fortran_order ? "Fortran order" : "big-endian") + ")");
    json d = {{"kind", "array"}, {"dtype", header_.dtype}, {"shape", shape}};
    npy::Header h = header_from_description(d.dump());
    const std::string header = npy::format_header(h.dtype, h.shape, path_);
    h.data_offset = header.size();
    const bool rows_only = std::equal(shape.begin() + (shape.empty() ? 0 : 1), shape.end(),
                                      header_.shape.begin() + (shape.empty() ? 0 : 1));
    if (rows_only && h.data_offset == header_.data_offset) return resize_rows(std::move(h), header);
    sdk::Staged next = storage_.stage(path_);
    next.write_at(0, header.data(), header.size());
    next.resize(h.data_offset + h.data_size);
    npy::copy_overlap(header_.shape, h.shape, header_.element_size, [&](const npy::Run& run) {
      std::vector<uint8_t> bytes(static_cast<size_t>(run.size));
      read_current(header_.data_offset + run.from, bytes.data(), run.size);
      next.write_at(h.data_offset + run.to, bytes.data(), bytes.size());
    });
    writing_.store(false);
    temp_ = std::move(next);
    set_array(std::move(h));
    writing_.store(true);
  }

  // Only the first dimension changes and the header keeps its length (numpy
  // leaves room for that): the staged file is the array with rows added or
  // cut at its end, so appends cost their own bytes only, not a copy each.
  void resize_rows(npy::Header h, const std::string& header) {
    start_rewriting_existing();
    temp_.write_at(0, header.data(), header.size());
    temp_.resize(h.data_offset + h.data_size);
    set_array(std::move(h));
  }

  // Bytes of the array as it stands: the staged file once written, else the file.
  void read_current(uint64_t offset, void* out, uint64_t size) const {
    if (writing_.load())
      read_back(offset, out, size);
    else
      storage_.read_exact(path_, offset, out, size);
  }

  // Exactly `size` bytes of the file being written, at offset.
  void read_back(uint64_t offset, void* out, uint64_t size) const {
    if (temp_.read_at(offset, out, size) != size)
      sdk::corrupt(path_ + " (being written): the staged file ends before byte " +
                   std::to_string(offset + size));
  }

  // The first write into an existing file copies it to a staged file, so the
  // original stays intact until close() publishes the copy over it.
  void start_rewriting_existing() {
    if (writing_.load()) return;
    std::lock_guard<std::mutex> lock(copy_mutex_);
    if (writing_.load()) return;
    sdk::Staged copy = storage_.stage(path_);
    copy_into(storage_, path_, copy, header_.data_offset + header_.data_size);
    temp_ = std::move(copy);
    writing_.store(true);
  }

  sdk::Storage storage_;  // the backend of path_
  std::string path_;
  uint32_t mode_;
  uint64_t chunk_bytes_;
  npy::Header header_;
  npy::SlabLayout layout_;
  bool has_array_ = false;
  sdk::Staged temp_;  // the file being written, once writing_
  std::atomic<bool> writing_{false};
  std::mutex copy_mutex_;
};

// The array: every slab of a .npy file is present (the file holds them all).
class NpyArray final : public sdk::ArrayNode {
 public:
  explicit NpyArray(NpyStore& store) : store_(store) {}
  bool read_chunk(const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) override {
    return store_.read_chunk("", index, out, capacity, chunk_shape);
  }
  void write_chunk(const uint64_t* index, const void* in, size_t size,
                   const uint64_t* chunk_shape) override {
    store_.write_chunk("", index, in, size, chunk_shape);
  }
  bool chunk_exists(const uint64_t* index) override {
    store_.check_slab(index);
    return true;
  }

 private:
  NpyStore& store_;
};

std::unique_ptr<sdk::Node> NpyStore::open_node(std::string_view node) {
  describe(node);  // NOT_FOUND but for the root; checks an array exists
  return std::make_unique<NpyArray>(*this);
}

struct NpyFormat {
  static int32_t identify(const sdk::Probe& probe) {
    const std::string_view header = probe.header();
    return probe.is_file() && header.size() >= npy::kMagicSize &&
                   std::memcmp(header.data(), npy::kMagic, npy::kMagicSize) == 0
               ? 100
               : 0;
  }

  static std::unique_ptr<sdk::Store> open(const sdk::Host& host, std::string_view path,
                                          uint32_t mode, std::string_view options) {
    if (path.empty()) sdk::invalid("npy: empty path");
    static const sdk::Params params = {
        sdk::Param::integer("chunk_bytes", kDefaultChunkBytes, 1, 1 << 30)};
    sdk::CodecConfig cfg(options, "npy", params);
    uint64_t chunk_bytes = static_cast<uint64_t>(cfg.integer("chunk_bytes"));
    return std::make_unique<NpyStore>(host, std::string(path), mode, chunk_bytes);
  }
};

const char* const kExtensions[] = {".npy", nullptr};

}  // namespace

STOWAGE_DEFINE_FORMAT_PLUGIN(
    NpyFormat, "npy", "1.0.0",
    "NumPy .npy: one dense numeric array (versions 1.0-3.0, C or Fortran order)",
    R"({"chunk_bytes": {"type": "integer", "default": 4194304, "min": 1, "max": 1073741824}})",
    STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_DENSE, kExtensions)
