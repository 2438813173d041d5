// stowage/storage.hpp -- the C++ face of the storage layer (stowage/storage.h)
// for format plugins and the host: RAII views and staged files, exceptions
// instead of status codes.
//
//     sdk::Storage storage = sdk::Storage::for_location(host, location);  // host: sdk::Host
//     std::optional<sdk::Bytes> meta = storage.read_if_exists(location + "/attributes.json");
//     sdk::Staged out = storage.stage(location + "/0/0");
//     out.append(bytes, n);
//     storage.publish(out);
#ifndef STOWAGE_STORAGE_HPP
#define STOWAGE_STORAGE_HPP

#include <stowage/plugin.hpp>
#include <stowage/plugin_util.hpp>  // redact_userinfo
#include <stowage/storage.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <memory>
#include <optional>
#include <tuple>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stowage::sdk {

// Bytes lent by a backend (a buffer, or a memory map of a local file); given
// back when the object dies.
class Bytes {
 public:
  Bytes() = default;
  explicit Bytes(const stowage_view& v) : view_(v) {}
  Bytes(Bytes&& o) noexcept : view_(std::exchange(o.view_, stowage_view{})) {}
  Bytes& operator=(Bytes&& o) noexcept {
    if (this != &o) {
      reset();
      view_ = std::exchange(o.view_, stowage_view{});
    }
    return *this;
  }
  Bytes(const Bytes&) = delete;
  Bytes& operator=(const Bytes&) = delete;
  ~Bytes() { reset(); }

  const uint8_t* data() const { return static_cast<const uint8_t*>(view_.data); }
  uint64_t size() const { return view_.size; }
  std::string_view text() const {
    return {static_cast<const char*>(view_.data), static_cast<size_t>(view_.size)};
  }
  const stowage_view& view() const { return view_; }

 private:
  void reset() noexcept {
    if (view_.release) view_.release(view_.owner);
    view_ = stowage_view{};
  }
  stowage_view view_{};
};

namespace detail {
// Calls a storage function and turns a failure into sdk::Error.
template <typename F>
void check_storage(F&& call) {
  stowage_error e{};
  int rc = call(&e);
  if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), e.message);
}
inline int append_to_string(void* ctx, const void* data, size_t size) {
  static_cast<std::string*>(ctx)->append(static_cast<const char*>(data), size);
  return 0;
}
inline int append_to_list(void* ctx, const void* data, size_t size) {
  static_cast<std::vector<std::string>*>(ctx)->emplace_back(static_cast<const char*>(data), size);
  return 0;
}
}  // namespace detail

// A file being written; nothing of it is visible until Storage::publish.
// Dropped (and its bytes removed) if it dies unpublished.
class Staged {
 public:
  Staged() = default;
  Staged(const stowage_storage_write* vt, stowage_staged_handle h, std::string key)
      : vt_(vt), handle_(h), key_(std::move(key)) {}
  Staged(Staged&& o) noexcept
      : vt_(o.vt_),
        handle_(std::exchange(o.handle_, nullptr)),
        key_(std::move(o.key_)),
        end_(o.end_) {}
  Staged& operator=(Staged&& o) noexcept {
    if (this != &o) {
      reset();
      vt_ = o.vt_;
      handle_ = std::exchange(o.handle_, nullptr);
      key_ = std::move(o.key_);
      end_ = o.end_;
    }
    return *this;
  }
  Staged(const Staged&) = delete;
  Staged& operator=(const Staged&) = delete;
  ~Staged() { reset(); }

  void write_at(uint64_t offset, const void* data, size_t size) {
    detail::check_storage(
        [&](stowage_error* e) { return vt_->staged_write(handle_, offset, data, size, e); });
    if (offset + size > end_) end_ = offset + size;
  }
  // Writes after the furthest byte written so far.
  void append(const void* data, size_t size) { write_at(end_, data, size); }
  void append(std::string_view s) { append(s.data(), s.size()); }
  void resize(uint64_t size) {
    detail::check_storage([&](stowage_error* e) { return vt_->staged_resize(handle_, size, e); });
    end_ = size;
  }
  // Reads back what was written; returns how many bytes (fewer only at the end).
  uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) const {
    uint64_t got = 0;
    detail::check_storage([&](stowage_error* e) {
      return vt_->staged_read(handle_, offset, buf, capacity, &got, e);
    });
    return got;
  }
  const std::string& key() const { return key_; }
  uint64_t size() const { return end_; }
  // Hands the handle to publish(), which consumes it.
  stowage_staged_handle release() { return std::exchange(handle_, nullptr); }

 private:
  void reset() noexcept {
    if (handle_) vt_->discard(handle_);
    handle_ = nullptr;
  }
  const stowage_storage_write* vt_ = nullptr;
  stowage_staged_handle handle_ = nullptr;
  std::string key_;
  uint64_t end_ = 0;
};

