// stowage/plugin.hpp -- the header-only C++ adapter over stowage/plugin.h.
//
// A codec author writes a class that is the codec's immutable configuration
// (one object is used by many threads at once, so every method is const):
//     static const sdk::Params& params();  // one declaration per parameter
//                                          // (stowage/codec_config.hpp); optional
//     MyCodec(const sdk::Host& host, std::string_view config_json);  // or (config_json)
//     std::string canonical_config() const;
//     uint64_t bound(uint64_t n) const;
//     size_t encode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const;
//     size_t decode(Context& cx, const void* in, size_t n, void* out, size_t capacity) const;
// where `struct Context` (a nested type, constructible from `const MyCodec&`
// or by default) is the scratch state one thread uses at a time; the host
// pools contexts. A codec without scratch state declares no Context and
// leaves the `Context&` parameter out. Then one line:
//     STOWAGE_DEFINE_CODEC_PLUGIN(MyCodec, "myid", "1.0.0", "one-line description",
//                                 STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
// The descriptor's params_schema is generated from params().
// Optionally, its names in Zarr's codec registries and how its config maps
// there (stowage_codec_vtable.names; see HasNames below):
//     static const char* names();
//     static json import_config(dialect, name, entry_json, item_size);
//     static json export_config(config_json, dialect, item_size);
//
// A format author derives from sdk::Store (the tree, by path) and from the
// node class of each kind it holds (sdk::ArrayNode, SparseNode, StringsNode,
// RecordsNode: a node's data, returned by Store::open_node), writes two
// static functions
//     static int32_t identify(const sdk::Probe& probe);  // what the host read of the path
//     static std::unique_ptr<sdk::Store> open(const sdk::Host& host, std::string_view path,
//                                             uint32_t mode, std::string_view options_json);
// in a class, and uses STOWAGE_DEFINE_FORMAT_PLUGIN. The store keeps the host
// it was opened with (Store::host()), for logging and codecs.
//
// Nothing here is process-global: a plugin loaded by two registries serves
// each through the host table that registry passed.
//
// The macros generate the descriptor and noexcept trampolines that turn every
// exception into a status code and message, so nothing C++ crosses the boundary.
#ifndef STOWAGE_PLUGIN_HPP
#define STOWAGE_PLUGIN_HPP

#include <stowage/plugin.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace stowage::sdk {

// The one exception type plugin code throws; the trampolines turn it into
// its status code. Anything else thrown becomes STOWAGE_INTERNAL.
class Error : public std::runtime_error {
 public:
  Error(stowage_status code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  stowage_status code() const noexcept { return code_; }

 private:
  stowage_status code_;
};

[[noreturn]] inline void fail(stowage_status code, const std::string& message) {
  throw Error(code, message);
}
[[noreturn]] inline void corrupt(const std::string& message) { fail(STOWAGE_CORRUPT, message); }
[[noreturn]] inline void invalid(const std::string& message) {
  fail(STOWAGE_INVALID_ARGUMENT, message);
}
[[noreturn]] inline void unsupported(const std::string& message) {
  fail(STOWAGE_UNSUPPORTED, message);
}

// The host table of the registry that created an object (a codec
// configuration, an open store), kept by that object. Every read of a field
// first checks that the host's struct_size covers it, so a plugin runs under
// a host with a shorter (older) table.
class Host {
 public:
  Host() = default;
  explicit Host(const stowage_host* table) : table_(table) {}
  const stowage_host* table() const { return table_; }

  // True when the host's table has the function pointer at `offset`, set.
  bool offers(size_t offset) const {
    if (!table_ || table_->struct_size < offset + sizeof(void (*)())) return false;
    void (*fn)();
    std::memcpy(&fn, reinterpret_cast<const char*>(table_) + offset, sizeof fn);
    return fn != nullptr;
  }

  void log(stowage_log_level level, std::string_view message) const {
    if (offers(offsetof(stowage_host, log)))
      table_->log(table_->ctx, level, message.data(), message.size());
  }
  // The host's worker threads (1 when it does not say).
  uint32_t thread_count() const {
    if (!offers(offsetof(stowage_host, thread_count))) return 1;
    uint32_t n = table_->thread_count(table_->ctx);
    return n ? n : 1;
  }
  bool offers_codecs() const {
    return offers(offsetof(stowage_host, codec_create)) &&
           offers(offsetof(stowage_host, codec_destroy)) &&
           offers(offsetof(stowage_host, codec_bound)) &&
           offers(offsetof(stowage_host, codec_encode)) &&
           offers(offsetof(stowage_host, codec_decode));
  }

