// stowage/plugin.hpp -- the header-only C++ adapter over stowage/plugin.h.
//
// A codec author writes a class with
//     explicit MyCodec(std::string_view config_json);   // throws sdk::Error
//     std::string canonical_config() const;
//     uint64_t bound(uint64_t n) const;
//     size_t encode(const void* in, size_t n, void* out, size_t capacity);
//     size_t decode(const void* in, size_t n, void* out, size_t capacity);
// and one line:
//     STOWAGE_DEFINE_CODEC_PLUGIN(MyCodec, "myid", "1.0.0", "one-line description",
//                                 R"({"level": {"type": "integer", "default": 3}})",
//                                 STOWAGE_CAP_READ | STOWAGE_CAP_WRITE | STOWAGE_CAP_THREADSAFE)
// A format author derives from sdk::Store, writes two static functions
//     static int32_t identify(std::string_view path);
//     static std::unique_ptr<sdk::Store> open(std::string_view path, uint32_t mode,
//                                             std::string_view options_json);
// in a class, and uses STOWAGE_DEFINE_FORMAT_PLUGIN.
//
// The macros generate the descriptor and noexcept trampolines that turn every
// exception into a status code and message, so nothing C++ crosses the boundary.
#ifndef STOWAGE_PLUGIN_HPP
#define STOWAGE_PLUGIN_HPP

#include <stowage/plugin.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
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

// The host table handed to stowage_plugin_entry; valid for the process lifetime.
inline const stowage_host*& host_table() {
  static const stowage_host* table = nullptr;
  return table;
}

inline void log(stowage_log_level level, std::string_view message) {
  const stowage_host* h = host_table();
  if (h && h->log) h->log(h->ctx, level, message.data(), message.size());
}

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

// A codec instance obtained through the host's registry.
class HostCodec {
 public:
  explicit HostCodec(std::string_view config_json) {
    const stowage_host* h = host_table();
    if (!h || !h->codec_create) fail(STOWAGE_INTERNAL, "the host offers no codec lookup");
    stowage_error err{};
    int rc = h->codec_create(h->ctx, config_json.data(), config_json.size(), &vt_, &handle_,
                             &capabilities_, &err);
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), err.message);
  }
  HostCodec(const HostCodec&) = delete;
  HostCodec& operator=(const HostCodec&) = delete;
  ~HostCodec() {
    if (handle_) vt_->destroy(handle_);
  }

  bool thread_safe() const { return capabilities_ & STOWAGE_CAP_THREADSAFE; }
  uint64_t bound(uint64_t n) const { return vt_->bound(handle_, n); }
  std::string canonical_config() const {
    std::string out;
    stowage_sink sink{&out, [](void* ctx, const void* d, size_t n) {
                        static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n);
                        return 0;
                      }};
    check(vt_->canonical_config(handle_, &sink, &err_scratch()));
    return out;
  }
  size_t encode(const void* in, size_t n, void* out, size_t capacity) const {
    size_t written = 0;
    check(vt_->encode(handle_, in, n, out, capacity, &written, &err_scratch()));
    return written;
  }
  size_t decode(const void* in, size_t n, void* out, size_t capacity) const {
    size_t written = 0;
    check(vt_->decode(handle_, in, n, out, capacity, &written, &err_scratch()));
    return written;
  }

 private:
  static stowage_error& err_scratch() {
    thread_local stowage_error e;
    return e;
  }
  static void check(int rc) {
    if (rc != STOWAGE_OK) fail(static_cast<stowage_status>(rc), err_scratch().message);
  }
  const stowage_codec_vtable* vt_ = nullptr;
  stowage_codec_handle handle_ = nullptr;
  uint64_t capabilities_ = 0;
};

// ---- format plugins -------------------------------------------------------

using ItemFn = std::function<void(const void* data, size_t size)>;

// Base class of a format plugin's open store. Every operation a format does
// not support reports UNSUPPORTED with the operation's name.
class Store {
 public:
  virtual ~Store() = default;
  virtual void close() {}

  virtual std::vector<std::string> list(std::string_view node) = 0;
  virtual std::string describe(std::string_view node) = 0;
  virtual void create(std::string_view node, std::string_view json) { no("create"); (void)node; (void)json; }
  virtual void set_attributes(std::string_view node, std::string_view json) {
    (void)node, (void)json;
    no("set_attributes");
  }
  virtual void remove(std::string_view node) { (void)node; no("remove"); }