// An exclusive lock held until the object dies (Storage::lock).
class Lock {
 public:
  Lock() = default;
  Lock(const stowage_storage_lock* vt, stowage_lock_handle h, bool held)
      : vt_(vt), handle_(h), held_(held) {}
  Lock(Lock&& o) noexcept
      : vt_(o.vt_), handle_(std::exchange(o.handle_, nullptr)), held_(o.held_) {}
  Lock& operator=(Lock&& o) noexcept {
    if (this != &o) {
      reset();
      vt_ = o.vt_;
      handle_ = std::exchange(o.handle_, nullptr);
      held_ = o.held_;
    }
    return *this;
  }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  ~Lock() { reset(); }
  // False where the backend could not lock (no lock part, or a file system
  // refusing flock).
  bool held() const { return held_; }

 private:
  void reset() noexcept {
    if (handle_) vt_->unlock(handle_);
    handle_ = nullptr;
  }
  const stowage_storage_lock* vt_ = nullptr;
  stowage_lock_handle handle_ = nullptr;
  bool held_ = false;
};

// The version of a key's bytes (stowage_version): compared, never parsed.
struct Version {
  std::string token;
  bool operator==(const Version& o) const { return token == o.token; }
  bool operator!=(const Version& o) const { return token != o.token; }
};

// The capability bits a storage's tables show (see STOWAGE_CAP_CONDITIONAL):
// the parts it has, whatever its descriptor says, plus the promises
// (STOWAGE_CAP_MAP, THREADSAFE, PARTIAL) only the descriptor can make.
inline uint64_t storage_capabilities(const stowage_storage_vtable* vt, uint64_t declared) {
  constexpr uint64_t kParts = STOWAGE_CAP_WRITE | STOWAGE_CAP_LIST | STOWAGE_CAP_MOVE |
                              STOWAGE_CAP_LOCK_KEY | STOWAGE_CAP_CONDITIONAL;
  auto has = [&](size_t offset, const void* table) {
    return vt->struct_size >= offset + sizeof(void*) && table != nullptr;
  };
  uint64_t caps = (declared & ~kParts) | STOWAGE_CAP_READ | STOWAGE_CAP_LIST;
  if (has(offsetof(stowage_storage_vtable, write), vt->write)) caps |= STOWAGE_CAP_WRITE;
  if (has(offsetof(stowage_storage_vtable, rename), vt->rename)) caps |= STOWAGE_CAP_MOVE;
  if (has(offsetof(stowage_storage_vtable, lock), vt->lock) && vt->lock->lock_key)
    caps |= STOWAGE_CAP_LOCK_KEY;
  if (has(offsetof(stowage_storage_vtable, conditional), vt->conditional))
    caps |= STOWAGE_CAP_CONDITIONAL;
  return caps;
}

// Why the host refuses a storage plugin's table ("" when it does not): built
// for another storage ABI, a required function missing, or capability bits
// claiming a part it lacks. The registry asks it when it loads the plugin;
// a backend's own tests may ask it too.
inline std::string storage_table_problem(const stowage_storage_vtable* vt, uint64_t declared) {
  if (vt->abi != STOWAGE_STORAGE_ABI)
    return "storage ABI mismatch: built for storage ABI " +
           std::to_string(vt->abi == 0 ? 1 : vt->abi) + ", this host speaks " +
           std::to_string(STOWAGE_STORAGE_ABI);
  if (!vt->open || !vt->close) return "storage vtable lacks open or close";
  const stowage_storage_read* r = vt->read;
  if (!r || !r->stat || !r->read || !r->read_into || !r->list)
    return "storage vtable has no read part (stat, read, read_into, list)";
  auto part = [&](size_t offset, const void* table) {
    return vt->struct_size >= offset + sizeof(void*) && table != nullptr;
  };
  const bool write = part(offsetof(stowage_storage_vtable, write), vt->write);
  const bool rename = part(offsetof(stowage_storage_vtable, rename), vt->rename);
  const bool lock = part(offsetof(stowage_storage_vtable, lock), vt->lock);
  const bool conditional = part(offsetof(stowage_storage_vtable, conditional), vt->conditional);
  const stowage_storage_write* w = vt->write;
  if (write && (!w->stage || !w->staged_write || !w->staged_read || !w->staged_resize ||
                !w->discard || !w->publish || !w->remove || !w->make_directory))
    return "storage write part lacks a function";
  if (rename && (!vt->rename->move || !vt->rename->stage_directory || !vt->rename->recover))
    return "storage rename part lacks move, stage_directory or recover";
  if (lock && (!vt->lock->lock || !vt->lock->unlock || !vt->lock->lock_key))
    return "storage lock part lacks lock, unlock or lock_key";
  if (conditional && (!vt->conditional->publish_if || !write))
    return "storage conditional part lacks publish_if or a write part";
  if ((rename || lock) && !write) return "storage rename or lock part without a write part";
  const std::pair<uint64_t, std::pair<bool, const char*>> claims[] = {
      {STOWAGE_CAP_WRITE, {write, "STOWAGE_CAP_WRITE but has no write part"}},
      {STOWAGE_CAP_MOVE, {rename, "STOWAGE_CAP_MOVE but has no rename part"}},
      {STOWAGE_CAP_LOCK_KEY, {lock, "STOWAGE_CAP_LOCK_KEY but has no lock part"}},
      {STOWAGE_CAP_CONDITIONAL,
       {conditional, "STOWAGE_CAP_CONDITIONAL but has no conditional part"}}};
  for (const auto& [bit, has] : claims)
    if ((declared & bit) && !has.first) return std::string("declares ") + has.second;
  return "";
}

