// Internal pieces of libstowage shared between its source files.
#pragma once

#include <stowage/stowage.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <functional>
#include <mutex>
#include <shared_mutex>
#include <vector>
#include <string>

namespace stowage {
// A description's "fill_value" (a number, or Zarr's "NaN", "Infinity",
// "-Infinity", since JSON has none of them; anything else is 0), and back.
double fill_value_of(const json& j);
json fill_value_json(double value);
}  // namespace stowage

namespace stowage::detail {

// Plugin warnings raised on this thread while a LogCapture lives go into its
// list instead of standard error: stowage::copy reports them in its notes
// (--json included). Per thread, so two copies in one process keep theirs.
class LogCapture {
 public:
  explicit LogCapture(std::vector<std::string>& into);
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  // Takes a message if a capture is active on this thread.
  static bool take(const std::string& message);

 private:
  std::vector<std::string>& into_;
  LogCapture* outer_;
};


// A stowage_error ready for a call: only the code and the first byte are set,
// since zeroing all 1 KiB on every codec call measurably costs (~14 ns).
struct CallError : stowage_error {
  CallError() {
    code = STOWAGE_OK;
    message[0] = '\0';
  }
};

// Collects sink output into a std::string (one byte stream).
inline stowage_sink string_sink(std::string* out) {
  return stowage_sink{out, [](void* ctx, const void* d, size_t n) {
                        static_cast<std::string*>(ctx)->append(static_cast<const char*>(d), n);
                        return 0;
                      }};
}

// Calls fn(item) for each sink item.
struct ItemSink {
  std::function<void(std::string_view)> fn;
  std::string error;
  stowage_sink sink() {
    return stowage_sink{this, [](void* ctx, const void* d, size_t n) {
                          auto* self = static_cast<ItemSink*>(ctx);
                          try {
                            self->fn(std::string_view(static_cast<const char*>(d), n));
                            return 0;
                          } catch (const std::exception& e) {
                            self->error = e.what();
                            return 1;
                          }
                        }};
  }
};

// Throws stowage::Error for a failed plugin call.
[[noreturn]] void throw_status(int rc, const stowage_error& err, const std::string& path,
                               const std::string& plugin);

// Runs fn(i) for i in [0, n) on the registry's worker threads; rethrows the
// first exception after all workers stopped.
void parallel_for(unsigned threads, size_t n, const std::function<void(size_t)>& fn);

// How copy_strided writes: `swap` reverses each element's bytes; `stream`
// writes whole destination cache lines with non-temporal stores (for large
// destinations that will not stay in cache anyway).
struct CopyMode {
  bool swap = false;
  bool stream = false;
};

// Copies an n-d block of elements between two strided layouts. Strides are
// in elements.
void copy_strided(const void* src, const int64_t* src_strides, void* dst, const int64_t* dst_strides,
                  const uint64_t* shape, size_t ndim, size_t element_size, CopyMode mode);

// One chunk's share of a run of chunks that sit side by side along the
// fastest dimension of a C-order buffer: the caller's buffer on a read (the
// destination), or on a write (the source).
struct RowPart {
  const void* src;             // the part's first element in the source
  const int64_t* src_strides;  // the source's element strides (the last is 1)
  void* dst;                   // where that element goes
  const int64_t* dst_strides;  // the destination's element strides (the last is 1)
  uint64_t width;              // elements along the fastest dimension
};

// Copies the parts of side-by-side chunks row by row of the caller's buffer
// (every part of row 0, then of row 1, ...), so that buffer is read or
// written in order instead of in one short run per chunk row: several times
// faster once it is larger than the caches. `lead_shape` is the parts'
// common extent in the ndim-1 leading dimensions.
void copy_side_by_side(const std::vector<RowPart>& parts, const uint64_t* lead_shape, size_t ndim,
                       size_t element_size, CopyMode mode);

// The number of elements of a shape (1 for rank 0).
inline uint64_t product(const std::vector<uint64_t>& v) {
  uint64_t p = 1;
  for (uint64_t x : v) p *= x;
  return p;
}

// Fills `count` elements with `value` converted to dtype, in the given byte order.
void fill_elements(void* dst, size_t count, DType dtype, double value, bool big_endian);

}  // namespace stowage::detail