  // Returns false for a missing chunk.
  virtual bool read_chunk(std::string_view node, const uint64_t* chunk_index, void* out,
                          size_t capacity, uint64_t* chunk_shape) {
    (void)node, (void)chunk_index, (void)out, (void)capacity, (void)chunk_shape;
    no("read_chunk");
  }
  virtual void write_chunk(std::string_view node, const uint64_t* chunk_index, const void* in,
                           size_t size, const uint64_t* chunk_shape) {
    (void)node, (void)chunk_index, (void)in, (void)size, (void)chunk_shape;
    no("write_chunk");
  }

  virtual uint64_t sparse_count(std::string_view node, uint64_t begin, uint64_t end) {
    (void)node, (void)begin, (void)end;
    no("sparse_count");
  }
  virtual void read_sparse(std::string_view node, uint64_t begin, uint64_t end, uint64_t* indptr,
                           uint32_t* indices, void* values, uint64_t nnz_capacity) {
    (void)node, (void)begin, (void)end, (void)indptr, (void)indices, (void)values,
        (void)nnz_capacity;
    no("read_sparse");
  }
  virtual void append_sparse(std::string_view node, uint64_t n_major, const uint64_t* indptr,
                             const uint32_t* indices, const void* values) {
    (void)node, (void)n_major, (void)indptr, (void)indices, (void)values;
    no("append_sparse");
  }

  virtual void read_strings(std::string_view node, uint64_t begin, uint64_t end,
                            const ItemFn& item) {
    (void)node, (void)begin, (void)end, (void)item;
    no("read_strings");
  }
  virtual void write_strings(std::string_view node, const std::vector<std::string_view>& values) {
    (void)node, (void)values;
    no("write_strings");
  }

  virtual uint64_t record_count(std::string_view node) { (void)node; no("record_count"); }
  virtual void read_records(std::string_view node, uint64_t begin, uint64_t end,
                            const ItemFn& item) {
    (void)node, (void)begin, (void)end, (void)item;
    no("read_records");
  }
  virtual std::string record_key(std::string_view node, uint64_t index) {
    (void)node, (void)index;
    no("record_key");
  }
  virtual std::optional<uint64_t> find_key(std::string_view node, std::string_view key) {
    (void)node, (void)key;
    no("find_key");
  }
  virtual bool contains_key(std::string_view node, std::string_view key) {
    (void)node, (void)key;
    no("contains_key");
  }
  // Many contains_key at once; override to overlap the keys' lookups.
  virtual void contains_keys(std::string_view node, uint64_t count, const char* const* keys,
                             const uint64_t* key_sizes, uint8_t* present) {
    for (uint64_t i = 0; i < count; ++i)
      present[i] = contains_key(node, std::string_view(keys[i], key_sizes[i])) ? 1 : 0;
  }
  virtual void append_records(std::string_view node, uint64_t count, const void* const* records,
                              const uint64_t* sizes) {
    (void)node, (void)count, (void)records, (void)sizes;
    no("append_records");
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
};

namespace detail {

inline std::string_view sv(const char* p, size_t n) { return {p ? p : "", p ? n : 0}; }

template <class Codec>
struct CodecTrampolines {
  static Codec* self(stowage_codec_handle h) { return reinterpret_cast<Codec*>(h); }
  static int create(const char* json, size_t size, stowage_codec_handle* out,
                    stowage_error* err) noexcept {
    return guarded(err, [&] {
      *out = reinterpret_cast<stowage_codec_handle>(new Codec(sv(json, size)));
    });
  }
  static int canonical_config(stowage_codec_handle h, stowage_sink* sink,
                              stowage_error* err) noexcept {
    return guarded(err, [&] { emit(sink, self(h)->canonical_config()); });
  }
  static uint64_t bound(stowage_codec_handle h, uint64_t n) noexcept {
    try {
      return self(h)->bound(n);
    } catch (...) {
      return UINT64_MAX;
    }
  }
  static int encode(stowage_codec_handle h, const void* in, size_t n, void* out, size_t cap,
                    size_t* written, stowage_error* err) noexcept {
    return guarded(err, [&] { *written = self(h)->encode(in, n, out, cap); });
  }
  static int decode(stowage_codec_handle h, const void* in, size_t n, void* out, size_t cap,
                    size_t* written, stowage_error* err) noexcept {
    return guarded(err, [&] { *written = self(h)->decode(in, n, out, cap); });
  }
  static void destroy(stowage_codec_handle h) noexcept { delete self(h); }