// The backend serving a location (a path, mem://..., http://...), owned by
// the host: copying a Storage copies two pointers. A part the backend lacks
// is STOWAGE_UNSUPPORTED naming the key ("read only", "cannot rename"); ask
// can() or can_write() / can_rename() / can_lock_keys() / can_put_if() first.
class Storage {
 public:
  Storage() = default;
  Storage(const stowage_storage_vtable* vt, stowage_storage_handle h, uint64_t capabilities)
      : vt_(vt), handle_(h), capabilities_(vt ? storage_capabilities(vt, capabilities) : 0) {}

  // Asks the host for the backend of `location`'s scheme.
  static Storage for_location(const Host& from, std::string_view location) {
    if (!from.offers(offsetof(stowage_host, storage)))
      fail(STOWAGE_INTERNAL, "the host offers no storage layer");
    const stowage_host* host = from.table();
    const stowage_storage_vtable* vt = nullptr;
    stowage_storage_handle h = nullptr;
    uint64_t caps = 0;
    detail::check_storage([&](stowage_error* e) {
      return host->storage(host->ctx, location.data(), location.size(), &vt, &h, &caps, e);
    });
    return Storage(vt, h, caps);
  }

  bool can(uint64_t capability) const { return (capabilities_ & capability) == capability; }
  bool can_write() const { return can(STOWAGE_CAP_WRITE); }
  bool can_rename() const { return can(STOWAGE_CAP_MOVE); }
  bool can_put_if() const { return can(STOWAGE_CAP_CONDITIONAL); }
  // Whether lock_key() is there (the lock part).
  bool can_lock_keys() const { return can(STOWAGE_CAP_LOCK_KEY); }

  // ---- reading ----
  // kind, size and version of a key in one call.
  stowage_stat stat(std::string_view key) const {
    stowage_stat st{};
    detail::check_storage(
        [&](stowage_error* e) { return vt_->read->stat(handle_, key.data(), key.size(), &st, e); });
    return st;
  }
  int32_t kind(std::string_view key, uint64_t* size = nullptr) const {
    stowage_stat st = stat(key);
    if (size) *size = st.size;
    return st.kind;
  }
  bool exists(std::string_view key) const { return kind(key) != STOWAGE_ENTRY_ABSENT; }
  bool is_file(std::string_view key) const { return kind(key) == STOWAGE_ENTRY_FILE; }
  bool is_directory(std::string_view key) const { return kind(key) == STOWAGE_ENTRY_DIRECTORY; }
  uint64_t size(std::string_view key) const {
    uint64_t n = 0;
    if (kind(key, &n) != STOWAGE_ENTRY_FILE)
      fail(STOWAGE_NOT_FOUND, std::string(key) + ": no such file");
    return n;
  }
  // The version of a file's bytes now; nullopt when it is absent or the
  // backend cannot tell (an HTTP server sending no ETag).
  std::optional<Version> version(std::string_view key) const {
    stowage_stat st = stat(key);
    if (st.kind != STOWAGE_ENTRY_FILE || st.version.size == 0) return std::nullopt;
    const uint32_t n = std::min<uint32_t>(st.version.size, STOWAGE_VERSION_CAPACITY);
    return Version{std::string(reinterpret_cast<const char*>(st.version.bytes), n)};
  }

