// Format plugin "npy": a NumPy .npy file holds one dense array, exposed as
// the root node "". Reads are one pread per slab-shaped chunk (see
// npy_slabs.hpp); writes go to a temporary file beside the destination,
// sized up front so that the host's threads pwrite distinct slabs at once,
// and renamed into place by close().
#include "npy_header.hpp"
#include "npy_slabs.hpp"

#include <stowage/codec_config.hpp>
#include <stowage/plugin_util.hpp>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>

namespace {

using namespace stowage;
using nlohmann::json;

constexpr uint64_t kDefaultChunkBytes = 4 << 20;

// Writes all of buf at offset, retrying short writes.
void pwrite_all(const sdk::File& f, const void* buf, size_t n, uint64_t offset) {
  auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    ssize_t w = ::pwrite(f.fd(), p, n, static_cast<off_t>(offset));
    if (w < 0) {
      if (errno == EINTR) continue;
      sdk::io_fail(f.path(), "write failed", errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += static_cast<uint64_t>(w);
  }
}

// Copies the first `size` bytes of `from` into `to` (in the kernel where it can).
void copy_file(const sdk::File& from, const sdk::File& to, uint64_t size) {
  loff_t in = 0, out = 0;
  while (static_cast<uint64_t>(in) < size) {
    ssize_t n = ::copy_file_range(from.fd(), &in, to.fd(), &out, size - static_cast<uint64_t>(in), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {  // not supported here (or EOF): fall back to pread/pwrite
      std::vector<char> buf(std::min<uint64_t>(size - static_cast<uint64_t>(in), 1 << 20));
      while (static_cast<uint64_t>(in) < size) {
        size_t len = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - static_cast<uint64_t>(in)));
        from.read_at(buf.data(), len, static_cast<uint64_t>(in));
        pwrite_all(to, buf.data(), len, static_cast<uint64_t>(in));
        in += static_cast<loff_t>(len);
      }
      return;
    }
  }
}

class NpyStore final : public sdk::Store {
 public:
  NpyStore(std::string path, uint32_t mode, uint64_t chunk_bytes)
      : path_(std::move(path)), mode_(mode), chunk_bytes_(chunk_bytes) {
    const bool exists = sdk::path_exists(path_);
    if (mode_ == STOWAGE_MODE_READ || mode_ == STOWAGE_MODE_UPDATE) {
      if (!exists) sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no such file");
      load();
    } else if (mode_ == STOWAGE_MODE_CREATE && exists) {
      load();
    } else if (mode_ > STOWAGE_MODE_TRUNCATE) {
      sdk::invalid(path_ + ": unknown open mode " + std::to_string(mode_));
    }
  }

  ~NpyStore() override { discard_temp(); }

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
    discard_temp();
    open_temp();
    std::string header = npy::format_header(h.dtype, h.shape, path_);
    h.data_offset = header.size();
    pwrite_all(*temp_, header.data(), header.size(), 0);
    if (::ftruncate(temp_->fd(), static_cast<off_t>(h.data_offset + h.data_size)) != 0)
      sdk::io_fail(temp_->path(), "cannot size the file", errno);
    set_array(std::move(h));
    writing_.store(true);
  }

  void set_attributes(std::string_view node, std::string_view attributes) override {
    check_node(node);
    json a = json::parse(attributes.begin(), attributes.end(), nullptr, false);
    if (a.is_discarded() || !a.is_object()) sdk::invalid(path_ + ": attributes must be a JSON object");
    if (!a.empty()) refuse_attributes(a);
  }

  // The one array, at the root (NpyArray below).
  std::unique_ptr<sdk::Node> open_node(std::string_view node) override;
  void check_slab(const uint64_t* index) const { layout_.slab(index, path_); }

