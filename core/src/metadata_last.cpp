// Chunks first, metadata last (metadata_last.hpp): the storage layer that
// holds a new dataset's metadata files until its store closes whole.
#include "metadata_last.hpp"

#include "staging.hpp"  // storage_of, storage_call, trimmed_location

#include <stowage/storage.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

namespace stowage::detail {

namespace {

std::string_view base_name(std::string_view key) {
  const size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

bool inside(std::string_view key, std::string_view directory) {
  return key.size() > directory.size() + 1 && key.compare(0, directory.size(), directory) == 0 &&
         key[directory.size()] == '/';
}

using Held = std::shared_ptr<const std::string>;

// Lends held bytes: the view keeps them alive until released.
stowage_view view_of(const Held& bytes, uint64_t offset, uint64_t length) {
  const uint64_t begin = std::min<uint64_t>(offset, bytes->size());
  const uint64_t n = std::min<uint64_t>(length, bytes->size() - begin);
  auto* owner = new Held(bytes);
  return stowage_view{bytes->data() + begin, n, owner,
                      [](void* o) { delete static_cast<Held*>(o); }};
}

// A file staged through the layer: the backend's staged file and its key,
// which publish() needs to tell metadata from chunks.
class LayerFile final : public sdk::StagedBackendFile {
 public:
  LayerFile(const stowage_storage_write* vt, stowage_staged_handle h, std::string key)
      : vt_(vt), handle_(h), key_(std::move(key)) {}
  ~LayerFile() override {
    if (handle_) vt_->discard(handle_);
  }
  void write_at(uint64_t offset, const void* data, size_t size) override {
    sdk::detail::check_storage(
        [&](stowage_error* e) { return vt_->staged_write(handle_, offset, data, size, e); });
    for (uint64_t end = offset + size, seen = size_.load(); end > seen;)
      if (size_.compare_exchange_weak(seen, end)) break;
  }
  uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) override {
    uint64_t got = 0;
    sdk::detail::check_storage([&](stowage_error* e) {
      return vt_->staged_read(handle_, offset, buf, capacity, &got, e);
    });
    return got;
  }
  void resize(uint64_t size) override {
    sdk::detail::check_storage(
        [&](stowage_error* e) { return vt_->staged_resize(handle_, size, e); });
    size_ = size;
  }
  const std::string& key() const { return key_; }
  // The bytes written, read back whole.
  std::string bytes() {
    std::string all(size_.load(), '\0');
    all.resize(read_at(0, all.data(), all.size()));
    return all;
  }
  stowage_staged_handle release() { return std::exchange(handle_, nullptr); }

 private:
  const stowage_storage_write* vt_;
  stowage_staged_handle handle_;
  std::string key_;
  std::atomic<uint64_t> size_{0};
};

}  // namespace

// The layer: the backend's read and write parts, but for the metadata files,
// held here until take_held().
class HeldMetadata final : public sdk::ReadableStorage, public sdk::WritableStorage {
 public:
  // StorageTrampolines' open() needs it; the host makes its layers itself.
  HeldMetadata(const stowage_host*, std::string_view) {
    sdk::fail(STOWAGE_INTERNAL, "a host layer is not opened by name");
  }
  HeldMetadata(Registry::StorageBackend inner, std::vector<std::string> names)
      : raw_(inner),
        inner_(inner.vtable, inner.handle, inner.capabilities),
        names_(std::move(names)) {}