  // Bytes [offset, offset + length) of a file, cut at its end.
  Bytes read(std::string_view key, uint64_t offset = 0, uint64_t length = UINT64_MAX,
             uint32_t flags = 0) const {
    stowage_view v{};
    detail::check_storage([&](stowage_error* e) {
      return vt_->read->read(handle_, key.data(), key.size(), offset, length, flags, &v, e);
    });
    return Bytes(v);
  }
  // A whole file kept and parsed in place (a memory map for a local file).
  Bytes map(std::string_view key) const { return read(key, 0, UINT64_MAX, STOWAGE_READ_KEEP); }
  // map() whose file's size can be asked again cheaply (view_size): for a
  // format that reads in place a file another program may cut short.
  Bytes map_watched(std::string_view key) const {
    return read(key, 0, UINT64_MAX, STOWAGE_READ_KEEP | STOWAGE_READ_WATCH);
  }
  // The size now of the file a map_watched() view maps, where the backend
  // can tell without a path lookup (the file backend: one fstat); else nullopt.
  std::optional<uint64_t> view_size(const Bytes& bytes) const {
    const stowage_storage_read* r = vt_->read;
    if (r->struct_size < offsetof(stowage_storage_read, view_size) + sizeof(void*) || !r->view_size)
      return std::nullopt;
    uint64_t n = 0;
    stowage_error e{};
    int rc = r->view_size(handle_, &bytes.view(), &n, &e);
    if (rc == STOWAGE_UNSUPPORTED) return std::nullopt;
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), e.message);
    return n;
  }
  std::optional<Bytes> read_if_exists(std::string_view key) const {
    stowage_view v{};
    stowage_error e{};
    int rc = vt_->read->read(handle_, key.data(), key.size(), 0, UINT64_MAX, 0, &v, &e);
    if (rc == STOWAGE_NOT_FOUND) return std::nullopt;
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), e.message);
    return Bytes(v);
  }
  // A whole small file (metadata) as text; one larger than max_size is CORRUPT,
  // so a bogus file cannot make us allocate without bound.
  std::string read_text(std::string_view key, uint64_t max_size = UINT64_MAX) const {
    Bytes b = read(key);
    if (b.size() > max_size)
      corrupt(std::string(key) + ": file is " + std::to_string(b.size()) +
              " bytes, more than the " + std::to_string(max_size) + " allowed");
    return std::string(b.text());
  }
  // Copies from offset into buf; false when the file does not exist.
  bool read_into_if_exists(std::string_view key, uint64_t offset, void* buf, uint64_t capacity,
                           uint64_t* got, uint64_t* file_size = nullptr) const {
    stowage_buffer part{buf, capacity};
    return read_parts_if_exists(key, offset, &part, 1, got, file_size);
  }
  // Copies from offset into parts[0], parts[1], ... in one request; false
  // when the file does not exist.
  bool read_parts_if_exists(std::string_view key, uint64_t offset, const stowage_buffer* parts,
                            size_t count, uint64_t* got, uint64_t* file_size = nullptr) const {
    stowage_error e{};
    int rc = vt_->read->read_into(handle_, key.data(), key.size(), offset, parts, count, got,
                                  file_size, &e);
    if (rc == STOWAGE_NOT_FOUND) return false;
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), e.message);
    return true;
  }
  // Exactly `size` bytes at offset; fewer is CORRUPT (truncated).
  void read_exact(std::string_view key, uint64_t offset, void* buf, uint64_t size) const {
    uint64_t got = 0;
    if (!read_into_if_exists(key, offset, buf, size, &got))
      fail(STOWAGE_NOT_FOUND, std::string(key) + ": no such file");
    if (got != size)
      corrupt(std::string(key) + ": file is truncated (wanted " + std::to_string(size) +
              " bytes at offset " + std::to_string(offset) + ", got " + std::to_string(got) + ")");
  }
  // Entries directly under a directory, sorted; directories end in '/'.
  std::vector<std::string> list(std::string_view key) const {
    std::vector<std::string> names;
    stowage_sink sink{&names, detail::append_to_list};
    detail::check_storage([&](stowage_error* e) {
      return vt_->read->list(handle_, key.data(), key.size(), &sink, e);
    });
    return names;
  }

  // ---- writing (the write part) ----
  Staged stage(std::string_view key) const {
    const stowage_storage_write* w = writer(key);
    stowage_staged_handle h = nullptr;
    detail::check_storage(
        [&](stowage_error* e) { return w->stage(handle_, key.data(), key.size(), &h, e); });
    return Staged(w, h, std::string(key));
  }
  void publish(Staged& file, uint32_t flags = STOWAGE_PUBLISH_REPLACE) const {
    const stowage_storage_write* w = writer(file.key());
    stowage_staged_handle h = file.release();
    detail::check_storage([&](stowage_error* e) { return w->publish(handle_, 1, &h, flags, e); });
  }
  // Publishes files as one change (the first names the commit journal).
  void publish(std::vector<Staged>& files, uint32_t flags = STOWAGE_PUBLISH_REPLACE) const {
    if (files.empty()) return;
    const stowage_storage_write* w = writer(files[0].key());
    std::vector<stowage_staged_handle> handles;
    for (Staged& f : files) handles.push_back(f.release());
    detail::check_storage([&](stowage_error* e) {
      return w->publish(handle_, handles.size(), handles.data(), flags, e);
    });
  }
  // Writes a whole file so that readers see the old bytes or the new, never a mix.
  void write(std::string_view key, const void* data, size_t size,
             uint32_t flags = STOWAGE_PUBLISH_REPLACE) const {
    Staged f = stage(key);
    f.append(data, size);
    publish(f, flags);
  }
  void write(std::string_view key, std::string_view text,
             uint32_t flags = STOWAGE_PUBLISH_REPLACE) const {
    write(key, text.data(), text.size(), flags);
  }

  // ---- conditional put (the conditional part) ----
  // Publishes `file` only if its key's version is `expected` now, or, with
  // nullopt, only if the key is absent; false (nothing changed) otherwise.
  // Not while this process holds lock_key() of that key.
  bool put_if(Staged& file, const std::optional<Version>& expected, uint32_t flags = 0) const {
    if (!can_put_if())
      unsupported(redact_userinfo(file.key()) + ": this storage cannot put conditionally");
    stowage_version v{};
    if (expected) {
      if (expected->token.empty() || expected->token.size() > STOWAGE_VERSION_CAPACITY)
        invalid(file.key() + ": a version must be 1 to " +
                std::to_string(STOWAGE_VERSION_CAPACITY) + " bytes");
      v.size = static_cast<uint32_t>(expected->token.size());
      std::copy(expected->token.begin(), expected->token.end(), v.bytes);
    }
    stowage_staged_handle h = file.release();
    int32_t published = 0;
    detail::check_storage([&](stowage_error* e) {
      return vt_->conditional->publish_if(handle_, h, &v, flags, &published, e);
    });
    return published != 0;
  }
  // A whole file put with put_if().
  bool write_if(std::string_view key, std::string_view bytes,
                const std::optional<Version>& expected) const {
    Staged f = stage(key);
    f.append(bytes);
    return put_if(f, expected);
  }

  // ---- writers taking turns (the lock part) ----
  // Waits for, then holds, the exclusive lock named by a directory key; a
  // backend without locks holds nothing (held() is false).
  Lock lock(std::string_view key) const {
    if (!has(offsetof(stowage_storage_vtable, lock), vt_->lock)) return Lock();
    stowage_lock_handle h = nullptr;
    int32_t held = 0;
    detail::check_storage([&](stowage_error* e) {
      return vt_->lock->lock(handle_, key.data(), key.size(), &h, &held, e);
    });
    return Lock(vt_->lock, h, held != 0);
  }
  // Holds one key against every other writer (see stowage_storage_lock.lock_key);
  // with `try_only`, a lock that another holds comes back not held().
  Lock lock_key(std::string_view key, bool try_only = false) const {
    if (!can_lock_keys())
      unsupported(redact_userinfo(std::string(key)) + ": this storage cannot lock a key");
    stowage_lock_handle h = nullptr;
    int32_t held = 0;
    const uint32_t flags = try_only ? STOWAGE_LOCK_TRY : 0;
    detail::check_storage([&](stowage_error* e) {
      return vt_->lock->lock_key(handle_, key.data(), key.size(), flags, &h, &held, e);
    });
    return Lock(vt_->lock, h, held != 0);
  }
  // Completes a set a killed writer left half done (the rename part); a
  // backend without one has nothing to complete.
  bool recover(std::string_view key) const {
    if (!can_rename()) return false;
    int32_t done = 0;
    detail::check_storage([&](stowage_error* e) {
      return vt_->rename->recover(handle_, key.data(), key.size(), &done, e);
    });
    return done != 0;
  }

  // ---- the tree ----
  void make_directory(std::string_view key) const {
    const stowage_storage_write* w = writer(key);
    detail::check_storage(
        [&](stowage_error* e) { return w->make_directory(handle_, key.data(), key.size(), e); });
  }
  std::string stage_directory(std::string_view key) const {
    const stowage_storage_rename* r = renamer(key);
    std::string staging;
    stowage_sink sink{&staging, detail::append_to_string};
    detail::check_storage([&](stowage_error* e) {
      return r->stage_directory(handle_, key.data(), key.size(), &sink, e);
    });
    return staging;
  }
  void remove(std::string_view key, uint32_t flags = 0) const {
    const stowage_storage_write* w = writer(key);
    detail::check_storage(
        [&](stowage_error* e) { return w->remove(handle_, key.data(), key.size(), flags, e); });
  }
  // Removes a file or directory if it is there.
  void remove_if_exists(std::string_view key, uint32_t flags = STOWAGE_REMOVE_RECURSIVE) const {
    const stowage_storage_write* w = writer(key);
    stowage_error e{};
    int rc = w->remove(handle_, key.data(), key.size(), flags, &e);
    if (rc != STOWAGE_OK && rc != STOWAGE_NOT_FOUND)
      fail(static_cast<stowage_status>(rc), e.message);
  }
  void move(std::string_view from, std::string_view to, uint32_t flags = 0) const {
    move({{std::string(from), std::string(to)}}, flags);
  }
  // Several renames as one change (see stowage_storage_rename.move).
  void move(const std::vector<std::pair<std::string, std::string>>& renames,
            uint32_t flags = 0) const {
    if (renames.empty()) return;
    const stowage_storage_rename* r = renamer(renames[0].second);
    std::vector<const char*> from, to;
    std::vector<size_t> from_sizes, to_sizes;
    for (const auto& [f, t] : renames) {
      from.push_back(f.data()), from_sizes.push_back(f.size());
      to.push_back(t.data()), to_sizes.push_back(t.size());
    }
    detail::check_storage([&](stowage_error* e) {
      return r->move(handle_, renames.size(), from.data(), from_sizes.data(), to.data(),
                     to_sizes.data(), flags, e);
    });
  }

 private:
  bool has(size_t offset, const void* table) const {
    return vt_->struct_size >= offset + sizeof(void*) && table != nullptr;
  }
  const stowage_storage_write* writer(std::string_view key) const {
    if (!can_write())
      unsupported(redact_userinfo(std::string(key)) + ": this storage is read only");
    return vt_->write;
  }
  const stowage_storage_rename* renamer(std::string_view key) const {
    writer(key);
    if (!can_rename())
      unsupported(redact_userinfo(std::string(key)) + ": this storage cannot rename");
    return vt_->rename;
  }
  const stowage_storage_vtable* vt_ = nullptr;
  stowage_storage_handle handle_ = nullptr;
  uint64_t capabilities_ = 0;
};

