// stowage/plugin_util.hpp -- small header-only helpers every plugin needs:
// byte order, node-path checks, and files that are written atomically.
//
// Plugins link nothing of ours, so what they share lives here, in the SDK,
// rather than in libstowage.
#ifndef STOWAGE_PLUGIN_UTIL_HPP
#define STOWAGE_PLUGIN_UTIL_HPP

#include <stowage/plugin.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace stowage::sdk {

// ---- byte order -------------------------------------------------------------

inline constexpr bool host_is_little_endian() {
  return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

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
      fail(STOWAGE_INTERNAL, "swap_bytes_inplace: unsupported element width " +
                                 std::to_string(width));
  }
}

// ---- node paths ---------------------------------------------------------------

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
    std::string_view part = node.substr(start, slash == std::string_view::npos ? node.size() - start
                                                                               : slash - start);
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

// ---- files --------------------------------------------------------------------

inline std::string errno_text(int e) { return std::strerror(e); }

[[noreturn]] inline void io_fail(const std::string& path, const std::string& what, int e) {
  fail(STOWAGE_IO, path + ": " + what + ": " + errno_text(e));
}

inline bool path_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}
inline bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
inline bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// An open file descriptor that closes itself.
class File {
 public:
  File() = default;
  File(const std::string& path, int flags, mode_t mode = 0644) : path_(path) {
    do {
      fd_ = ::open(path.c_str(), flags | O_CLOEXEC, mode);
    } while (fd_ < 0 && errno == EINTR);
    if (fd_ < 0) {
      int e = errno;
      if (e == ENOENT) fail(STOWAGE_NOT_FOUND, path + ": no such file");
      io_fail(path, "cannot open", e);
    }
  }
  File(File&& o) noexcept : fd_(o.fd_), path_(std::move(o.path_)) { o.fd_ = -1; }
  File& operator=(File&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.fd_;
      path_ = std::move(o.path_);
      o.fd_ = -1;
    }
    return *this;
  }
  ~File() { reset(); }

  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  uint64_t size() const {
    struct stat st;
    if (::fstat(fd_, &st) != 0) io_fail(path_, "cannot stat", errno);
    return static_cast<uint64_t>(st.st_size);
  }
  // Reads exactly n bytes at offset; a short file is CORRUPT (truncated).
  void read_at(void* buf, size_t n, uint64_t offset) const {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
      ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
      if (r < 0) {
        if (errno == EINTR) continue;
        io_fail(path_, "read failed", errno);
      }
      if (r == 0) corrupt(path_ + ": file is truncated (wanted " + std::to_string(n) +
                          " more bytes at offset " + std::to_string(offset) + ")");
      p += r;
      n -= static_cast<size_t>(r);
      offset += static_cast<uint64_t>(r);
    }
  }
  void write_all(const void* buf, size_t n) {
    auto* p = static_cast<const char*>(buf);
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        io_fail(path_, "write failed", errno);
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void sync() {
    if (::fsync(fd_) != 0) io_fail(path_, "fsync failed", errno);
  }
  void close() {
    if (fd_ >= 0) {
      int rc = ::close(fd_);
      fd_ = -1;
      if (rc != 0 && errno != EINTR) io_fail(path_, "close failed", errno);
    }
  }

 private:
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_ = -1;
  std::string path_;
};

// Reads a whole file. A file larger than max_size is CORRUPT (so a bogus
// file cannot make us allocate without bound).
inline std::string read_file(const std::string& path, uint64_t max_size = UINT64_MAX) {
  File f(path, O_RDONLY);
  uint64_t size = f.size();
  if (size > max_size)
    corrupt(path + ": file is " + std::to_string(size) + " bytes, more than the " +
            std::to_string(max_size) + " allowed");
  std::string data(size, '\0');
  f.read_at(data.data(), size, 0);
  return data;
}

// A name for a temporary file beside `path`, unique within this process and
// across processes (pid), hidden (leading dot) and recognisable (".stowage-tmp").
inline std::string temp_path_for(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + "." + base + ".stowage-tmp." + std::to_string(::getpid()) + "." +
         std::to_string(counter.fetch_add(1));
}

// Writes a file so that readers see either the old content or the new, never
// a mix: the bytes go to a temporary file beside it, which is renamed over
// the destination. With durable=true the data is fsync'ed first (slower;
// survives power loss, not only a killed process).
class AtomicFile {
 public:
  explicit AtomicFile(std::string path, bool durable = false)
      : path_(std::move(path)), temp_(temp_path_for(path_)), durable_(durable) {
    file_ = File(temp_, O_WRONLY | O_CREAT | O_EXCL, 0644);
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (!committed_) {
      file_ = File();
      ::unlink(temp_.c_str());
    }
  }
  void write(const void* data, size_t n) { file_.write_all(data, n); }
  void write(std::string_view s) { write(s.data(), s.size()); }
  // Publishes the file under its real name.
  void commit() {
    if (durable_) file_.sync();
    file_.close();
    if (::rename(temp_.c_str(), path_.c_str()) != 0) {
      int e = errno;
      ::unlink(temp_.c_str());
      committed_ = true;  // nothing left to clean up
      io_fail(path_, "cannot rename temporary file into place", e);
    }
    committed_ = true;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_, temp_;
  bool durable_;
  bool committed_ = false;
  File file_;
};

inline void write_file_atomic(const std::string& path, const void* data, size_t n) {
  AtomicFile f(path);
  f.write(data, n);
  f.commit();
}
inline void write_file_atomic(const std::string& path, std::string_view s) {
  write_file_atomic(path, s.data(), s.size());
}

// Creates a directory and its parents (like mkdir -p); existing ones are fine.
inline void make_directories(const std::string& path) {
  if (path.empty() || is_directory(path)) return;
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) make_directories(path.substr(0, slash));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) io_fail(path, "cannot create directory", errno);
}

}  // namespace stowage::sdk

#endif  // STOWAGE_PLUGIN_UTIL_HPP