 private:
  const stowage_host* table_ = nullptr;
};

// ---- what identify is given ----------------------------------------------

// The host's probe of a path (stowage_probe): its kind, size, a file's first
// and last bytes, a directory's names. A format decides from these without
// I/O where it can.
class Probe {
 public:
  Probe(const stowage_host* host, const stowage_probe* probe) : host_(host), p_(probe) {}
  const Host& host() const { return host_; }
  std::string_view path() const { return {p_->path, p_->path_size}; }
  // STOWAGE_ENTRY_ABSENT, _FILE, _DIRECTORY, or STOWAGE_PROBE_KIND_UNKNOWN.
  int32_t kind() const { return p_->kind; }
  bool is_file() const { return p_->kind == STOWAGE_ENTRY_FILE; }
  bool is_directory() const { return p_->kind == STOWAGE_ENTRY_DIRECTORY; }
  uint64_t size() const { return is_file() ? p_->size : 0; }
  std::string_view header() const { return bytes(p_->header, p_->header_size); }
  std::string_view trailer() const { return bytes(p_->trailer, p_->trailer_size); }
  // Whether the directory holds a file (a subdirectory) `name`: from the
  // host's listing, or where it has none (a server without listings), by
  // asking the storage.
  bool has_file(std::string_view name) const { return entry_kind(name) == STOWAGE_ENTRY_FILE; }
  bool has_directory(std::string_view name) const {
    return entry_kind(name) == STOWAGE_ENTRY_DIRECTORY;
  }
  int32_t entry_kind(std::string_view name) const {
    if (!is_directory()) return STOWAGE_ENTRY_ABSENT;
    if (!p_->listed) return stat_kind(std::string(path()) + "/" + std::string(name));
    bool any_dotfile = false;
    std::string_view all(p_->entries, p_->entries_size);
    for (size_t at = 0; at < all.size();) {
      size_t end = std::min(all.find('\0', at), all.size());
      std::string_view entry = all.substr(at, end - at);
      const bool directory = !entry.empty() && entry.back() == '/';
      if (directory) entry.remove_suffix(1);
      if (entry == name) return directory ? STOWAGE_ENTRY_DIRECTORY : STOWAGE_ENTRY_FILE;
      any_dotfile = any_dotfile || (!entry.empty() && entry.front() == '.');
      at = end + 1;
    }
    // nginx's JSON autoindex hides dotfiles (.zarray, .zgroup): a listing
    // that shows none may hide them, so a dot-name is asked for by name. One
    // that shows any hides none (local directories stay one listing).
    if (!any_dotfile && !name.empty() && name.front() == '.')
      return stat_kind(std::string(path()) + "/" + std::string(name));
    return STOWAGE_ENTRY_ABSENT;
  }

 private:
  static std::string_view bytes(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), data ? size : 0};
  }
  // The storage's kind of `key`; STOWAGE_PROBE_KIND_UNKNOWN when it cannot tell.
  int32_t stat_kind(const std::string& key) const {
    if (!host_.offers(offsetof(stowage_host, storage))) return STOWAGE_PROBE_KIND_UNKNOWN;
    const stowage_host* h = host_.table();
    const stowage_storage_vtable* vt = nullptr;
    stowage_storage_handle handle = nullptr;
    uint64_t caps = 0;
    stowage_error err{};
    stowage_stat st{};
    if (h->storage(h->ctx, key.data(), key.size(), &vt, &handle, &caps, &err) != STOWAGE_OK ||
        vt->read->stat(handle, key.data(), key.size(), &st, &err) != STOWAGE_OK)
      return STOWAGE_PROBE_KIND_UNKNOWN;
    return st.kind;
  }
  Host host_;
  const stowage_probe* p_;
};

// ---- error plumbing -------------------------------------------------------

inline void set_error(stowage_error* err, int32_t code, std::string_view message) noexcept {
  if (!err) return;
  err->code = code;
  size_t n = message.size() < sizeof(err->message) - 1 ? message.size() : sizeof(err->message) - 1;
  std::memcpy(err->message, message.data(), n);
  err->message[n] = '\0';
}

// Runs `body` and converts whatever it throws into a status.
template <class Body>
int guarded(stowage_error* err, Body&& body) noexcept {
  try {
    body();
    return STOWAGE_OK;
  } catch (const Error& e) {
    set_error(err, e.code(), e.what());
    return e.code();
  } catch (const std::bad_alloc&) {
    set_error(err, STOWAGE_INTERNAL, "out of memory");
    return STOWAGE_INTERNAL;
  } catch (const std::exception& e) {
    set_error(err, STOWAGE_INTERNAL, e.what());
    return STOWAGE_INTERNAL;
  } catch (...) {
    set_error(err, STOWAGE_INTERNAL, "unknown exception in plugin");
    return STOWAGE_INTERNAL;
  }
}

// Sends bytes to a host sink; a refusing sink aborts the operation.
inline void emit(stowage_sink* sink, const void* data, size_t size) {
  if (sink->write(sink->ctx, data, size) != 0) fail(STOWAGE_INTERNAL, "the host refused output");
}
inline void emit(stowage_sink* sink, std::string_view s) { emit(sink, s.data(), s.size()); }

// ---- using codecs from a format plugin ------------------------------------

namespace detail {
// A sink appending to `text`.
inline stowage_sink append_sink(std::string* text) {
  return {text, [](void* ctx, const void* d, size_t n) {
            static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n);
            return 0;
          }};
}
}  // namespace detail