// ---- writing a backend ------------------------------------------------------
//
// A backend author derives from ReadableStorage and from the parts it has
// (WritableStorage, RenamingStorage, LockingStorage, ConditionalStorage; a
// part it does not derive from is a NULL sub-table) and writes one line:
//     STOWAGE_DEFINE_STORAGE_PLUGIN(MyBackend, "myscheme", "1.0.0", "one line", "{}",
//                                   STOWAGE_CAP_READ | STOWAGE_CAP_THREADSAFE, nullptr)
// where MyBackend(const stowage_host*, std::string_view options_json) throws
// sdk::Error on bad options. The part bits (WRITE, MOVE, LOCK_KEY,
// CONDITIONAL) are added from the classes it derives from.

class StagedBackendFile {
 public:
  virtual ~StagedBackendFile() = default;  // an unpublished file is dropped here
  // write_at and read_at may run concurrently at distinct offsets.
  virtual void write_at(uint64_t offset, const void* data, size_t size) = 0;
  virtual uint64_t read_at(uint64_t offset, void* buf, uint64_t capacity) = 0;
  virtual void resize(uint64_t size) = 0;
};

// ArrayNode::lock_chunk's lock where a chunk (or the shard holding it) is
// one key of the storage: the storage's lock on that key.
struct KeyChunkLock final : ChunkLock {
  KeyChunkLock(std::string k, Lock l) : key(std::move(k)), lock(std::move(l)) {}
  std::string key;
  Lock lock;
};
// Null where the storage cannot lock a key (read only: nobody writes).
inline std::unique_ptr<KeyChunkLock> lock_chunk_key(const Storage& storage, std::string key) {
  if (!storage.can_lock_keys()) return nullptr;
  Lock held = storage.lock_key(key);
  return std::make_unique<KeyChunkLock>(std::move(key), std::move(held));
}