  bool read_chunk(std::string_view node, const uint64_t* index, void* out, size_t capacity,
                  uint64_t* chunk_shape) {
    check_node(node);
    npy::SlabLayout::Slab s = layout_.slab(index, path_);
    if (s.size > capacity)
      sdk::invalid(path_ + ": chunk of " + std::to_string(s.size) + " bytes does not fit a buffer of " +
                   std::to_string(capacity));
    const sdk::File& f = writing_.load() ? *temp_ : *file_;
    f.read_at(out, static_cast<size_t>(s.size), header_.data_offset + s.offset);
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
                     std::to_string(chunk_shape[d]) + ", the slab has " + std::to_string(s.shape[d]));
    if (size != s.size)
      sdk::invalid(path_ + ": chunk of " + std::to_string(size) + " bytes, the slab has " +
                   std::to_string(s.size));
    start_rewriting_existing();
    pwrite_all(*temp_, in, size, header_.data_offset + s.offset);
  }

  void close() override {
    if (!writing_.load()) {
      if (mode_ == STOWAGE_MODE_TRUNCATE && !has_array_)
        log(STOWAGE_LOG_WARNING, path_ + ": closed without an array; no .npy file written");
      return;
    }
    temp_->close();
    if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
      int e = errno;
      discard_temp();
      sdk::io_fail(path_, "cannot rename the temporary file into place", e);
    }
    temp_path_.clear();
    writing_.store(false);
  }

 private:
  // Reads and checks the header of the existing file.
  void load() {
    file_ = std::make_unique<sdk::File>(path_, O_RDONLY);
    const uint64_t file_size = file_->size();
    char prefix[npy::kPreambleSize];
    size_t got = static_cast<size_t>(std::min<uint64_t>(file_size, sizeof prefix));
    file_->read_at(prefix, got, 0);
    uint64_t header_size = npy::parse_preamble(std::string_view(prefix, got), path_);
    if (header_size > file_size)
      sdk::corrupt(path_ + ": file is truncated: the .npy header declares " + std::to_string(header_size) +
                   " bytes, the file has " + std::to_string(file_size));
    if (header_size > npy::kMaxHeaderSize)
      sdk::unsupported(path_ + ": .npy header of " + std::to_string(header_size) + " bytes (limit " +
                       std::to_string(npy::kMaxHeaderSize) + ")");
    std::string bytes(static_cast<size_t>(header_size), '\0');
    file_->read_at(bytes.data(), bytes.size(), 0);
    npy::Header h = npy::parse_header(bytes, path_);
    if (h.data_size > file_size - h.data_offset)
      sdk::corrupt(path_ + ": file is truncated: the .npy header declares " + std::to_string(h.data_size) +
                   " bytes of data after byte " + std::to_string(h.data_offset) + ", the file has " +
                   std::to_string(file_size - h.data_offset));
    set_array(std::move(h));
  }

  void set_array(npy::Header h) {
    header_ = std::move(h);
    layout_ = npy::SlabLayout(header_.shape, header_.element_size, header_.fortran_order, chunk_bytes_);
    has_array_ = true;
  }

  // Names the keys only: their values (a label list) can be megabytes.
  [[noreturn]] void refuse_attributes(const json& attributes) const {
    std::string keys;
    if (attributes.is_object())
      for (auto& [key, value] : attributes.items()) keys += (keys.empty() ? "'" : ", '") + key + "'";
    sdk::unsupported(path_ + ": .npy files hold no attributes (given " + (keys.empty() ? attributes.dump() : keys) + ")");
  }

  npy::Header header_from_description(std::string_view description) const {
    json d = json::parse(description.begin(), description.end(), nullptr, false);
    if (d.is_discarded() || !d.is_object()) sdk::invalid(path_ + ": the description is not a JSON object");
    std::string kind = d.value("kind", "");
    if (kind != "array")
      sdk::unsupported(path_ + ": .npy holds a dense array, not a '" + kind + "' node");
    if (!d.contains("dtype") || !d["dtype"].is_string()) sdk::invalid(path_ + ": the description lacks a dtype");
    if (!d.contains("shape") || !d["shape"].is_array()) sdk::invalid(path_ + ": the description lacks a shape");
    if (d.contains("attributes") && !d["attributes"].is_null() && !d["attributes"].empty())
      refuse_attributes(d["attributes"]);
    npy::Header h;
    h.dtype = d["dtype"].get<std::string>();
    npy::descr_for(h.dtype, path_);  // refuses dtypes .npy cannot hold
    static const std::pair<const char*, size_t> kSizes[] = {
        {"bool", 1}, {"int8", 1}, {"uint8", 1}, {"int16", 2}, {"uint16", 2}, {"int32", 4},
        {"uint32", 4}, {"float32", 4}, {"int64", 8}, {"uint64", 8}, {"float64", 8}};
    for (const auto& [name, size] : kSizes)
      if (h.dtype == name) h.element_size = size;
    if (d["shape"].size() > npy::kMaxDims)
      sdk::unsupported(path_ + ": .npy holds at most " + std::to_string(npy::kMaxDims) + " dimensions");
    uint64_t bytes = h.element_size;
    for (const json& e : d["shape"]) {
      if (!e.is_number_unsigned()) sdk::invalid(path_ + ": shape entries must be non-negative integers");
      uint64_t extent = e.get<uint64_t>();
      if (extent != 0 && bytes > (uint64_t{1} << 62) / extent)
        sdk::invalid(path_ + ": array of shape " + d["shape"].dump() + " is too large");
      bytes *= extent;
      h.shape.push_back(extent);
    }
    h.data_size = bytes;
    return h;
  }

  void check_node(std::string_view node) const {
    if (!node.empty()) sdk::fail(STOWAGE_NOT_FOUND, path_ + ": an .npy file has only the root node \"\", not '" +
                                                        std::string(node) + "'");
    if (!has_array_) sdk::fail(STOWAGE_NOT_FOUND, path_ + ": no array has been created yet");
  }

  void require_writable() const {
    if (mode_ == STOWAGE_MODE_READ) sdk::invalid(path_ + ": opened read-only");
  }

  void open_temp() {
    temp_ = std::make_unique<sdk::File>(sdk::create_temporary_beside(path_, temp_path_, O_RDWR));
  }

  // The first write into an existing file copies it to the temporary file,
  // so the original stays intact until close() renames the copy over it.
  void start_rewriting_existing() {
    if (writing_.load()) return;
    std::lock_guard<std::mutex> lock(copy_mutex_);
    if (writing_.load()) return;
    open_temp();
    copy_file(*file_, *temp_, header_.data_offset + header_.data_size);
    writing_.store(true);
  }

  void discard_temp() noexcept {
    temp_.reset();
    if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
    temp_path_.clear();
    writing_.store(false);
  }

  std::string path_;
  uint32_t mode_;
  uint64_t chunk_bytes_;
  std::unique_ptr<sdk::File> file_;  // the existing file, when there is one
  npy::Header header_;
  npy::SlabLayout layout_;
  bool has_array_ = false;
  std::unique_ptr<sdk::File> temp_;  // the file being written
  std::string temp_path_;
  std::atomic<bool> writing_{false};
  std::mutex copy_mutex_;
};