// A codec obtained through the host's registry. One object serves many
// threads at once: the host gives each call a context of its own.
//
// It copies the host's codec functions rather than keep the table: a
// per-thread cache in a plugin may release a HostCodec after the registry
// (and its table) is gone, and the codec itself stays valid (plugins and the
// library are never unloaded).
class HostCodec {
 public:
  // A bytes -> bytes codec.
  HostCodec(const Host& host, std::string_view config_json) {
    const stowage_host* table = take(host);
    stowage_sink canonical = detail::append_sink(&canonical_);
    stowage_error err;
    int rc = table->codec_create(table->ctx, config_json.data(), config_json.size(), &codec_,
                                 &canonical, &err);
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), err.message);
  }
  // An array -> array codec for chunks of `chunk_json` ({"dtype": numpy
  // typestr, "shape": [...]}); encoded_chunk() is what it encodes them into.
  HostCodec(const Host& host, std::string_view config_json, std::string_view chunk_json) {
    const stowage_host* table = take(host);
    if (!host.offers(offsetof(stowage_host, codec_create_array)))
      fail(STOWAGE_UNSUPPORTED, "the host has no array -> array codecs (an older stowage)");
    stowage_sink canonical = detail::append_sink(&canonical_),
                 encoded = detail::append_sink(&encoded_);
    stowage_error err;
    int rc = table->codec_create_array(table->ctx, config_json.data(), config_json.size(),
                                       chunk_json.data(), chunk_json.size(), &codec_, &canonical,
                                       &encoded, &err);
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), err.message);
  }
  HostCodec(const HostCodec&) = delete;
  HostCodec& operator=(const HostCodec&) = delete;
  ~HostCodec() {
    if (codec_) destroy_(codec_);
  }

  // Canonical JSON config (defaults filled, keys sorted).
  const std::string& canonical_config() const { return canonical_; }
  // An array -> array codec's encoded chunk {"dtype", "shape"}; "" for bytes -> bytes.
  const std::string& encoded_chunk() const { return encoded_; }
  uint64_t bound(uint64_t n) const { return bound_(codec_, n); }
  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    size_t written = 0;
    stowage_error err;  // filled only on failure: no 1 KiB clearing per call
    check(encode_(codec_, in, n, out, capacity, &written, &err), err);
    return written;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    size_t written = 0;
    stowage_error err;
    check(decode_(codec_, in, n, out, capacity, &written, &err), err);
    return written;
  }

 private:
  static void check(int rc, const stowage_error& err) {
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), err.message);
  }
  // Copies the host's codec functions; the table, for the create call.
  const stowage_host* take(const Host& host) {
    if (!host.offers_codecs()) fail(STOWAGE_INTERNAL, "the host offers no codecs");
    const stowage_host* table = host.table();
    destroy_ = table->codec_destroy;
    bound_ = table->codec_bound;
    encode_ = table->codec_encode;
    decode_ = table->codec_decode;
    return table;
  }
  decltype(stowage_host::codec_destroy) destroy_ = nullptr;
  decltype(stowage_host::codec_bound) bound_ = nullptr;
  decltype(stowage_host::codec_encode) encode_ = nullptr;
  decltype(stowage_host::codec_decode) decode_ = nullptr;
  stowage_host_codec codec_ = nullptr;
  std::string canonical_, encoded_;
};

namespace detail {
// The text a host call streams into a sink; its error thrown as sdk::Error.
template <class Call>
std::string text_from(Call&& call) {
  std::string out;
  stowage_sink sink = append_sink(&out);
  stowage_error err;
  if (int rc = call(&sink, &err); rc != STOWAGE_OK)
    fail(static_cast<stowage_status>(rc), err.message);
  return out;
}
}  // namespace detail

// Codec names (stowage_codec_vtable.names): the codec config, with "type",
// a dialect's entry names ("numcodecs": {"id": ...}, "zarr3": {"name": ...}),
// and back. The host's error (NOT_FOUND for an unknown name) is thrown.
inline std::string codec_resolve(const Host& host, std::string_view dialect,
                                 std::string_view entry_json, uint64_t item_size) {
  if (!host.offers(offsetof(stowage_host, codec_resolve)))
    fail(STOWAGE_UNSUPPORTED, "the host resolves no codec names (an older stowage)");
  const stowage_host* t = host.table();
  return detail::text_from([&](stowage_sink* sink, stowage_error* err) {
    return t->codec_resolve(t->ctx, dialect.data(), dialect.size(), entry_json.data(),
                            entry_json.size(), item_size, sink, err);
  });
}
inline std::string codec_export(const Host& host, std::string_view config_json,
                                std::string_view dialect, uint64_t item_size) {
  if (!host.offers(offsetof(stowage_host, codec_export)))
    fail(STOWAGE_UNSUPPORTED, "the host exports no codec names (an older stowage)");
  const stowage_host* t = host.table();
  return detail::text_from([&](stowage_sink* sink, stowage_error* err) {
    return t->codec_export(t->ctx, config_json.data(), config_json.size(), dialect.data(),
                           dialect.size(), item_size, sink, err);
  });
}

// A node's codec, made through the host on first use, so a node whose codec
// plugin is missing still lists and describes; then one HostCodec serves
// every thread (the host gives each call a context of its own), so a format
// keeps no pool. `context` (the node's metadata file) prefixes a failure.
class LazyHostCodec {
 public:
  LazyHostCodec(const Host& host, std::string config_json, std::string context)
      : host_(host), config_(std::move(config_json)), context_(std::move(context)) {}
  LazyHostCodec(const LazyHostCodec&) = delete;
  LazyHostCodec& operator=(const LazyHostCodec&) = delete;

  const HostCodec& get() {
    if (const HostCodec* c = ready_.load(std::memory_order_acquire)) return *c;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!codec_) {
      try {
        codec_ = std::make_unique<HostCodec>(host_, config_);
      } catch (const Error& e) {
        fail(e.code(), context_ + ": codec " + config_ + ": " + e.what());
      }
      ready_.store(codec_.get(), std::memory_order_release);
    }
    return *codec_;
  }

 private:
  Host host_;
  std::string config_, context_;
  std::mutex mutex_;
  std::unique_ptr<HostCodec> codec_;
  std::atomic<const HostCodec*> ready_{nullptr};
};

// ---- format plugins -------------------------------------------------------

using ItemFn = std::function<void(const void* data, size_t size)>;

namespace detail {
template <class Format>
struct FormatTrampolines;
}

// A node the host opened (Store::open_node): the data of one node, with
// whatever the plugin parsed to serve it (dataset metadata, an index, a
// map). A plugin derives from the class of the node's kind; a group is a
// GroupNode. The host calls a node's read functions from many threads at
// once, write_chunk from many threads for distinct chunks, and never uses a
// node after its store closed.
class Node {
 public:
  virtual ~Node() = default;
  virtual stowage_node_kind kind() const = 0;

 protected:
  [[noreturn]] static void read_only(const char* op) {
    unsupported(std::string("this node is read only (") + op + ")");
  }
};

class GroupNode final : public Node {
 public:
  stowage_node_kind kind() const override { return STOWAGE_NODE_GROUP; }
};