// A lock a backend hands out; released when deleted.
class BackendLock {
 public:
  virtual ~BackendLock() = default;
  virtual bool held() const = 0;
};

// What stat() tells of a key (stowage_stat); version empty: none.
struct KeyStat {
  int32_t kind = STOWAGE_ENTRY_ABSENT;
  uint64_t size = 0;
  std::string version;
};

// The read part: required.
class ReadableStorage {
 public:
  virtual ~ReadableStorage() = default;
  virtual KeyStat stat(std::string_view key) = 0;
  virtual stowage_view read(std::string_view key, uint64_t offset, uint64_t length,
                            uint32_t flags) = 0;
  virtual uint64_t read_into(std::string_view key, uint64_t offset, void* buf,
                             uint64_t capacity) = 0;
  // A scattered read (see stowage_storage_read.read_into). The default
  // reads part by part and asks stat() for the size; backends that can do
  // it in one request (preadv, one ranged GET) override it.
  virtual uint64_t read_parts(std::string_view key, uint64_t offset, const stowage_buffer* parts,
                              size_t count, uint64_t* file_size) {
    uint64_t got = 0;
    for (size_t i = 0; i < count; ++i) {
      uint64_t n = read_into(key, offset + got, parts[i].data, parts[i].size);
      got += n;
      if (n < parts[i].size) break;
    }
    if (file_size) *file_size = stat(key).size;
    return got;
  }
  virtual std::vector<std::string> list(std::string_view key) = 0;
  // The size now of the file a STOWAGE_READ_WATCH view of this backend
  // maps; false: this backend cannot tell (the caller asks stat()).
  virtual bool view_size(const stowage_view& view, uint64_t* size) {
    (void)view, (void)size;
    return false;
  }
};

// The write part.
class WritableStorage {
 public:
  virtual ~WritableStorage() = default;
  virtual std::unique_ptr<StagedBackendFile> stage(std::string_view key) = 0;
  // Takes ownership of the files, whatever happens.
  virtual void publish(std::vector<std::unique_ptr<StagedBackendFile>> files, uint32_t flags) = 0;
  virtual void remove(std::string_view key, uint32_t flags) = 0;
  virtual void make_directory(std::string_view key) = 0;
};

// The rename part.
class RenamingStorage {
 public:
  virtual ~RenamingStorage() = default;
  // (from, to) pairs; see stowage_storage_rename.move.
  virtual void move(const std::vector<std::pair<std::string, std::string>>& renames,
                    uint32_t flags) = 0;
  virtual std::string stage_directory(std::string_view key) = 0;
  virtual bool recover(std::string_view key) = 0;
};

// The lock part.
class LockingStorage {
 public:
  virtual ~LockingStorage() = default;
  virtual std::unique_ptr<BackendLock> lock(std::string_view key) = 0;
  // See stowage_storage_lock.lock_key; with try_only, one another holds
  // comes back not held().
  virtual std::unique_ptr<BackendLock> lock_key(std::string_view key, bool try_only) = 0;
};

// The conditional part.
class ConditionalStorage {
 public:
  virtual ~ConditionalStorage() = default;
  // Publishes `file` over its key only if the key's version is `expected`
  // (empty: only if the key is absent); false when it was not.
  virtual bool publish_if(std::unique_ptr<StagedBackendFile> file, const std::string& expected,
                          uint32_t flags) = 0;
};

