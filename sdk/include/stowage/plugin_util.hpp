// stowage/plugin_util.hpp -- small header-only helpers every plugin needs:
// byte order, node-path checks, chunk shapes, pooled scratch buffers. Files
// are the storage layer's (stowage/storage.hpp): a plugin does no I/O of
// its own.
//
// Plugins link nothing of ours, so what they share lives here, in the SDK,
// rather than in libstowage.
#ifndef STOWAGE_PLUGIN_UTIL_HPP
#define STOWAGE_PLUGIN_UTIL_HPP

#include <stowage/plugin.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stowage::sdk {

// ---- byte order -------------------------------------------------------------

inline constexpr bool host_is_little_endian() { return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__; }

inline uint16_t bswap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t bswap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t bswap(uint64_t v) { return __builtin_bswap64(v); }

// Reads/writes an unsigned integer of type T stored big- or little-endian at p.
template <class T>
T load_be(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (sizeof(T) > 1) {
    if (host_is_little_endian()) v = bswap(v);
  }
  return v;
}
template <class T>
T load_le(const void* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (sizeof(T) > 1) {
    if (!host_is_little_endian()) v = bswap(v);
  }
  return v;
}
template <class T>
void store_be(void* p, T v) {
  if constexpr (sizeof(T) > 1) {
    if (host_is_little_endian()) v = bswap(v);
  }
  std::memcpy(p, &v, sizeof v);
}
template <class T>
void store_le(void* p, T v) {
  if constexpr (sizeof(T) > 1) {
    if (!host_is_little_endian()) v = bswap(v);
  }
  std::memcpy(p, &v, sizeof v);
}

// Reverses the bytes of each of `count` elements of `width` bytes, in place.
inline void swap_bytes_inplace(void* data, size_t count, size_t width) {
  auto* p = static_cast<unsigned char*>(data);
  switch (width) {
    case 1:
      return;
    case 2:
      for (size_t i = 0; i < count; ++i) {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        v = bswap(v);
        std::memcpy(p + 2 * i, &v, 2);
      }
      return;
    case 4:
      for (size_t i = 0; i < count; ++i) {
        uint32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        v = bswap(v);
        std::memcpy(p + 4 * i, &v, 4);
      }
      return;
    case 8:
      for (size_t i = 0; i < count; ++i) {
        uint64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        v = bswap(v);
        std::memcpy(p + 8 * i, &v, 8);
      }
      return;
    default:
      fail(STOWAGE_INTERNAL,
           "swap_bytes_inplace: unsupported element width " + std::to_string(width));
  }
}

// ---- what messages show ----------------------------------------------------------

// `text` with the password of each URL's userinfo ("http://u:secret@host/x")
// as "***": no message shows a secret. The core applies it to every error
// it raises, a plugin to the messages it builds.
inline std::string redact_userinfo(std::string text) {
  for (size_t at = text.find("://"); at != std::string::npos; at = text.find("://", at + 3)) {
    const size_t start = at + 3;
    const size_t end = std::min(text.find_first_of("/?# \t\n\"'", start), text.size());
    const std::string_view authority = std::string_view(text).substr(start, end - start);
    const size_t sign = authority.rfind('@'), colon = authority.find(':');
    if (sign == std::string_view::npos || colon == std::string_view::npos || colon > sign) continue;
    text.replace(start + colon + 1, sign - colon - 1, "***");
  }
  return text;
}

// `text` with each storage temporary (".<name>.stowage-tmp.<pid>.<n>", a
// staged file or directory) named by the name it is published under: a
// message names what the user asked for, never a staging path.
inline std::string without_temporaries(std::string text) {
  const std::string mark = ".stowage-tmp.";
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at)) {
    const size_t start = text.find_last_of("/ \t'\"[", at - 1) + 1;  // the component's first byte
    size_t end = at + mark.size();
    while (end < text.size() && ((text[end] >= '0' && text[end] <= '9') || text[end] == '.')) ++end;
    if (start >= at || text[start] != '.') {
      at = end;
      continue;
    }
    text.replace(start, end - start, text.substr(start + 1, at - start - 1));
    at = start;
  }
  return text;
}

// ---- node paths ---------------------------------------------------------------

// The name prefix of what stowage::copy stages beside its destination (a
// whole dataset) or inside it (a node of an existing container, as
// ".stowage-convert.<token>.<name>"): hidden, and not listed as a node.
inline constexpr const char kStagingPrefix[] = ".stowage-convert.";