  sdk::KeyStat stat(std::string_view key) override {
    if (Held h = held(key)) return {STOWAGE_ENTRY_FILE, h->size(), {}};
    const stowage_stat st = inner_.stat(key);
    sdk::KeyStat out{st.kind, st.size,
                     std::string(reinterpret_cast<const char*>(st.version.bytes), st.version.size)};
    if (out.kind == STOWAGE_ENTRY_ABSENT && holds_under(key)) out.kind = STOWAGE_ENTRY_DIRECTORY;
    return out;
  }
  stowage_view read(std::string_view key, uint64_t offset, uint64_t length,
                    uint32_t flags) override {
    if (Held h = held(key)) return view_of(h, offset, length);
    stowage_view out{};
    sdk::detail::check_storage([&](stowage_error* e) {
      return raw_.vtable->read->read(raw_.handle, key.data(), key.size(), offset, length, flags,
                                     &out, e);
    });
    return out;
  }
  uint64_t read_into(std::string_view key, uint64_t offset, void* buf, uint64_t capacity) override {
    stowage_buffer part{buf, capacity};
    return read_parts(key, offset, &part, 1, nullptr);
  }
  uint64_t read_parts(std::string_view key, uint64_t offset, const stowage_buffer* parts,
                      size_t count, uint64_t* file_size) override {
    if (Held h = held(key)) return copy_out(*h, offset, parts, count, file_size);
    uint64_t got = 0;
    sdk::detail::check_storage([&](stowage_error* e) {
      return raw_.vtable->read->read_into(raw_.handle, key.data(), key.size(), offset, parts, count,
                                          &got, file_size, e);
    });
    return got;
  }
  std::vector<std::string> list(std::string_view key) override;
  bool view_size(const stowage_view& view, uint64_t* size) override {
    const auto* r = raw_.vtable->read;
    if (r->struct_size < offsetof(stowage_storage_read, view_size) + sizeof(void*) || !r->view_size)
      return false;
    stowage_error e{};
    return r->view_size(raw_.handle, &view, size, &e) == STOWAGE_OK;
  }

  std::unique_ptr<sdk::StagedBackendFile> stage(std::string_view key) override {
    sdk::Staged inner = inner_.stage(key);
    return std::make_unique<LayerFile>(raw_.vtable->write, inner.release(), std::string(key));
  }
  void publish(std::vector<std::unique_ptr<sdk::StagedBackendFile>> files, uint32_t flags) override;
  void remove(std::string_view key, uint32_t flags) override;
  void make_directory(std::string_view key) override { inner_.make_directory(key); }

  // The held files in the order they are to be put: deepest node first, a
  // node's in the format's order; the layer holds nothing after.
  std::vector<std::pair<std::string, Held>> take_held();

 private:
  bool is_metadata(std::string_view key) const {
    return std::find(names_.begin(), names_.end(), base_name(key)) != names_.end();
  }
  Held held(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = held_.find(std::string(key));
    return it == held_.end() ? nullptr : it->second;
  }
  bool holds_under(std::string_view key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = held_.upper_bound(std::string(key) + "/");
    return it != held_.end() && inside(it->first, key);
  }
  static uint64_t copy_out(const std::string& bytes, uint64_t offset, const stowage_buffer* parts,
                           size_t count, uint64_t* file_size) {
    uint64_t at = std::min<uint64_t>(offset, bytes.size()), got = 0;
    for (size_t i = 0; i < count && at < bytes.size(); ++i) {
      const uint64_t n = std::min<uint64_t>(parts[i].size, bytes.size() - at);
      std::memcpy(parts[i].data, bytes.data() + at, n);
      at += n, got += n;
    }
    if (file_size) *file_size = bytes.size();
    return got;
  }

  Registry::StorageBackend raw_;
  sdk::Storage inner_;
  std::vector<std::string> names_;
  std::mutex mutex_;
  std::map<std::string, Held> held_;
};

std::vector<std::string> HeldMetadata::list(std::string_view key) {
  std::set<std::string> names;
  bool listed = false;
  try {
    for (std::string& n : inner_.list(key)) names.insert(std::move(n));
    listed = true;
  } catch (const sdk::Error& e) {
    if (e.code() != STOWAGE_NOT_FOUND) throw;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [k, bytes] : held_) {
      if (!inside(k, key)) continue;
      const std::string rest = k.substr(key.size() + 1);
      const size_t slash = rest.find('/');
      names.insert(slash == std::string::npos ? rest : rest.substr(0, slash + 1));
      listed = true;
    }
  }
  if (!listed) sdk::fail(STOWAGE_NOT_FOUND, std::string(key) + ": no such directory");
  return {names.begin(), names.end()};
}