namespace detail {
template <class Backend>
struct StorageTrampolines {
  static_assert(std::is_base_of_v<ReadableStorage, Backend>,
                "a storage backend derives from sdk::ReadableStorage");
  static Backend* self(stowage_storage_handle h) { return reinterpret_cast<Backend*>(h); }
  static StagedBackendFile* staged(stowage_staged_handle h) {
    return reinterpret_cast<StagedBackendFile*>(h);
  }
  static std::string_view sv(const char* p, size_t n) { return {p, n}; }
  static std::unique_ptr<BackendLock> checked(std::unique_ptr<BackendLock> l, int32_t* held) {
    *held = l->held() ? 1 : 0;
    return l;
  }

  static int open(const stowage_host* host, const char* options, size_t n,
                  stowage_storage_handle* out, stowage_error* err) noexcept {
    return guarded(err, [&] {
      *out = reinterpret_cast<stowage_storage_handle>(new Backend(host, sv(options, n)));
    });
  }
  static void close(stowage_storage_handle h) noexcept { delete self(h); }

  // -- read --
  static int stat(stowage_storage_handle h, const char* k, size_t ks, stowage_stat* out,
                  stowage_error* err) noexcept {
    return guarded(err, [&] {
      KeyStat st = self(h)->stat(sv(k, ks));
      *out = stowage_stat{};
      out->kind = st.kind;
      out->size = st.size;
      if (st.version.size() > STOWAGE_VERSION_CAPACITY) return;  // too long to compare: no version
      out->version.size = static_cast<uint32_t>(st.version.size());
      std::copy(st.version.begin(), st.version.end(), out->version.bytes);
    });
  }
  static int read(stowage_storage_handle h, const char* k, size_t ks, uint64_t offset,
                  uint64_t length, uint32_t flags, stowage_view* out, stowage_error* err) noexcept {
    return guarded(err, [&] { *out = self(h)->read(sv(k, ks), offset, length, flags); });
  }
  static int read_into(stowage_storage_handle h, const char* k, size_t ks, uint64_t offset,
                       const stowage_buffer* parts, uint64_t count, uint64_t* got,
                       uint64_t* file_size, stowage_error* err) noexcept {
    return guarded(err,
                   [&] { *got = self(h)->read_parts(sv(k, ks), offset, parts, count, file_size); });
  }
  static int list(stowage_storage_handle h, const char* k, size_t ks, stowage_sink* names,
                  stowage_error* err) noexcept {
    return guarded(err, [&] {
      for (const std::string& name : self(h)->list(sv(k, ks))) emit(names, name);
    });
  }
  static int view_size(stowage_storage_handle h, const stowage_view* view, uint64_t* size,
                       stowage_error* err) noexcept {
    bool told = false;
    int rc = guarded(err, [&] { told = self(h)->view_size(*view, size); });
    return rc == STOWAGE_OK && !told ? STOWAGE_UNSUPPORTED : rc;
  }

