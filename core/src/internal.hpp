// Internal pieces of libstowage shared between its source files.
#pragma once

#include <stowage/stowage.hpp>

#include <cstring>
#include <functional>
#include <shared_mutex>
#include <string>

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

  ~State();
  std::string plugin_name() const { return "format " + format; }
  void check(int rc, const stowage_error& err) const {
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, path, plugin_name());
  }
};

// What a Codec holds: one instance of a codec plugin.
struct Codec::State {
  const stowage_plugin* plugin = nullptr;
  const stowage_codec_vtable* vt = nullptr;
  stowage_codec_handle handle = nullptr;
  std::string id;
  uint64_t capabilities = 0;
  ~State() {
    if (handle) vt->destroy(handle);
  }
  void check(int rc, const stowage_error& err) const {
    if (rc != STOWAGE_OK) detail::throw_status(rc, err, "", "codec " + id);
  }
};

}  // namespace stowage