void HeldMetadata::publish(std::vector<std::unique_ptr<sdk::StagedBackendFile>> files,
                           uint32_t flags) {
  std::vector<LayerFile*> through, kept;
  for (auto& f : files) {
    auto* file = static_cast<LayerFile*>(f.get());  // this layer staged every one
    (is_metadata(file->key()) ? kept : through).push_back(file);
  }
  if (!(flags & STOWAGE_PUBLISH_REPLACE))
    for (LayerFile* f : kept)
      if (held(f->key()) || inner_.exists(f->key()))
        sdk::fail(STOWAGE_INVALID_ARGUMENT, f->key() + ": exists");
  if (!through.empty()) {
    std::vector<stowage_staged_handle> handles;
    for (LayerFile* f : through) handles.push_back(f->release());
    sdk::detail::check_storage([&](stowage_error* e) {
      return raw_.vtable->write->publish(raw_.handle, handles.size(), handles.data(), flags, e);
    });
  }
  for (LayerFile* f : kept) {
    Held bytes = std::make_shared<const std::string>(f->bytes());
    std::lock_guard<std::mutex> lock(mutex_);
    held_[f->key()] = std::move(bytes);
  }
}

void HeldMetadata::remove(std::string_view key, uint32_t flags) {
  bool dropped = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = held_.begin(); it != held_.end();) {
      const bool gone =
          it->first == key || ((flags & STOWAGE_REMOVE_RECURSIVE) && inside(it->first, key));
      dropped |= gone;
      it = gone ? held_.erase(it) : std::next(it);
    }
  }
  try {
    inner_.remove(key, flags);
  } catch (const sdk::Error& e) {
    if (!(dropped && e.code() == STOWAGE_NOT_FOUND)) throw;
  }
}

std::vector<std::pair<std::string, Held>> HeldMetadata::take_held() {
  std::map<std::string, Held> all;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    all.swap(held_);
  }
  std::vector<std::pair<std::string, Held>> order(all.begin(), all.end());
  auto depth = [](const std::string& k) { return std::count(k.begin(), k.end(), '/'); };
  auto rank = [&](const std::string& k) {
    return std::find(names_.begin(), names_.end(), base_name(k)) - names_.begin();
  };
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (depth(a.first) != depth(b.first)) return depth(a.first) > depth(b.first);
    return rank(a.first) < rank(b.first);
  });
  return order;
}

MetadataLast::MetadataLast(Registry& registry, const std::string& path,
                           std::vector<std::string> names)
    : path_(trimmed_location(path)) {
  using Trampolines = sdk::detail::StorageTrampolines<HeldMetadata>;
  const Registry::StorageBackend inner = registry.storage(path_);
  inner_ = sdk::Storage(inner.vtable, inner.handle, inner.capabilities);
  layer_ = std::make_unique<HeldMetadata>(inner, std::move(names));
  binding_ = registry.bind_storage_layer(
      path_,
      {Trampolines::vtable(), reinterpret_cast<stowage_storage_handle>(layer_.get()),
       Trampolines::part_bits() | (inner.capabilities & ~(STOWAGE_CAP_MOVE | STOWAGE_CAP_LOCK_KEY |
                                                          STOWAGE_CAP_CONDITIONAL))});
}

MetadataLast::~MetadataLast() { binding_.reset(); }

void MetadataLast::publish() {
  put_held();
  binding_.reset();
}

void MetadataLast::put_held() {
  const auto held = layer_->take_held();
  storage_call(path_, [&] {
    for (const auto& [key, bytes] : held) {
      sdk::Staged file = inner_.stage(key);
      file.write_at(0, bytes->data(), bytes->size());
      inner_.publish(file, STOWAGE_PUBLISH_REPLACE);
    }
  });
}

void MetadataLast::discard() noexcept {
  try {
    layer_->take_held();
  } catch (...) {
  }
  binding_.reset();
}

bool publishes_metadata_last(Registry& registry, const std::string& path,
                             const std::string& format) {
  try {
    const sdk::Storage storage = storage_of(registry, path);
    if (!storage.can_write() || storage.can_rename()) return false;
  } catch (const Error&) {
    return false;
  }
  const std::optional<PluginInfo> info = registry.find("format", format);
  return info && !info->metadata_files.empty();
}

}  // namespace stowage::detail