// The array: every slab of a .npy file is present (the file holds them all).
class NpyArray final : public sdk::ArrayNode {
 public:
  explicit NpyArray(NpyStore& store) : store_(store) {}
  bool read_chunk(const uint64_t* index, void* out, size_t capacity, uint64_t* chunk_shape) override {
    return store_.read_chunk("", index, out, capacity, chunk_shape);
  }
  void write_chunk(const uint64_t* index, const void* in, size_t size, const uint64_t* chunk_shape) override {
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
  static int32_t identify(const sdk::Host&, std::string_view path) {
    std::string p(path);
    if (!sdk::is_regular_file(p)) return 0;
    sdk::File f(p, O_RDONLY);
    if (f.size() < npy::kMagicSize) return 0;
    char magic[npy::kMagicSize];
    f.read_at(magic, sizeof magic, 0);
    return std::memcmp(magic, npy::kMagic, npy::kMagicSize) == 0 ? 100 : 0;
  }

  static std::unique_ptr<sdk::Store> open(const sdk::Host& /*host: kept by the SDK*/, std::string_view path,
                                          uint32_t mode, std::string_view options) {
    if (path.empty()) sdk::invalid("npy: empty path");
    static const sdk::Params params = {sdk::Param::integer("chunk_bytes", kDefaultChunkBytes, 1, 1 << 30)};
    sdk::CodecConfig cfg(options, "npy", params);
    uint64_t chunk_bytes = static_cast<uint64_t>(cfg.integer("chunk_bytes"));
    return std::make_unique<NpyStore>(std::string(path), mode, chunk_bytes);
  }
};

const char* const kExtensions[] = {".npy", nullptr};

}  // namespace

STOWAGE_DEFINE_FORMAT_PLUGIN(NpyFormat, "npy", "1.0.0",
                             "NumPy .npy: one dense numeric array (versions 1.0-3.0, C or Fortran order)",
                             R"({"chunk_bytes": {"type": "integer", "default": 4194304, "min": 1, "max": 1073741824}})",
                             STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_DENSE, kExtensions)