// What ArrayNode::lock_chunk hands out: held until deleted.
class ChunkLock {
 public:
  virtual ~ChunkLock() = default;
};

class ArrayNode : public Node {
 public:
  stowage_node_kind kind() const final { return STOWAGE_NODE_ARRAY; }
  // Returns false for a missing chunk.
  virtual bool read_chunk(const uint64_t* chunk_index, void* out, size_t capacity,
                          uint64_t* chunk_shape) = 0;
  virtual void write_chunk(const uint64_t* chunk_index, const void* in, size_t size,
                           const uint64_t* chunk_shape) {
    (void)chunk_index, (void)in, (void)size, (void)chunk_shape;
    read_only("write_chunk");
  }
  // Whether the chunk is stored, found without decoding it.
  virtual bool chunk_exists(const uint64_t* chunk_index) = 0;
  // The lock a read-modify-write of this chunk holds (stowage_array_vtable.
  // lock_chunk); null where the format needs none.
  virtual std::unique_ptr<ChunkLock> lock_chunk(const uint64_t* chunk_index) {
    (void)chunk_index;
    return nullptr;
  }
  // Publishes what was written under `lock`, then lets it go (deleting it).
  virtual void unlock_chunk(std::unique_ptr<ChunkLock> lock) { (void)lock; }
  // Publishes what write_chunk left pending (stowage_array_vtable.flush).
  virtual void flush() {}
  // Hands the chunk's slabs [slab_begin, slab_end) to `piece` in pieces of
  // whole slabs (stowage_array_vtable.read_chunk_slabs); `chunk_shape` is set
  // before the first. unsupported: the chunk must be decoded whole (read_chunk).
  enum class Slabs { read, missing, unsupported };
  using PieceFn = std::function<void(const void* data, size_t size)>;
  virtual Slabs read_chunk_slabs(const uint64_t* chunk_index, uint64_t slab_begin,
                                 uint64_t slab_end, const PieceFn& piece, uint64_t* chunk_shape) {
    (void)chunk_index, (void)slab_begin, (void)slab_end, (void)piece, (void)chunk_shape;
    return Slabs::unsupported;
  }
};

class SparseNode : public Node {
 public:
  stowage_node_kind kind() const final { return STOWAGE_NODE_SPARSE; }
  virtual uint64_t count(uint64_t begin, uint64_t end) = 0;
  virtual void read(uint64_t begin, uint64_t end, uint64_t* indptr, uint32_t* indices, void* values,
                    uint64_t nnz_capacity) = 0;
  virtual void append(uint64_t n_major, const uint64_t* indptr, const uint32_t* indices,
                      const void* values) {
    (void)n_major, (void)indptr, (void)indices, (void)values;
    read_only("append");
  }
};

class StringsNode : public Node {
 public:
  stowage_node_kind kind() const final { return STOWAGE_NODE_STRINGS; }
  virtual void read(uint64_t begin, uint64_t end, const ItemFn& item) = 0;
};

class RecordsNode : public Node {
 public:
  stowage_node_kind kind() const final { return STOWAGE_NODE_RECORDS; }
  virtual uint64_t count() = 0;
  virtual void read(uint64_t begin, uint64_t end, const ItemFn& item) = 0;
  virtual std::string key(uint64_t index) = 0;
  virtual std::optional<uint64_t> find_key(std::string_view key) = 0;
  // present[i] = whether keys[i] is a key; override to overlap the lookups
  // of many keys (a Bloom filter's cache misses, say).
  virtual void contains_keys(uint64_t count, const char* const* keys, const uint64_t* key_sizes,
                             uint8_t* present) {
    for (uint64_t i = 0; i < count; ++i)
      present[i] = find_key(std::string_view(keys[i], key_sizes[i])) ? 1 : 0;
  }
  virtual void append(uint64_t count, const void* const* records, const uint64_t* sizes) {
    (void)count, (void)records, (void)sizes;
    read_only("append");
  }
};

// Base class of a format plugin's open store: the tree (list, describe,
// create, remove...) by path, and open_node for a node's data. Every
// operation a format does not support reports UNSUPPORTED with its name.
class Store {
 public:
  virtual ~Store() = default;
  virtual void close() {}
  // Called instead of close() when nothing more is to be published (the
  // store is deleted right after): the default does nothing, so what the
  // store holds pending goes with its destructor (a sdk::Staged dropped
  // unpublished removes its file). Errors are ignored.
  virtual void discard() {}

  // The host table of the registry that opened this store (set by the SDK
  // when open() returns; open() itself receives it as an argument).
  const Host& host() const { return host_; }
  void log(stowage_log_level level, std::string_view message) const { host_.log(level, message); }

  virtual std::vector<std::string> list(std::string_view node) = 0;
  virtual std::string describe(std::string_view node) = 0;
  // The node's data; NOT_FOUND for a missing node.
  virtual std::unique_ptr<Node> open_node(std::string_view node) = 0;

  virtual void create(std::string_view node, std::string_view json) {
    no("create");
    (void)node;
    (void)json;
  }
  virtual void set_attributes(std::string_view node, std::string_view json) {
    (void)node, (void)json;
    no("set_attributes");
  }
  virtual void remove(std::string_view node) {
    (void)node;
    no("remove");
  }
  // Writes a whole string array, creating or replacing the node.
  virtual void write_strings(std::string_view node, const std::vector<std::string_view>& values) {
    (void)node, (void)values;
    no("write_strings");
  }
  // Declare STOWAGE_CAP_MOVE_NODES in the descriptor when overriding this.
  virtual void move_node(std::string_view from, std::string_view to, bool replace) {
    (void)from, (void)to, (void)replace;
    no("move_node");
  }