// Splits a node path ("a/b/c", "" for the root) into its components, refusing
// absolute paths, "." and ".." components and empty components, so that a
// node name can never reach outside the store.
inline std::vector<std::string> split_node_path(std::string_view node) {
  std::vector<std::string> parts;
  if (node.empty()) return parts;
  if (node.front() == '/') invalid("node path '" + std::string(node) + "' is absolute");
  size_t start = 0;
  while (true) {
    size_t slash = node.find('/', start);
    std::string_view part =
        node.substr(start, slash == std::string_view::npos ? node.size() - start : slash - start);
    if (part.empty() || part == "." || part == "..")
      invalid("node path '" + std::string(node) + "' has an empty, '.' or '..' component");
    if (part.find('\0') != std::string_view::npos || part.find('\\') != std::string_view::npos)
      invalid("node path '" + std::string(node) + "' has a NUL or backslash");
    parts.emplace_back(part);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

// The node path of the first `count` components of split_node_path's
// result: the inverse, for naming a parent in an error.
inline std::string join_node_path(const std::vector<std::string>& parts, size_t count) {
  std::string node;
  for (size_t i = 0; i < count && i < parts.size(); ++i) node += (i ? "/" : "") + parts[i];
  return node;
}

// ---- chunk shapes ---------------------------------------------------------------

// Chunks of about `target` bytes for a C-order layout: whole trailing
// dimensions while they fit, then as many rows k of the next dimension as
// fit (k >= 1), then 1. Every extent is at least 1 (the host divides by
// them), even along a zero-length dimension. npy's slabs; stowage::copy's
// default where a source's one chunk would be too large to write as one.
inline std::vector<uint64_t> c_order_chunks(const std::vector<uint64_t>& shape, size_t element_size,
                                            uint64_t target) {
  const size_t n = shape.size();
  std::vector<uint64_t> chunks(n, 1);
  uint64_t slab_bytes = element_size;  // bytes of one step along dimension d-1
  size_t d = n;
  while (d > 0) {
    uint64_t extent = std::max<uint64_t>(shape[d - 1], 1);
    if (slab_bytes > target / extent) break;  // the whole dimension does not fit
    chunks[d - 1] = extent;
    slab_bytes *= extent;
    --d;
  }
  if (d > 0)
    chunks[d - 1] =
        std::clamp<uint64_t>(target / slab_bytes, 1, std::max<uint64_t>(shape[d - 1], 1));
  return chunks;
}

// ---- scratch buffers --------------------------------------------------------------

// An allocator whose blocks start on a page (4096 bytes), for buffers a
// chunk file is read into. Then a file's bytes land at the offset in a page
// they have in the page cache: at the 16-byte offset glibc's malloc gives a
// large block, the kernel's copy slows down from 4K aliasing (figures in
// bench/zarr/RESULTS.md). The host's region scratch (core/src/region.cpp)
// uses this allocator too.
template <class T>
struct PageAlignedAllocator {
  using value_type = T;
  static constexpr size_t kPage = 4096;

  PageAlignedAllocator() noexcept = default;
  template <class U>
  PageAlignedAllocator(const PageAlignedAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > std::numeric_limits<size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kPage)));
  }
  void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t(kPage)); }

  // Stateless: any one frees what another allocated.
  template <class U>
  bool operator==(const PageAlignedAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const PageAlignedAllocator<U>&) const noexcept {
    return false;
  }
};

// A page-aligned byte buffer: what BufferPool hands out.
using PageBuffer = std::vector<uint8_t, PageAlignedAllocator<uint8_t>>;

// Byte buffers reused across calls from many threads, so a hot path (a chunk
// read or write) allocates nothing per call yet keeps no thread_local state,
// which a plugin must not have (its destructors run at thread exit in an
// order the host cannot control). A buffer goes back to the pool when its
// Lease dies. One uncontended mutex per take and per give back costs little
// beside a chunk's decode. Buffers are page-aligned (PageBuffer).
class BufferPool {
 public:
  class Lease {
   public:
    Lease(BufferPool& pool, PageBuffer buffer) : pool_(&pool), buffer_(std::move(buffer)) {}
    Lease(Lease&& o) noexcept
        : pool_(std::exchange(o.pool_, nullptr)), buffer_(std::move(o.buffer_)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(std::move(buffer_));
    }
    // The buffer; resize() keeps its first bytes, as a vector does.
    PageBuffer& operator*() { return buffer_; }
    PageBuffer* operator->() { return &buffer_; }
    uint8_t* data() { return buffer_.data(); }

   private:
    BufferPool* pool_;
    PageBuffer buffer_;
  };

  // A buffer of at least n bytes (its contents are whatever it held).
  Lease take(size_t n) {
    PageBuffer buffer;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!idle_.empty()) {
        buffer = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    if (buffer.size() < n) buffer.resize(n);
    return Lease(*this, std::move(buffer));
  }

 private:
  void give_back(PageBuffer buffer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (idle_.size() < kMaxIdle) idle_.push_back(std::move(buffer));
  }
  static constexpr size_t kMaxIdle = 16;  // more threads than this at once allocate
  std::mutex mutex_;
  std::vector<PageBuffer> idle_;
};

}  // namespace stowage::sdk

#endif  // STOWAGE_PLUGIN_UTIL_HPP