  static const stowage_codec_vtable* vtable() {
    static const stowage_codec_vtable vt = {sizeof(stowage_codec_vtable), create, canonical_config,
                                            bound, encode, decode, destroy};
    return &vt;
  }
};

template <class Format>
struct FormatTrampolines {
  static Store* self(stowage_store_handle h) { return reinterpret_cast<Store*>(h); }

  // Collects sink items through a C++ callback.
  static ItemFn to_items(stowage_sink* sink) {
    return [sink](const void* d, size_t n) { emit(sink, d, n); };
  }

  static int32_t identify(const char* path, size_t size) noexcept {
    try {
      return Format::identify(sv(path, size));
    } catch (...) {
      return 0;
    }
  }
  static int open(const char* path, size_t size, uint32_t mode, const char* opts,
                  size_t opts_size, stowage_store_handle* out, stowage_error* err) noexcept {
    return guarded(err, [&] {
      std::unique_ptr<Store> s = Format::open(sv(path, size), mode, sv(opts, opts_size));
      *out = reinterpret_cast<stowage_store_handle>(s.release());
    });
  }
  static int close(stowage_store_handle h, stowage_error* err) noexcept {
    std::unique_ptr<Store> owned(self(h));
    return guarded(err, [&] { owned->close(); });
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
  static int set_attributes(stowage_store_handle h, const char* node, size_t ns,
                            const char* json, size_t js, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->set_attributes(sv(node, ns), sv(json, js)); });
  }
  static int remove(stowage_store_handle h, const char* node, size_t ns,
                    stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->remove(sv(node, ns)); });
  }
  static int read_chunk(stowage_store_handle h, const char* node, size_t ns,
                        const uint64_t* idx, void* out, size_t cap, uint64_t* shape,
                        stowage_error* err) noexcept {
    bool present = true;
    int rc = guarded(err, [&] { present = self(h)->read_chunk(sv(node, ns), idx, out, cap, shape); });
    return rc == STOWAGE_OK && !present ? STOWAGE_MISSING : rc;
  }
  static int write_chunk(stowage_store_handle h, const char* node, size_t ns,
                         const uint64_t* idx, const void* in, size_t n, const uint64_t* shape,
                         stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->write_chunk(sv(node, ns), idx, in, n, shape); });
  }
  static int sparse_count(stowage_store_handle h, const char* node, size_t ns, uint64_t b,
                          uint64_t e, uint64_t* nnz, stowage_error* err) noexcept {
    return guarded(err, [&] { *nnz = self(h)->sparse_count(sv(node, ns), b, e); });
  }
  static int read_sparse(stowage_store_handle h, const char* node, size_t ns, uint64_t b,
                         uint64_t e, uint64_t* indptr, uint32_t* indices, void* values,
                         uint64_t cap, stowage_error* err) noexcept {
    return guarded(err,
                   [&] { self(h)->read_sparse(sv(node, ns), b, e, indptr, indices, values, cap); });
  }
  static int append_sparse(stowage_store_handle h, const char* node, size_t ns, uint64_t n,
                           const uint64_t* indptr, const uint32_t* indices, const void* values,
                           stowage_error* err) noexcept {
    return guarded(err,
                   [&] { self(h)->append_sparse(sv(node, ns), n, indptr, indices, values); });
  }
  static int read_strings(stowage_store_handle h, const char* node, size_t ns, uint64_t b,
                          uint64_t e, stowage_sink* sink, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->read_strings(sv(node, ns), b, e, to_items(sink)); });
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
  static int record_count(stowage_store_handle h, const char* node, size_t ns, uint64_t* count,
                          stowage_error* err) noexcept {
    return guarded(err, [&] { *count = self(h)->record_count(sv(node, ns)); });
  }
  static int read_records(stowage_store_handle h, const char* node, size_t ns, uint64_t b,
                          uint64_t e, stowage_sink* sink, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->read_records(sv(node, ns), b, e, to_items(sink)); });
  }
  static int record_key(stowage_store_handle h, const char* node, size_t ns, uint64_t i,
                        stowage_sink* sink, stowage_error* err) noexcept {
    return guarded(err, [&] { emit(sink, self(h)->record_key(sv(node, ns), i)); });
  }
  static int find_key(stowage_store_handle h, const char* node, size_t ns, const char* key,
                      size_t ks, uint64_t* index, stowage_error* err) noexcept {
    std::optional<uint64_t> found;
    int rc = guarded(err, [&] { found = self(h)->find_key(sv(node, ns), sv(key, ks)); });
    if (rc != STOWAGE_OK) return rc;
    if (!found) {
      set_error(err, STOWAGE_NOT_FOUND, "key '" + std::string(sv(key, ks)) + "' not found");
      return STOWAGE_NOT_FOUND;
    }
    *index = *found;
    return STOWAGE_OK;
  }
  static int contains_key(stowage_store_handle h, const char* node, size_t ns, const char* key,
                          size_t ks, int32_t* present, stowage_error* err) noexcept {
    return guarded(err, [&] { *present = self(h)->contains_key(sv(node, ns), sv(key, ks)) ? 1 : 0; });
  }
  static int contains_keys(stowage_store_handle h, const char* node, size_t ns, uint64_t count,
                           const char* const* keys, const uint64_t* key_sizes, uint8_t* present,
                           stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->contains_keys(sv(node, ns), count, keys, key_sizes, present); });
  }
  static int append_records(stowage_store_handle h, const char* node, size_t ns, uint64_t count,
                            const void* const* recs, const uint64_t* sizes,
                            stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->append_records(sv(node, ns), count, recs, sizes); });
  }
  static int command(stowage_store_handle h, const char* node, size_t ns, const char* name,
                     size_t nms, const char* args, size_t as, stowage_sink* sink,
                     stowage_error* err) noexcept {
    return guarded(err, [&] {
      emit(sink, self(h)->command(sv(node, ns), sv(name, nms), sv(args, as)));
    });
  }

  static int move_node(stowage_store_handle h, const char* from, size_t fs, const char* to, size_t ts,
                       int32_t replace, stowage_error* err) noexcept {
    return guarded(err, [&] { self(h)->move_node(sv(from, fs), sv(to, ts), replace != 0); });
  }

  static const stowage_format_vtable* vtable() {
    static const stowage_format_vtable vt = {
        sizeof(stowage_format_vtable), identify, open, close, list, describe, create,
        set_attributes, remove, read_chunk, write_chunk, sparse_count, read_sparse,
        append_sparse, read_strings, write_strings, record_count, read_records, record_key,
        find_key, contains_key, append_records, command, contains_keys, move_node};
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

#define STOWAGE_DEFINE_PLUGIN_(KIND, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, VTABLE, ALIASES, \
                               EXTENSIONS)                                                   \
  extern "C" STOWAGE_PLUGIN_EXPORT const stowage_plugin* stowage_plugin_entry(               \
      const stowage_host* host) {                                                            \
    ::stowage::sdk::host_table() = host;                                                     \
    static const stowage_plugin descriptor = {                                               \
        STOWAGE_PLUGIN_ABI, sizeof(stowage_plugin), KIND, ID, VERSION,                       \
        STOWAGE_BUILD_INFO STOWAGE_PLUGIN_BUILD_EXTRA, SCHEMA, CAPS, VTABLE, DESCRIPTION,    \
        ALIASES, EXTENSIONS};                                                                \
    return &descriptor;                                                                      \
  }