  virtual std::string command(std::string_view node, std::string_view name,
                              std::string_view args_json) {
    (void)node, (void)args_json;
    unsupported("unknown command '" + std::string(name) + "'");
  }

 private:
  [[noreturn]] static void no(const char* op) {
    unsupported(std::string("this format does not support ") + op);
  }
  template <class Format>
  friend struct detail::FormatTrampolines;
  Host host_;
};

namespace detail {

inline std::string_view sv(const char* p, size_t n) { return {p ? p : "", p ? n : 0}; }

// Whether a codec class declares a nested Context, and params().
template <class Codec, class = void>
struct HasContext : std::false_type {};
template <class Codec>
struct HasContext<Codec, std::void_t<typename Codec::Context>> : std::true_type {};
template <class Codec, class = void>
struct HasParams : std::false_type {};
template <class Codec>
struct HasParams<Codec, std::void_t<decltype(Codec::params())>> : std::true_type {};

// Whether a codec class declares its names (stowage_codec_vtable.names):
//     static const char* names();  // {"numcodecs": [...], "zarr3": [...]}
//     static R import_config(std::string_view dialect, std::string_view name,
//                            std::string_view entry_json, uint64_t item_size);
//     static R export_config(std::string_view config_json, std::string_view dialect,
//                            uint64_t item_size);
// where R is std::string or a JSON value with dump() (nlohmann::json).
template <class Codec, class = void>
struct HasNames : std::false_type {};
template <class Codec>
struct HasNames<Codec, std::void_t<decltype(Codec::names())>> : std::true_type {};
template <class Codec, class = void>
struct HasImport : std::false_type {};
template <class Codec>
struct HasImport<Codec,
                 std::void_t<decltype(Codec::import_config(std::string_view{}, std::string_view{},
                                                           std::string_view{}, uint64_t{}))>>
    : std::true_type {};
template <class Codec, class = void>
struct HasExport : std::false_type {};
template <class Codec>
struct HasExport<Codec, std::void_t<decltype(Codec::export_config(std::string_view{},
                                                                  std::string_view{}, uint64_t{}))>>
    : std::true_type {};

// JSON text from what import_config / export_config returned: a JSON value
// (asked first: nlohmann::json converts implicitly to std::string) or text.
template <class R, class = void>
struct HasDump : std::false_type {};
template <class R>
struct HasDump<R, std::void_t<decltype(std::declval<const R&>().dump())>> : std::true_type {};
template <class R>
std::string json_text(const R& r) {
  if constexpr (HasDump<R>::value)
    return r.dump();
  else
    return std::string(r);
}

template <class Codec>
struct CodecTrampolines {
  static constexpr bool kContext = HasContext<Codec>::value;
  static const Codec* self(stowage_codec_config c) { return reinterpret_cast<const Codec*>(c); }

  static Codec* make(const stowage_host* host, std::string_view json) {
    if constexpr (std::is_constructible_v<Codec, const Host&, std::string_view>)
      return new Codec(Host(host), json);
    else
      return new Codec(json);
  }
  static int create(const stowage_host* host, const char* json, size_t size,
                    stowage_codec_config* out, stowage_sink* canonical,
                    stowage_error* err) noexcept {
    return guarded(err, [&] {
      std::unique_ptr<Codec> codec(make(host, sv(json, size)));
      if (canonical) emit(canonical, codec->canonical_config());
      *out = reinterpret_cast<stowage_codec_config>(codec.release());
    });
  }
  static void destroy(stowage_codec_config c) noexcept { delete self(c); }

  template <class Cx = Codec>
  static int context_create(stowage_codec_config c, stowage_codec_context* out,
                            stowage_error* err) noexcept {
    using Context = typename Cx::Context;
    return guarded(err, [&] {
      Context* cx;
      if constexpr (std::is_constructible_v<Context, const Cx&>)
        cx = new Context(*self(c));
      else
        cx = new Context();
      *out = reinterpret_cast<stowage_codec_context>(cx);
    });
  }
  template <class Cx = Codec>
  static void context_destroy(stowage_codec_context cx) noexcept {
    delete reinterpret_cast<typename Cx::Context*>(cx);
  }

  static uint64_t bound(stowage_codec_config c, uint64_t n) noexcept {
    try {
      return self(c)->bound(n);
    } catch (...) {
      return UINT64_MAX;
    }
  }
  // Calls encode or decode with the context when the codec has one.
  template <class Fn>
  static size_t call(stowage_codec_context cx, Fn&& fn) {
    if constexpr (kContext) {
      if (!cx) fail(STOWAGE_INTERNAL, "the host passed no codec context");
      return fn(*reinterpret_cast<typename Codec::Context*>(cx));
    } else {
      (void)cx;
      return fn();
    }
  }
  static int encode(stowage_codec_config c, stowage_codec_context cx, const void* in, size_t n,
                    void* out, size_t cap, size_t* written, stowage_error* err) noexcept {
    return guarded(err, [&] {
      *written =
          call(cx, [&](auto&... context) { return self(c)->encode(context..., in, n, out, cap); });
    });
  }
  static int decode(stowage_codec_config c, stowage_codec_context cx, const void* in, size_t n,
                    void* out, size_t cap, size_t* written, stowage_error* err) noexcept {
    return guarded(err, [&] {
      *written =
          call(cx, [&](auto&... context) { return self(c)->decode(context..., in, n, out, cap); });
    });
  }