  // -- write --
  static int stage(stowage_storage_handle h, const char* k, size_t ks, stowage_staged_handle* out,
                   stowage_error* err) noexcept {
    return guarded(err, [&] {
      *out = reinterpret_cast<stowage_staged_handle>(self(h)->stage(sv(k, ks)).release());
    });
  }
  static int staged_write(stowage_staged_handle s, uint64_t offset, const void* data, size_t size,
                          stowage_error* err) noexcept {
    return guarded(err, [&] { staged(s)->write_at(offset, data, size); });
  }
  static int staged_read(stowage_staged_handle s, uint64_t offset, void* buf, uint64_t capacity,
                         uint64_t* got, stowage_error* err) noexcept {
    return guarded(err, [&] { *got = staged(s)->read_at(offset, buf, capacity); });
  }
  static int staged_resize(stowage_staged_handle s, uint64_t size, stowage_error* err) noexcept {
    return guarded(err, [&] { staged(s)->resize(size); });
  }
  static void discard(stowage_staged_handle s) noexcept { delete staged(s); }
  static int publish(stowage_storage_handle h, uint64_t count, const stowage_staged_handle* files,
                     uint32_t flags, stowage_error* err) noexcept {
    std::vector<std::unique_ptr<StagedBackendFile>> owned;
    int rc = guarded(err, [&] {
      owned.reserve(count);
      for (uint64_t i = 0; i < count; ++i) owned.emplace_back(staged(files[i]));
    });
    if (rc != STOWAGE_OK) return rc;
    return guarded(err, [&] { self(h)->publish(std::move(owned), flags); });
  }
  static int remove(stowage_storage_handle h, const char* k, size_t ks, uint32_t flags,
                    stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->remove(sv(k, ks), flags); });
  }
  static int make_directory(stowage_storage_handle h, const char* k, size_t ks,
                            stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->make_directory(sv(k, ks)); });
  }

  // -- rename --
  static int move(stowage_storage_handle h, uint64_t count, const char* const* from,
                  const size_t* from_sizes, const char* const* to, const size_t* to_sizes,
                  uint32_t flags, stowage_error* err) noexcept {
    return guarded(err, [&] {
      if (count == 0) invalid("move of no entries");
      std::vector<std::pair<std::string, std::string>> renames;
      for (uint64_t i = 0; i < count; ++i)
        renames.emplace_back(std::string(from[i], from_sizes[i]), std::string(to[i], to_sizes[i]));
      self(h)->move(renames, flags);
    });
  }
  static int stage_directory(stowage_storage_handle h, const char* k, size_t ks, stowage_sink* out,
                             stowage_error* err) noexcept {
    return guarded(err, [&] { emit(out, self(h)->stage_directory(sv(k, ks))); });
  }
  static int recover(stowage_storage_handle h, const char* k, size_t ks, int32_t* recovered,
                     stowage_error* err) noexcept {
    return guarded(err, [&] { *recovered = self(h)->recover(sv(k, ks)) ? 1 : 0; });
  }

  // -- lock --
  static int lock(stowage_storage_handle h, const char* k, size_t ks, stowage_lock_handle* out,
                  int32_t* held, stowage_error* err) noexcept {
    return guarded(err, [&] {
      *out =
          reinterpret_cast<stowage_lock_handle>(checked(self(h)->lock(sv(k, ks)), held).release());
    });
  }
  static void unlock(stowage_lock_handle l) noexcept { delete reinterpret_cast<BackendLock*>(l); }
  static int lock_key(stowage_storage_handle h, const char* k, size_t ks, uint32_t flags,
                      stowage_lock_handle* out, int32_t* held, stowage_error* err) noexcept {
    return guarded(err, [&] {
      auto l = self(h)->lock_key(sv(k, ks), (flags & STOWAGE_LOCK_TRY) != 0);
      *out = reinterpret_cast<stowage_lock_handle>(checked(std::move(l), held).release());
    });
  }

  // -- conditional --
  static int publish_if(stowage_storage_handle h, stowage_staged_handle s,
                        const stowage_version* expected, uint32_t flags, int32_t* published,
                        stowage_error* err) noexcept {
    std::unique_ptr<StagedBackendFile> file(staged(s));
    return guarded(err, [&] {
      if (expected->size > STOWAGE_VERSION_CAPACITY)
        invalid("a version longer than STOWAGE_VERSION_CAPACITY");
      std::string want(reinterpret_cast<const char*>(expected->bytes), expected->size);
      *published = self(h)->publish_if(std::move(file), want, flags) ? 1 : 0;
    });
  }

  template <class Part>
  static constexpr bool has = std::is_base_of_v<Part, Backend>;
  static const stowage_storage_read* read_part() {
    static const stowage_storage_read t = {sizeof t, stat, read, read_into, list, view_size};
    return &t;
  }
  static const stowage_storage_write* write_part() {
    if constexpr (has<WritableStorage>) {
      static const stowage_storage_write t = {sizeof t,    stage,         staged_write,
                                              staged_read, staged_resize, discard,
                                              publish,     remove,        make_directory};
      return &t;
    } else {
      return nullptr;
    }
  }
  static const stowage_storage_rename* rename_part() {
    if constexpr (has<RenamingStorage>) {
      static const stowage_storage_rename t = {sizeof t, move, stage_directory, recover};
      return &t;
    } else {
      return nullptr;
    }
  }
  static const stowage_storage_lock* lock_part() {
    if constexpr (has<LockingStorage>) {
      static const stowage_storage_lock t = {sizeof t, lock, unlock, lock_key};
      return &t;
    } else {
      return nullptr;
    }
  }
  static const stowage_storage_conditional* conditional_part() {
    if constexpr (has<ConditionalStorage>) {
      static const stowage_storage_conditional t = {sizeof t, publish_if};
      return &t;
    } else {
      return nullptr;
    }
  }
  static const stowage_storage_vtable* vtable() {
    static const stowage_storage_vtable vt = {
        sizeof vt,   STOWAGE_STORAGE_ABI, open, close, read_part(), write_part(), rename_part(),
        lock_part(), conditional_part()};
    return &vt;
  }
  // The part bits the classes show, so the descriptor agrees with the tables.
  static constexpr uint64_t part_bits() {
    return STOWAGE_CAP_LIST | (has<WritableStorage> ? STOWAGE_CAP_WRITE : 0) |
           (has<RenamingStorage> ? STOWAGE_CAP_MOVE : 0) |
           (has<LockingStorage> ? STOWAGE_CAP_LOCK_KEY : 0) |
           (has<ConditionalStorage> ? STOWAGE_CAP_CONDITIONAL : 0);
  }
};
}  // namespace detail

}  // namespace stowage::sdk

// ALIASES: a `static const char* const name[] = {"https", nullptr};` or nullptr.
#define STOWAGE_DEFINE_STORAGE_PLUGIN(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, ALIASES)     \
  STOWAGE_DEFINE_PLUGIN_(STOWAGE_KIND_STORAGE, ID, VERSION, DESCRIPTION, SCHEMA,                  \
                         (CAPS) | ::stowage::sdk::detail::StorageTrampolines<CLASS>::part_bits(), \
                         ::stowage::sdk::detail::StorageTrampolines<CLASS>::vtable(), ALIASES,    \
                         nullptr, nullptr)

#endif  // STOWAGE_STORAGE_HPP