// ALIASES: a `static const char* const name[] = {"zlib", nullptr};` or nullptr.
#define STOWAGE_DEFINE_CODEC_PLUGIN_WITH_ALIASES(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, \
                                                 ALIASES)                                      \
  STOWAGE_DEFINE_PLUGIN_(STOWAGE_KIND_CODEC, ID, VERSION, DESCRIPTION, SCHEMA, CAPS,            \
                         ::stowage::sdk::detail::CodecTrampolines<CLASS>::vtable(), ALIASES,    \
                         nullptr)

#define STOWAGE_DEFINE_CODEC_PLUGIN(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS) \
  STOWAGE_DEFINE_CODEC_PLUGIN_WITH_ALIASES(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, nullptr)

// CLASS has static identify(std::string_view) and open(path, mode, options).
// EXTENSIONS: a NULL-terminated array of ".ext" strings, or nullptr.
#define STOWAGE_DEFINE_FORMAT_PLUGIN(CLASS, ID, VERSION, DESCRIPTION, SCHEMA, CAPS, EXTENSIONS) \
  STOWAGE_DEFINE_PLUGIN_(STOWAGE_KIND_FORMAT, ID, VERSION, DESCRIPTION, SCHEMA, CAPS,            \
                         ::stowage::sdk::detail::FormatTrampolines<CLASS>::vtable(), nullptr,    \
                         EXTENSIONS)

#endif  // STOWAGE_PLUGIN_HPP