  template <class Cx = Codec>
  static int import_config(const char* dialect, size_t dialect_size, const char* name,
                           size_t name_size, const char* entry, size_t entry_size,
                           uint64_t item_size, stowage_sink* config, stowage_error* err) noexcept {
    return guarded(err, [&] {
      emit(config, json_text(Cx::import_config(sv(dialect, dialect_size), sv(name, name_size),
                                               sv(entry, entry_size), item_size)));
    });
  }
  template <class Cx = Codec>
  static int export_config(const char* config, size_t config_size, const char* dialect,
                           size_t dialect_size, uint64_t item_size, stowage_sink* entry,
                           stowage_error* err) noexcept {
    return guarded(err, [&] {
      emit(entry, json_text(Cx::export_config(sv(config, config_size), sv(dialect, dialect_size),
                                              item_size)));
    });
  }

  static const stowage_codec_vtable* vtable() {
    static const stowage_codec_vtable vt = [] {
      stowage_codec_vtable v = common_table();
      v.create = create;
      return v;
    }();
    return &vt;
  }
  // Every entry but the create function, which differs by codec kind
  // (stowage/array_codec.hpp sets create_array).
  static stowage_codec_vtable common_table() {
    stowage_codec_vtable v{};
    v.struct_size = sizeof(stowage_codec_vtable);
    v.destroy = destroy;
    if constexpr (kContext) {
      v.context_create = context_create<>;
      v.context_destroy = context_destroy<>;
    }
    v.bound = bound;
    v.encode = encode;
    v.decode = decode;
    if constexpr (HasNames<Codec>::value) v.names = Codec::names();
    if constexpr (HasImport<Codec>::value) v.import_config = import_config<>;
    if constexpr (HasExport<Codec>::value) v.export_config = export_config<>;
    return v;
  }

  // The descriptor's params_schema, generated from params() (ADL finds
  // schema_json in stowage/codec_config.hpp).
  static const char* params_schema() {
    if constexpr (HasParams<Codec>::value) {
      static const std::string schema = schema_json(Codec::params());
      return schema.c_str();
    } else {
      return "{}";
    }
  }
};

// The tables of the node kinds: each function casts the handle back to the
// plugin's node object.
struct NodeTrampolines {
  template <class N>
  static N& as(stowage_node_handle h) {
    return *static_cast<N*>(reinterpret_cast<Node*>(h));
  }
  static ItemFn to_items(stowage_sink* sink) {
    return [sink](const void* d, size_t n) { emit(sink, d, n); };
  }

  // arrays
  static int read_chunk(stowage_node_handle h, const uint64_t* idx, void* out, size_t cap,
                        uint64_t* shape, stowage_error* err) noexcept {
    bool present = true;
    int rc = guarded(err, [&] { present = as<ArrayNode>(h).read_chunk(idx, out, cap, shape); });
    return rc == STOWAGE_OK && !present ? STOWAGE_MISSING : rc;
  }
  static int write_chunk(stowage_node_handle h, const uint64_t* idx, const void* in, size_t n,
                         const uint64_t* shape, stowage_error* err) noexcept {
    return guarded(err, [&] { as<ArrayNode>(h).write_chunk(idx, in, n, shape); });
  }
  static int chunk_exists(stowage_node_handle h, const uint64_t* idx, int32_t* exists,
                          stowage_error* err) noexcept {
    return guarded(err, [&] { *exists = as<ArrayNode>(h).chunk_exists(idx) ? 1 : 0; });
  }
  static int lock_chunk(stowage_node_handle h, const uint64_t* idx, stowage_chunk_lock* out,
                        stowage_error* err) noexcept {
    *out = nullptr;
    return guarded(err, [&] {
      *out = reinterpret_cast<stowage_chunk_lock>(as<ArrayNode>(h).lock_chunk(idx).release());
    });
  }
  static int unlock_chunk(stowage_node_handle h, stowage_chunk_lock lock,
                          stowage_error* err) noexcept {
    std::unique_ptr<ChunkLock> held(reinterpret_cast<ChunkLock*>(lock));
    return guarded(err, [&] { as<ArrayNode>(h).unlock_chunk(std::move(held)); });
  }
  static int flush(stowage_node_handle h, stowage_error* err) noexcept {
    return guarded(err, [&] { as<ArrayNode>(h).flush(); });
  }
  static int read_chunk_slabs(stowage_node_handle h, const uint64_t* idx, uint64_t begin,
                              uint64_t end, stowage_sink* sink, uint64_t* shape,
                              stowage_error* err) noexcept {
    using Slabs = ArrayNode::Slabs;
    Slabs got = Slabs::read;
    int rc = guarded(err, [&] {
      got = as<ArrayNode>(h).read_chunk_slabs(
          idx, begin, end, [sink](const void* d, size_t n) { emit(sink, d, n); }, shape);
    });
    if (rc != STOWAGE_OK) return rc;
    return got == Slabs::missing       ? STOWAGE_MISSING
           : got == Slabs::unsupported ? STOWAGE_UNSUPPORTED
                                       : STOWAGE_OK;
  }
  // sparse
  static int sparse_count(stowage_node_handle h, uint64_t b, uint64_t e, uint64_t* nnz,
                          stowage_error* err) noexcept {
    return guarded(err, [&] { *nnz = as<SparseNode>(h).count(b, e); });
  }
  static int sparse_read(stowage_node_handle h, uint64_t b, uint64_t e, uint64_t* indptr,
                         uint32_t* indices, void* values, uint64_t cap,
                         stowage_error* err) noexcept {
    return guarded(err, [&] { as<SparseNode>(h).read(b, e, indptr, indices, values, cap); });
  }
  static int sparse_append(stowage_node_handle h, uint64_t n, const uint64_t* indptr,
                           const uint32_t* indices, const void* values,
                           stowage_error* err) noexcept {
    return guarded(err, [&] { as<SparseNode>(h).append(n, indptr, indices, values); });
  }
  // strings
  static int strings_read(stowage_node_handle h, uint64_t b, uint64_t e, stowage_sink* sink,
                          stowage_error* err) noexcept {
    return guarded(err, [&] { as<StringsNode>(h).read(b, e, to_items(sink)); });
  }
  // records
  static int records_count(stowage_node_handle h, uint64_t* count, stowage_error* err) noexcept {
    return guarded(err, [&] { *count = as<RecordsNode>(h).count(); });
  }
  static int records_read(stowage_node_handle h, uint64_t b, uint64_t e, stowage_sink* sink,
                          stowage_error* err) noexcept {
    return guarded(err, [&] { as<RecordsNode>(h).read(b, e, to_items(sink)); });
  }
  static int records_key(stowage_node_handle h, uint64_t i, stowage_sink* sink,
                         stowage_error* err) noexcept {
    return guarded(err, [&] { emit(sink, as<RecordsNode>(h).key(i)); });
  }
  static int records_find_key(stowage_node_handle h, const char* key, size_t ks, uint64_t* index,
                              stowage_error* err) noexcept {
    std::optional<uint64_t> found;
    int rc = guarded(err, [&] { found = as<RecordsNode>(h).find_key(sv(key, ks)); });
    if (rc != STOWAGE_OK) return rc;
    if (!found) {
      set_error(err, STOWAGE_NOT_FOUND, "key '" + std::string(sv(key, ks)) + "' not found");
      return STOWAGE_NOT_FOUND;
    }
    *index = *found;
    return STOWAGE_OK;
  }
  static int records_contains_keys(stowage_node_handle h, uint64_t count, const char* const* keys,
                                   const uint64_t* key_sizes, uint8_t* present,
                                   stowage_error* err) noexcept {
    return guarded(err, [&] { as<RecordsNode>(h).contains_keys(count, keys, key_sizes, present); });
  }
  static int records_append(stowage_node_handle h, uint64_t count, const void* const* recs,
                            const uint64_t* sizes, stowage_error* err) noexcept {
    return guarded(err, [&] { as<RecordsNode>(h).append(count, recs, sizes); });
  }