namespace stowage {

// The storage scheme of a location: "http" for "http://h/x.n5", "file" for
// a path (no "<scheme>://").
std::string storage_scheme(std::string_view location);

// Refuses (UNSUPPORTED, naming the location) to write where the storage
// backend of the location cannot: over http, say, a format would otherwise
// only fail at its first write. A scheme without a backend is left to the
// format to report.
void require_writable_storage(const std::string& location, Registry& registry);

namespace detail {
class Staging;
struct WriterLock;
}  // namespace detail

// What an open Store holds.
struct Store::State {
  Registry* registry = nullptr;
  const stowage_format_vtable* vt = nullptr;
  stowage_store_handle handle = nullptr;
  std::string path, format;
  uint64_t capabilities = 0;  // the descriptor's STOWAGE_CAP_* bits
  // Readers (describe, read_*) share; structural changes are exclusive, as
  // plugin.h promises to plugins.
  mutable std::shared_mutex mutex;
  bool closed = false;
  // The node handles open on this store, closed before the store is. The
  // mutex also orders a handle's close against the store's.
  std::mutex nodes_mutex;
  std::vector<std::weak_ptr<Node>> nodes;

  // Mode "w" (staging.hpp): the plugin writes at `location`, inside the
  // hidden `staged_directory` beside `path`, which close() publishes; empty
  // when the plugin works at `path` itself.
  std::string location, staged_directory;
  std::unique_ptr<detail::Staging> staging;  // owned by this store: close() publishes it
  // One writer at a time for a format without STOWAGE_CAP_SHARED_WRITES.
  std::unique_ptr<detail::WriterLock> writer_lock;

  ~State();
  std::string plugin_name() const { return "format " + format; }
  void check(int rc, const stowage_error& err) const {
    if (rc != STOWAGE_OK) fail(rc, err);
  }
  // Throws the plugin's error, its staging location put in the user's words.
  [[noreturn]] void fail(int rc, const stowage_error& err) const;
  // Frees the plugin's store without publishing (its discard, else close).
  void discard_plugin() noexcept;
  // Opens a node's handle through the plugin; `kind` is what the caller
  // expects (the plugin answering another kind is a plugin bug).
  static std::shared_ptr<Node> open_node(const std::shared_ptr<State>& self, std::string_view node,
                                         stowage_node_kind kind);
  // Closes the open node handles (Store::close, before the store).
  void close_nodes();
};

// One open node handle. Views (Array, Sparse, Records) share it; the last
// one to go closes it, unless the store closed first and closed it then.
struct Store::Node {
  std::shared_ptr<Store::State> store;
  std::string path;            // the node's path in the store, for messages
  stowage_node node{};         // kind, handle and the kind's table
  bool closed = false;         // guarded by store->nodes_mutex

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  const stowage_array_vtable& array() const { return *static_cast<const stowage_array_vtable*>(node.table); }
  const stowage_sparse_vtable& sparse() const { return *static_cast<const stowage_sparse_vtable*>(node.table); }
  const stowage_strings_vtable& strings() const { return *static_cast<const stowage_strings_vtable*>(node.table); }
  const stowage_records_vtable& records() const { return *static_cast<const stowage_records_vtable*>(node.table); }
  // UNSUPPORTED naming the operation when an optional write function is NULL.
  void require(bool present, const char* operation) const;
  // INVALID_ARGUMENT once the store closed (and closed this handle); call
  // with the store's mutex held, so a close cannot come in between.
  void require_open() const;
};

namespace detail {

// Idle contexts of one codec configuration, kept for reuse: a context is used
// by one thread at a time, so a call takes one and gives it back after.
// Up to `slots` wait in an array of atomic pointers: taking and giving back
// are one atomic exchange each on the first matching slot, no lock, and with
// as many slots as the registry has threads (plus the caller) the pool never
// runs dry under its own thread pool. Past that, a context is made for the
// call and destroyed after it.
class ContextPool {
 public:
  explicit ContextPool(size_t slots)
      : slots_(new std::atomic<stowage_codec_context>[slots]), count_(slots) {
    for (size_t i = 0; i < count_; ++i) slots_[i].store(nullptr, std::memory_order_relaxed);
  }
  ContextPool(const ContextPool&) = delete;
  ContextPool& operator=(const ContextPool&) = delete;