  // The table of a node's kind (nullptr for a group).
  static const void* table(stowage_node_kind kind) {
    static const stowage_array_vtable array = {sizeof(stowage_array_vtable),
                                               read_chunk,
                                               write_chunk,
                                               chunk_exists,
                                               lock_chunk,
                                               unlock_chunk,
                                               flush,
                                               read_chunk_slabs};
    static const stowage_sparse_vtable sparse = {sizeof(stowage_sparse_vtable), sparse_count,
                                                 sparse_read, sparse_append};
    static const stowage_strings_vtable strings = {sizeof(stowage_strings_vtable), strings_read};
    static const stowage_records_vtable records = {
        sizeof(stowage_records_vtable), records_count, records_read, records_key, records_find_key,
        records_contains_keys,          records_append};
    switch (kind) {
      case STOWAGE_NODE_ARRAY:
        return &array;
      case STOWAGE_NODE_SPARSE:
        return &sparse;
      case STOWAGE_NODE_STRINGS:
        return &strings;
      case STOWAGE_NODE_RECORDS:
        return &records;
      default:
        return nullptr;
    }
  }
};

template <class Format>
struct FormatTrampolines {
  static Store* self(stowage_store_handle h) { return reinterpret_cast<Store*>(h); }

  static int32_t identify(const stowage_host* host, const stowage_probe* probe) noexcept {
    try {
      return Format::identify(Probe(host, probe));
    } catch (...) {
      return 0;
    }
  }
  static int open(const stowage_host* host, const char* path, size_t size, uint32_t mode,
                  const char* opts, size_t opts_size, stowage_store_handle* out,
                  stowage_error* err) noexcept {
    return guarded(err, [&] {
      Host h(host);
      std::unique_ptr<Store> s = Format::open(h, sv(path, size), mode, sv(opts, opts_size));
      s->host_ = h;
      *out = reinterpret_cast<stowage_store_handle>(s.release());
    });
  }
  static int close(stowage_store_handle h, stowage_error* err) noexcept {
    std::unique_ptr<Store> owned(self(h));
    return guarded(err, [&] { owned->close(); });
  }
  static void discard(stowage_store_handle h) noexcept {
    std::unique_ptr<Store> owned(self(h));
    try {
      owned->discard();
    } catch (...) {
    }
  }
  static int list(stowage_store_handle h, const char* node, size_t ns, stowage_sink* sink,
                  stowage_error* err) noexcept {
    return guarded(err, [&] {
      for (const std::string& name : self(h)->list(sv(node, ns))) emit(sink, name);
    });
  }
  static int describe(stowage_store_handle h, const char* node, size_t ns, stowage_sink* sink,
                      stowage_error* err) noexcept {
    return guarded(err, [&] { emit(sink, self(h)->describe(sv(node, ns))); });
  }
  static int create(stowage_store_handle h, const char* node, size_t ns, const char* json,
                    size_t js, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->create(sv(node, ns), sv(json, js)); });
  }
  static int set_attributes(stowage_store_handle h, const char* node, size_t ns, const char* json,
                            size_t js, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->set_attributes(sv(node, ns), sv(json, js)); });
  }
  static int remove(stowage_store_handle h, const char* node, size_t ns,
                    stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->remove(sv(node, ns)); });
  }
  static int open_node(stowage_store_handle h, const char* node, size_t ns, stowage_node* out,
                       stowage_error* err) noexcept {
    return guarded(err, [&] {
      std::unique_ptr<Node> n = self(h)->open_node(sv(node, ns));
      if (!n)
        fail(STOWAGE_INTERNAL,
             "open_node returned no node for '" + std::string(sv(node, ns)) + "'");
      out->kind = static_cast<uint32_t>(n->kind());
      out->table = NodeTrampolines::table(n->kind());
      out->handle = reinterpret_cast<stowage_node_handle>(n.release());
    });
  }
  static void close_node(stowage_store_handle, stowage_node_handle node) noexcept {
    delete reinterpret_cast<Node*>(node);
  }
  static int write_strings(stowage_store_handle h, const char* node, size_t ns, uint64_t count,
                           const char* const* data, const uint64_t* sizes,
                           stowage_error* err) noexcept {
    return guarded(err, [&] {
      std::vector<std::string_view> values;
      values.reserve(count);
      for (uint64_t i = 0; i < count; ++i) values.emplace_back(data[i], sizes[i]);
      self(h)->write_strings(sv(node, ns), values);
    });
  }
  static int command(stowage_store_handle h, const char* node, size_t ns, const char* name,
                     size_t nms, const char* args, size_t as, stowage_sink* sink,
                     stowage_error* err) noexcept {
    return guarded(
        err, [&] { emit(sink, self(h)->command(sv(node, ns), sv(name, nms), sv(args, as))); });
  }
  static int move_node(stowage_store_handle h, const char* from, size_t fs, const char* to,
                       size_t ts, int32_t replace, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->move_node(sv(from, fs), sv(to, ts), replace != 0); });
  }

  static const stowage_format_vtable* vtable() {
    static const stowage_format_vtable vt = {sizeof(stowage_format_vtable),
                                             identify,
                                             open,
                                             close,
                                             list,
                                             describe,
                                             create,
                                             set_attributes,
                                             remove,
                                             open_node,
                                             close_node,
                                             write_strings,
                                             command,
                                             move_node,
                                             discard};
    return &vt;
  }
};

#if defined(__clang__)
#define STOWAGE_COMPILER_INFO "clang " __clang_version__
#elif defined(__GNUC__)
#define STOWAGE_COMPILER_INFO "gcc " __VERSION__
#else
#define STOWAGE_COMPILER_INFO "unknown compiler"
#endif
#ifdef NDEBUG
#define STOWAGE_BUILD_TYPE "release"
#else
#define STOWAGE_BUILD_TYPE "debug"
#endif
#define STOWAGE_BUILD_INFO \
  "sdk " STOWAGE_SDK_VERSION ", " STOWAGE_COMPILER_INFO ", " STOWAGE_BUILD_TYPE

}  // namespace detail
}  // namespace stowage::sdk

// Extra text for build_info (e.g. the codec library's version); define before
// using a macro below.
#ifndef STOWAGE_PLUGIN_BUILD_EXTRA
#define STOWAGE_PLUGIN_BUILD_EXTRA ""
#endif

// The entry point ignores `host`: each object receives its registry's table
// when it is created (codec create, format open).
#define STOWAGE_DEFINE_PLUGIN_(KIND, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, VTABLE, ALIASES, \
                               EXTENSIONS, METADATA_FILES)                                    \
  extern "C" STOWAGE_PLUGIN_EXPORT const stowage_plugin* stowage_plugin_entry(                \
      const stowage_host* host) {                                                             \
    (void)host;                                                                               \
    static const stowage_plugin descriptor = {STOWAGE_PLUGIN_ABI,                             \
                                              sizeof(stowage_plugin),                         \
                                              KIND,                                           \
                                              ID,                                             \
                                              VERSION,                                        \
                                              STOWAGE_BUILD_INFO STOWAGE_PLUGIN_BUILD_EXTRA,  \
                                              SCHEMA,                                         \
                                              CAPS,                                           \
                                              VTABLE,                                         \
                                              DESCRIPTION,                                    \
                                              ALIASES,                                        \
                                              EXTENSIONS,                                     \
                                              METADATA_FILES};                                \
    return &descriptor;                                                                       \
  }

// ALIASES: a `static const char* const name[] = {"zlib", nullptr};` or nullptr.
// The parameter schema comes from CLASS::params() ("{}" without it).
#define STOWAGE_DEFINE_CODEC_PLUGIN_WITH_ALIASES(CLASS, ID, VERSION, DESCRIPTION, CAPS, ALIASES) \
  STOWAGE_DEFINE_PLUGIN_(STOWAGE_KIND_CODEC, ID, VERSION, DESCRIPTION,                           \
                         ::stowage::sdk::detail::CodecTrampolines<CLASS>::params_schema(), CAPS, \
                         ::stowage::sdk::detail::CodecTrampolines<CLASS>::vtable(), ALIASES,     \
                         nullptr, nullptr)

#define STOWAGE_DEFINE_CODEC_PLUGIN(CLASS, ID, VERSION, DESCRIPTION, CAPS) \
  STOWAGE_DEFINE_CODEC_PLUGIN_WITH_ALIASES(CLASS, ID, VERSION, DESCRIPTION, CAPS, nullptr)

// CLASS has static identify(probe) and open(host, path, mode, options).
// EXTENSIONS: a NULL-terminated array of ".ext" strings, or nullptr.
// METADATA_FILES: a NULL-terminated array of the format's metadata file
// names (stowage_plugin.metadata_files), or nullptr.
#define STOWAGE_DEFINE_FORMAT_PLUGIN_WITH_METADATA(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, \
                                                   EXTENSIONS, METADATA_FILES)                    \
  STOWAGE_DEFINE_PLUGIN_(STOWAGE_KIND_FORMAT, ID, VERSION, DESCRIPTION, SCHEMA, CAPS,             \
                         ::stowage::sdk::detail::FormatTrampolines<CLASS>::vtable(), nullptr,     \
                         EXTENSIONS, METADATA_FILES)

#define STOWAGE_DEFINE_FORMAT_PLUGIN(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, EXTENSIONS) \
  STOWAGE_DEFINE_FORMAT_PLUGIN_WITH_METADATA(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS,     \
                                             EXTENSIONS, nullptr)

#endif  // STOWAGE_PLUGIN_HPP