  // An idle context, or nullptr when none is.
  stowage_codec_context take() {
    for (size_t i = 0; i < count_; ++i)
      if (slots_[i].load(std::memory_order_relaxed))
        if (stowage_codec_context c = slots_[i].exchange(nullptr, std::memory_order_acquire)) return c;
    return nullptr;
  }
  // Keeps `c` for the next call; false when every slot is taken.
  bool give_back(stowage_codec_context c) {
    for (size_t i = 0; i < count_; ++i) {
      stowage_codec_context empty = nullptr;
      if (!slots_[i].load(std::memory_order_relaxed) &&
          slots_[i].compare_exchange_strong(empty, c, std::memory_order_release, std::memory_order_relaxed))
        return true;
    }
    return false;
  }
  // Calls destroy(c) on every idle context (when nobody uses the pool).
  template <class Fn>
  void drain(Fn&& destroy) {
    for (size_t i = 0; i < count_; ++i)
      if (stowage_codec_context c = slots_[i].exchange(nullptr)) destroy(c);
  }

 private:
  std::unique_ptr<std::atomic<stowage_codec_context>[]> slots_;
  size_t count_;
};

}  // namespace detail

// What a Codec holds: one immutable configuration of a codec plugin, shared
// by every thread, and its pool of contexts.
struct Codec::State {
  const stowage_plugin* plugin = nullptr;
  const stowage_codec_vtable* vt = nullptr;
  stowage_codec_config config = nullptr;
  std::string id, canonical;
  uint64_t capabilities = 0;
  detail::ContextPool contexts;

  explicit State(size_t slots) : contexts(slots) {}
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (vt->context_destroy) contexts.drain(vt->context_destroy);
    if (config) vt->destroy(config);
  }
  // encode / decode with a context of this thread's own; the plugin's status.
  int encode(const void* in, size_t n, void* out, size_t capacity, size_t* written,
             stowage_error* err) {
    return run(vt->encode, in, n, out, capacity, written, err);
  }
  int decode(const void* in, size_t n, void* out, size_t capacity, size_t* written,
             stowage_error* err) {
    return run(vt->decode, in, n, out, capacity, written, err);
  }
  void check(int rc, const stowage_error& err) const {
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, "", "codec " + id);
  }

 private:
  using CodeFn = int (*)(stowage_codec_config, stowage_codec_context, const void*, size_t, void*,
                         size_t, size_t*, stowage_error*);
  int run(CodeFn fn, const void* in, size_t n, void* out, size_t capacity, size_t* written,
          stowage_error* err) {
    if (!vt->context_create) return fn(config, nullptr, in, n, out, capacity, written, err);
    stowage_codec_context cx = contexts.take();
    if (!cx) {
      int rc = vt->context_create(config, &cx, err);
      if (rc != STOWAGE_OK) return rc;
    }
    int rc = fn(config, cx, in, n, out, capacity, written, err);
    if (cx && !contexts.give_back(cx)) vt->context_destroy(cx);
    return rc;
  }
};

namespace detail {
// Lets the registry's host functions reach a Codec's state.
struct CodecAccess {
  using State = Codec::State;
  static const std::shared_ptr<State>& state(const Codec& c) { return c.state_; }
};
}  // namespace detail

}  // namespace stowage
